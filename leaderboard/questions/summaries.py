"""The optional LLM summary: "what did these runs do wrong", asked of the site's configured model (the
judge's, through the LLM gateway: lib.chat) about a selection of runs (a search, a failure signature or
a saved question, among the runs the asker may see, newest first, at most SUMMARY_MAX_RUNS).

The prompt shows each run's failure signature and its last error steps, redacted as the judge's
answers are (no key, no private answers: trust.redaction), each headed `[run R step N]`; the model
is asked to cite steps that way. The reply is stored with its tokens and cost (the runner's price
table), and shown with only the citations of steps it was shown, of runs the viewer may still see,
as links: anything else stays plain text. Off, with a message, when no model is configured."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta

import httpx
from django.conf import settings
from django.db.models import Q
from django.utils import timezone
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from leaderboard.failures.breakdown import FAILURE_FIELDS
from leaderboard.failures.signatures import ERROR_HINTS, signatures
from leaderboard.lib import chat
from leaderboard.models import Run
from leaderboard.questions import matching
from leaderboard.questions.models import RunSummary, SavedQuestion
from leaderboard.questions.redaction import redact
from leaderboard.search.models import StepText
from leaderboard.search.service import Filters

ERROR_STEPS = 3  # the last error steps shown per run
STEP_CHARS = 1500  # of each step's text
OFF = (
    "No model is configured for this site, so there is no LLM summary (staff set MEDALBOARD_TRUST_JUDGE_MODEL "
    "and MEDALBOARD_TRUST_JUDGE_URL). Search, failure signatures and saved questions work without it."
)
INSTRUCTIONS = (
    "Below are runs of AI agents on offline Kaggle competitions (MLE-bench) that a researcher selected: for each "
    "run its failure signature (what ended it, numbers and paths masked) and its last error steps, each headed "
    "[run R step N]. Summarise what these runs did wrong: the few failure patterns that recur, how many runs each "
    "affects, and what would avoid them. Be brief (at most 300 words). Cite the steps your points rest on exactly "
    "as their headings are written, for example [run 12 step 40]; cite only steps shown below."
)
CITATION = re.compile(
    r"\[(?P<label>[^\]\n]{1,200})\]\((?P<url>[^)\s]{1,300})\)"  # a markdown link
    r"|\[run #?(?P<run>\d{1,9}),? step #?(?P<step>\d{1,9})\]"  # a heading as the prompt writes it
    r"|(?:https?://[^/\s]{1,200})?/runs/(?P<url_run>\d{1,9})/#step-(?P<url_step>\d{1,9})",
    re.IGNORECASE,
)
STEP_URL = re.compile(r"^(?:https?://[^/\s]+)?/runs/(\d{1,9})/#step-(\d{1,9})$", re.IGNORECASE)


class SummaryRefused(Exception):
    """No summary, and why, for the person who asked; `status` is the HTTP status to answer with."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class Selection:
    label: str
    runs: dict[int, int | None]  # run id -> the step that matched (a search), newest runs first
    total: int  # runs matched before the cap


def select(*, user, question: SavedQuestion, filters: Filters | None = None) -> Selection:
    """The newest SUMMARY_MAX_RUNS runs the user may see that the question matches, within the filters."""
    found = matching.matching_runs(question, (filters or Filters()).runs(Run.objects.visible_to(user)))
    newest = sorted(found, reverse=True)[: settings.SUMMARY_MAX_RUNS]
    return Selection(question.name or question.describes, {pk: found[pk] for pk in newest}, len(found))


def summarise(*, user, selection: Selection) -> RunSummary:
    if not chat.configured():
        raise SummaryRefused(OFF, 409)  # the site's state, not a fault: never a 5xx
    _check_rate(user)
    if not selection.runs:
        raise SummaryRefused("No run you may see is in this selection: nothing to summarise.", 400)
    runs = _runs(selection)
    content, shown = prompt(runs, selection)
    try:
        with chat.client() as client:
            reply = chat.complete(
                client,
                [{"role": "system", "content": INSTRUCTIONS}, {"role": "user", "content": content}],
                temperature=0,
            )
    except (httpx.HTTPError, ValueError, KeyError, TypeError, IndexError) as exc:
        raise SummaryRefused(f"The model could not answer ({exc.__class__.__name__}); try again later.", 502) from exc
    return RunSummary.objects.create(
        owner=user,
        selection=f"{selection.label} ({len(runs)} of {selection.total} runs)"[:300],
        runs=sorted(r.pk for r in runs),
        steps=shown,
        model=chat.model(),
        reply=_redact_all(reply.text, runs),
        tokens_in=reply.tokens_in,
        tokens_out=reply.tokens_out,
        cost_usd=chat.cost(chat.model(), reply.tokens_in, reply.tokens_out),
    )


