"""The replay page of one run, its server-rendered step windows, and the two-run comparison.

Step cards are rendered by Django templates only (autoescaped), both for the first window and for
the windows the page fetches later, so agent output has one renderer and one escaping path.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from itertools import islice

from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import render

from leaderboard.analysis import research
from leaderboard.api.steps import outline_payload
from leaderboard.lib.research_failures import LABELS as FAILURE_LABELS
from leaderboard.models import INT32_MAX, INT64_MAX, Competition, Run, Snapshot, StepKind
from leaderboard.trajectories import mlagentbench_export
from leaderboard.trajectories.exports import trajectory_lines
from leaderboard.trajectories.provenance import CALLS, PRODUCED, REVIEWED, recorded_by_gateway
from leaderboard.trajectories.store import StoredStep, StoredTrajectory
from leaderboard.web import charts, static_export
from leaderboard.web.runs_index import runs_index
from leaderboard.web.visibility import parse_kinds, visible_run

PAGE_SIZE = 100
EXPORT_STEPS = 2000  # steps a static export of the replay holds (the JSONL download has them all)
# Cards show this much of any one text; "show all" fetches the rest through the steps API.
TEXT_LIMIT = 4000
COMPARE_ROWS = 200
_KIND_TEMPLATES = {
    StepKind.CODE: "code", StepKind.COMMAND: "command", StepKind.SCORE: "score",
    StepKind.PLAN: "plan", StepKind.LLM: "llm", StepKind.ACTION: "action", StepKind.SUBMISSION: "action",
}


# ---------------------------------------------------------------------------------------------
# Queries


@dataclass
class Window:
    cards: list[StepCard]
    has_prev: bool
    has_next: bool


def _cards(stored: StoredTrajectory, rows: list[StoredStep]) -> list[StepCard]:
    """Cards for the steps shown, code steps with their diffs filled in."""
    return [StepCard.of(s) for s in stored.complete(rows)]


def window(stored: StoredTrajectory, kinds: list[str] | None = None, *, after: int | None = None,
           before: int | None = None, around: int | None = None, size: int = PAGE_SIZE) -> Window:
    """Windows keyed on the step index, so the last window of 100,000 steps costs the same as the
    first: each reads the one or two blocks it needs. One extra step per side says whether more follow."""
    if around is not None:
        lead = size // 10  # a few steps of context before, so a permalink lands near the top
        earlier = list(islice(stored.steps_before(around, kinds), lead + 1))
        later = list(islice(stored.steps(around, kinds), size - lead + 1))
        return Window(_cards(stored, earlier[:lead][::-1] + later[:size - lead]),
                      has_prev=len(earlier) > lead, has_next=len(later) > size - lead)
    if before is not None:
        rows = list(islice(stored.steps_before(before, kinds), size + 1))
        return Window(_cards(stored, rows[:size][::-1]), has_prev=len(rows) > size, has_next=True)
    rows = list(islice(stored.steps(0 if after is None else after + 1, kinds), size + 1))
    return Window(_cards(stored, rows[:size]), has_prev=after is not None, has_next=len(rows) > size)


# ---------------------------------------------------------------------------------------------
# What a card shows


def _clip(value) -> tuple[str, bool]:
    text = "" if value is None else str(value)
    return text[:TEXT_LIMIT], len(text) > TEXT_LIMIT


def _diff_lines(diff: str) -> list[tuple[str, str]]:
    """(css class, line) pairs, so the template colours a diff without any HTML in Python."""
    classes = {"+": "add", "-": "del", "@": "hunk"}
    return [(classes.get(line[:1], ""), line) for line in diff.splitlines()]


@dataclass
class StepCard:
    step: StoredStep
    template: str
    text: str
    text_truncated: bool
    binary: bool
    fields: dict = field(default_factory=dict)
    cut: dict | None = None  # stored cut at import: {"bytes", "artifact"} (leaderboard.trajectories.step_size)
    links: list[tuple[str, int]] = field(default_factory=list)  # (what, step index): calls and their nodes

    @classmethod
    def of(cls, step: StoredStep) -> StepCard:
        text, length = step.text, len(step.text)
        data = step.data if isinstance(step.data, dict) else {}
        binary = bool(data.get("binary")) or _looks_binary(text)
        return cls(
            step=step,
            template=f"leaderboard/_step_{_KIND_TEMPLATES.get(step.kind, 'text')}.html",
            text="" if binary else text[:TEXT_LIMIT],
            text_truncated=length > TEXT_LIMIT,
            binary=binary,
            fields=_card_fields(step.kind, data),
            cut=_cut_at_import(data),
            links=_call_links(data),
        )


def _cut_at_import(data: dict) -> dict | None:
    """What the import's step size limit noted; only integers, as step data is the agent's."""
    note = data.get("truncated")
    if not isinstance(note, dict) or type(note.get("bytes")) is not int:
        return None
    artifact = note.get("artifact")
    return {"bytes": note["bytes"], "artifact": artifact if type(artifact) is int else None}


LINK_LABELS = ((PRODUCED, "wrote node"), (REVIEWED, "reviewed node"))


def _call_links(data: dict) -> list[tuple[str, int]]:
    """The links the site made between an LLM call and the node it wrote or reviewed
    (leaderboard.trajectories.call_links); only integers, as step data is the agent's."""
    links = [(label, data[key]) for key, label in LINK_LABELS if type(data.get(key)) is int]
    calls = data.get(CALLS)
    if isinstance(calls, list):
        links += [("LLM call", index) for index in calls if type(index) is int]
    return links