def _check_rate(user) -> None:
    since = timezone.now() - timedelta(hours=1)
    if RunSummary.objects.filter(owner=user, created_at__gte=since).count() >= settings.SUMMARY_PER_HOUR:
        raise SummaryRefused(f"At most {settings.SUMMARY_PER_HOUR} summaries an hour; try again later.", 429)


def _runs(selection: Selection) -> list[Run]:
    found = (
        Run.objects.filter(pk__in=list(selection.runs))
        .select_related("competition__answers", "experiment__agent", "experiment__model")
        .only(
            *FAILURE_FIELDS,
            "n_steps",
            "task_name",
            "competition__slug",
            "competition__answers__answers_path",
            "experiment__agent__name",
            "experiment__model__name",
        )
    )
    return sorted(found, key=lambda r: -r.pk)


def prompt(runs: list[Run], selection: Selection) -> tuple[str, list[list[int]]]:
    """The user message, and the [run, step] pairs it shows; runs past TRUST_JUDGE_MAX_CHARS are left out."""
    failed = signatures([r for r in runs if r.status == Run.Status.GRADED])
    texts = _step_texts(runs, selection)
    blocks: list[str] = []
    shown: list[list[int]] = []
    budget = settings.TRUST_JUDGE_MAX_CHARS
    for run in runs:
        label = failed[run.pk].label if run.pk in failed else "did not fail (or not graded)"
        where = run.competition.slug if run.competition else run.task_name or "no competition"
        steps = texts.get(run.pk, [])
        block = "\n".join(
            [
                f"== run {run.pk} · {where} · {run.experiment.agent.name} x {run.experiment.model.name} · {label}",
                *(
                    f"[run {run.pk} step {index}] {kind}:\n{redact(text, run)[:STEP_CHARS]}"
                    for index, kind, text in steps
                ),
            ]
        )
        if len(block) > budget:
            break
        blocks.append(block)
        shown += [[run.pk, index] for index, _, _ in steps]
        budget -= len(block)
    return "\n\n".join(blocks), shown


def _step_texts(runs: list[Run], selection: Selection) -> dict[int, list[tuple[int, str, str]]]:
    """run id -> (index, kind, text) of its last ERROR_STEPS error steps and the step its search matched."""
    ids = [r.pk for r in runs]
    errors: dict[int, list[int]] = {}
    for run_id, index in StepText.objects.filter(ERROR_HINTS, run_id__in=ids).values_list("run_id", "index"):
        errors.setdefault(run_id, []).append(index)
    wanted = {(r, i) for r, found in errors.items() for i in sorted(found)[-ERROR_STEPS:]}
    wanted |= {(r, i) for r, i in selection.runs.items() if i is not None}
    if not wanted:
        return {}
    condition = Q(run_id__in=ids, index__in={i for _, i in wanted})
    out: dict[int, list[tuple[int, str, str]]] = {}
    for run_id, index, kind, text in (
        StepText.objects.filter(condition).order_by("run_id", "index").values_list("run_id", "index", "kind", "text")
    ):
        if (run_id, index) in wanted:
            out.setdefault(run_id, []).append((index, kind, text))
    return out


def _redact_all(text: str, runs: list[Run]) -> str:
    """The reply less any key or answers of any competition in the selection."""
    for run in {r.competition_id: r for r in runs}.values():
        text = redact(text, run)
    return text


def reply_html(summary: RunSummary, user) -> SafeString:
    """The reply, escaped, with each citation of a step it was shown, of a run the viewer may see, as a
    link; any other link or citation as plain text."""
    allowed = {(r, s) for r, s in summary.steps}
    visible = set(Run.objects.visible_to(user).filter(pk__in=summary.runs).values_list("pk", flat=True))

    def link(run: int, step: int, label: str) -> str | None:
        if (run, step) in allowed and run in visible:
            return f'<a class="permalink" href="/runs/{run}/#step-{step}">{escape(label)}</a>'
        return None

    def replace(match: re.Match) -> str:
        if match.group("url") is not None:
            target = STEP_URL.match(match.group("url"))
            made = target and link(int(target.group(1)), int(target.group(2)), match.group("label"))
            return made or escape(f"{match.group('label')} ({match.group('url')})")
        run, step = match.group("run") or match.group("url_run"), match.group("step") or match.group("url_step")
        return link(int(run), int(step), match.group(0)) or escape(match.group(0))

    parts, at = [], 0
    for match in CITATION.finditer(summary.reply):
        parts += [escape(summary.reply[at : match.start()]), replace(match)]
        at = match.end()
    parts.append(escape(summary.reply[at:]))
    return mark_safe("".join(parts).replace("\n", "<br>\n"))  # noqa: S308 - every piece escaped above