_CONTROL = re.compile("[\x00-\x08\x0b\x0e-\x1f]")  # control characters that are not whitespace


def _looks_binary(text: str) -> bool:
    """Control characters other than whitespace in more than 10% of the head: bytes, not text."""
    head = text[:2000]
    junk = len(_CONTROL.findall(head))
    return "\x00" in head or junk * 10 > len(head)


def _card_fields(kind: str, data: dict) -> dict:
    if kind == StepKind.CODE:
        content, content_cut = _clip(data.get("content"))
        diff, diff_cut = _clip(data.get("diff"))
        return {"file": data.get("file", ""), "content": content, "content_truncated": content_cut,
                "diff": _diff_lines(diff), "diff_truncated": diff_cut, "language": _language(data)}
    if kind == StepKind.COMMAND:
        stdout, stdout_cut = _clip(data.get("stdout"))
        stderr, stderr_cut = _clip(data.get("stderr"))
        return {"command": data.get("command", ""), "stdout": stdout, "stdout_truncated": stdout_cut,
                "stderr": stderr, "stderr_truncated": stderr_cut,
                "exit_code": data.get("exit_code"), "duration": data.get("duration")}
    if kind == StepKind.SCORE:
        return {"metric": data.get("metric", ""), "value": data.get("value"), "maximize": data.get("maximize")}
    if kind == StepKind.LLM:
        return _llm_fields(data)
    if kind in (StepKind.ACTION, StepKind.SUBMISSION):
        arguments, cut = _clip(_pretty(data.get("arguments")))
        return {"tool": data.get("tool", ""), "arguments": arguments, "arguments_truncated": cut}
    return {"buggy": data.get("buggy"), "is_best": data.get("is_best"), "stage": data.get("stage")}


PROMPT_KEYS = ("messages", "prompt", "input")  # the gateway's (docs/gateway.md), then what agents write
REPLY_KEYS = ("reply", "response", "output", "completion")


def _llm_fields(data: dict) -> dict:
    """Model, usage, who recorded the call (the gateway, or the agent's own claim about it), and the
    prompt and reply as text."""
    prompt_key = next((k for k in PROMPT_KEYS if data.get(k)), "messages")
    reply_key = next((k for k in REPLY_KEYS if data.get(k)), "reply")
    prompt, prompt_cut = _clip(_prompt_text(data.get(prompt_key)))
    reply, reply_cut = _clip(_pretty(data.get(reply_key)))
    return {**{k: data.get(k) for k in ("model", "tokens_in", "tokens_out", "cost")},
            "by_gateway": recorded_by_gateway(data), "prompt_key": prompt_key, "reply_key": reply_key,
            "prompt": prompt, "prompt_truncated": prompt_cut,
            "messages_omitted": data.get("messages_omitted") if type(data.get("messages_omitted")) is int else 0,
            "reply": reply, "reply_truncated": reply_cut,
            "reply_cut_when_recorded": data.get("reply_truncated") is True}


def _prompt_text(prompt) -> str:
    """A chat's messages as `role: content` blocks (the gateway keeps them under their API's field names:
    `{"messages": [...], "system": ...}`); any other shape as indented JSON."""
    if isinstance(prompt, dict):
        return "\n\n".join(f"[{name}]\n{_prompt_text(value)}" for name, value in prompt.items() if value)
    if isinstance(prompt, list) and all(isinstance(m, dict) and "role" in m for m in prompt):
        return "\n\n".join(f"{m.get('role')}: {_pretty(m.get('content'))}" for m in prompt)
    return _pretty(prompt)


def _pretty(value) -> str:
    """Tool arguments as the agent gave them: strings as they are, anything else as indented JSON."""
    if value is None or value == {} or value == []:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def _language(data: dict) -> str:
    name = str(data.get("file") or "")
    return {"sh": "bash", "py": "python"}.get(name.rsplit(".", 1)[-1], "python") if "." in name else "python"


# ---------------------------------------------------------------------------------------------
# Views


def run_detail(request: HttpRequest, pk: int) -> HttpResponse:
    run = visible_run(request, pk)
    exported = request.GET.get("export") == "html"
    stored, first = StoredTrajectory.read(
        run, lambda stored: (stored, window(stored, size=EXPORT_STEPS if exported else PAGE_SIZE)))
    context = {
        "run": run,
        "snapshots_figure": snapshot_figure(run),
        "research": research_facts(run),
        "score_axis": charts.score_axis(run.competition),
        "has_scores": bool(stored.kind_counts.get(StepKind.SCORE)),
        "can_edit": run.can_edit(request.user),
        "thresholds": run.competition.thresholds() if run.competition else None,
        "artifacts": (artifacts := list(run.artifacts.all())),
        "mlagentbench_export": mlagentbench_export.exportable(run, [a.name for a in artifacts]),
        "window": first,
        "page_size": PAGE_SIZE,
        "kinds": [(k, label, stored.kind_counts.get(k, 0)) for k, label in StepKind.choices],
        "n_steps": stored.n_steps,
        "missing_file": stored.missing_file,
    }
    if exported:
        context["outline"] = outline_payload(run) if not stored.missing_file else {"tree": [], "scores": []}
        return static_export.export_page(request, "leaderboard/run_detail.html", context,
                                         f"medalboard-run-{run.pk}.html")
    return render(request, "leaderboard/run_detail.html", context)


def run_trajectory_download(request: HttpRequest, pk: int) -> StreamingHttpResponse:
    """The run's trajectory as Medalboard JSONL, for sharing and re-import."""
    run = visible_run(request, pk)
    response = StreamingHttpResponse(trajectory_lines(run), content_type="application/x-ndjson")
    response["Content-Disposition"] = f'attachment; filename="medalboard-run-{run.pk}.jsonl"'
    return response


def run_steps_window(request: HttpRequest, pk: int) -> HttpResponse:
    """One window of server-rendered cards: `after=`, `before=` or `around=` a step index."""
    run = visible_run(request, pk)
    keys = {name: _int_param(request, name) for name in ("after", "before", "around") if name in request.GET}
    win = StoredTrajectory.read(run, lambda stored: window(stored, parse_kinds(request.GET.get("type")), **keys))
    response = render(request, "leaderboard/_step_window.html", {"run": run, "window": win})
    response["X-Window-Has-Prev"] = "1" if win.has_prev else "0"
    response["X-Window-Has-Next"] = "1" if win.has_next else "0"
    return response


def _int_param(request: HttpRequest, name: str, default: int = 0) -> int:
    try:
        return min(max(0, int(request.GET.get(name, default))), INT32_MAX)  # step indexes are 32-bit
    except ValueError:
        raise Http404(f"{name} must be a non-negative integer") from None


def _is_id(text: str) -> bool:
    """A row id: ASCII digits ("²" passes isdigit() and fails int()) a 64-bit column holds."""
    return text.isascii() and text.isdigit() and len(text) < 20 and int(text) <= INT64_MAX


# ---------------------------------------------------------------------------------------------
# Compare


def best_code_step(run: Run, stored: StoredTrajectory | None = None) -> StoredStep | None:
    """The code of the best-scoring node, else the last code step (how "final solution" reads)."""
    stored = stored or StoredTrajectory.of(run)
    code = stored.outline.get("code") or {}
    lower_better = bool(run.competition and run.competition.is_lower_better)
    for key in ("flagged", "min" if lower_better else "max", "last"):
        if code.get(key) is not None:
            return stored.step(code[key])
    return None


def solution_diff(a: StoredStep | None, b: StoredStep | None) -> list[tuple[str, str]]:
    def lines(step: StoredStep | None) -> list[str]:
        return str((step.data or {}).get("content", "") if step else "").splitlines()

    diff = difflib.unified_diff(lines(a), lines(b), "run A", "run B", lineterm="", n=3)
    return _diff_lines("\n".join(diff))


@dataclass
class CompareRow:
    key: str
    left: StepCard | None
    right: StepCard | None


def aligned_rows(a: StoredTrajectory, b: StoredTrajectory, align: str, start: int) -> list[CompareRow]:
    if align == "time":
        return _rows_by_time(a, b, start)
    left = {s.index: s for s in _rows_from(a, start)}
    right = {s.index: s for s in _rows_from(b, start)}
    keys = sorted(set(left) | set(right))[:COMPARE_ROWS]
    return [CompareRow(f"#{i}", _card(left.get(i)), _card(right.get(i))) for i in keys]


def _rows_by_time(a: StoredTrajectory, b: StoredTrajectory, start: int) -> list[CompareRow]:
    """Both runs merged on elapsed time; each row holds the one step that happened next."""
    tagged = [(s.t or 0.0, 0, s) for s in _rows_from(a, start)]
    tagged += [(s.t or 0.0, 1, s) for s in _rows_from(b, start)]
    tagged.sort(key=lambda item: (item[0], item[1], item[2].index))
    rows = []
    for t, side, step in tagged[:COMPARE_ROWS]:
        card = StepCard.of(step)
        rows.append(CompareRow(f"{t:.1f}s", card if side == 0 else None, card if side == 1 else None))
    return rows


def _rows_from(stored: StoredTrajectory, start: int) -> list[StoredStep]:
    return stored.complete(list(islice(stored.steps(start), COMPARE_ROWS)))


def _card(step: StoredStep | None) -> StepCard | None:
    return StepCard.of(step) if step is not None else None


def score_series(run: Run, stored: StoredTrajectory) -> dict:
    points = stored.outline.get("scores") or []
    return {
        "name": f"run {run.pk}",
        "run": run.pk,
        "x": [t if t is not None else i for i, t, _ in points],
        "y": [s for _, _, s in points],
        "customdata": [i for i, _, _ in points],
    }


def compare(request: HttpRequest) -> HttpResponse:
    ids = [p for value in request.GET.getlist("runs") for p in value.split(",") if _is_id(p.strip())]
    if len(ids) != 2:
        return runs_index(request, notice="Pick two runs to compare: tick them in the list below.")
    a, b = visible_run(request, int(ids[0])), visible_run(request, int(ids[1]))
    stored_a, stored_b = StoredTrajectory.of(a), StoredTrajectory.of(b)
    align = "time" if request.GET.get("align") == "time" else "index"
    start = _int_param(request, "start", 0)
    best_a, best_b = best_code_step(a, stored_a), best_code_step(b, stored_b)
    axes = [charts.score_axis(a.competition), charts.score_axis(b.competition)]
    scores = {"a": score_series(a, stored_a), "b": score_series(b, stored_b)}
    return render(request, "leaderboard/compare.html", {
        "a": a, "b": b, "has_scores": bool(scores["a"]["y"] or scores["b"]["y"]),
        "score_title": charts.axis_title(axes[0]) if axes[0] == axes[1] else "score (each run's own metric)",
        "align": align, "start": start, "next_start": start + COMPARE_ROWS,
        "rows": aligned_rows(stored_a, stored_b, align, start), "rows_per_page": COMPARE_ROWS,
        "best_a": best_a, "best_b": best_b, "solution_diff": solution_diff(best_a, best_b),
        "scores": scores,
    })


def snapshot_figure(run: Run) -> dict | None:
    """The run page's score-over-time chart from its graded snapshots (None without any); a research
    task's baseline and success bar are drawn as lines."""
    rows = list(run.snapshots.filter(status=Snapshot.Status.GRADED).order_by("elapsed_seconds"))
    if not rows:
        return None
    points = [(s.elapsed_seconds, s.score if s.valid_submission else None, s.medals().label) for s in rows]
    figure = charts.snapshots_figure(points, run.competition.thresholds() if run.competition_id else None)
    facts = research_facts(run)
    return charts.with_baseline(figure, facts["baseline"], facts["success_at"]) if facts else figure


def research_facts(run: Run) -> dict | None:
    """A research task's run: its baseline, the score a success needs, improvement, success, failure classes."""
    from leaderboard.lib.research_failures import excluded

    competition = run.competition
    if competition is None or competition.kind != Competition.Kind.RESEARCH or competition.baseline_score is None:
        return None
    gain, success = research.research_outcome(run)
    step = research.RESEARCH_SUCCESS_IMPROVEMENT * abs(competition.baseline_score)
    success_at = competition.baseline_score + (-step if competition.is_lower_better else step)
    return {"baseline": competition.baseline_score, "success_at": success_at, "improvement": gain,
            "success": success, "failures": [FAILURE_LABELS.get(c, c) for c in run.failure_classes],
            "left_out": excluded(run.failure_classes)}
