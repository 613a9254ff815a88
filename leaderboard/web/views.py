from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login as auth_login
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import Q
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import NoReverseMatch, reverse
from django.utils.safestring import mark_safe
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods
from rest_framework.authtoken.models import Token

from leaderboard.analysis import page_cache, paired, stats
from leaderboard.analysis import research as research_stats
from leaderboard.analysis import versions as competition_versions
from leaderboard.api.intakes import visible_intake
from leaderboard.api.runs import LeaderboardQuerySerializer, leaderboard_rows, rows_to_csv, scoped_rows
from leaderboard.competitions import humans, published
from leaderboard.failures.breakdown import FAILURE_FIELDS, breakdown
from leaderboard.grading import format_check, grader_for, grading_available
from leaderboard.models import Competition, Experiment, Run, RunIntake, Split
from leaderboard.questions import views as question_views
from leaderboard.runs import artifacts, intake, quotas
from leaderboard.runs import submission as services
from leaderboard.trust import versions
from leaderboard.web import public_data, reproductions, research, runs_index, static_export
from leaderboard.web.charts import (
    add_run_marks,
    beaten_share_figure,
    beaten_words,
    cost_frontier_figure,
    human_leaderboard_figure,
    pass_at_k_figure,
)
from leaderboard.web.forms import DISCLOSURE_FIELDS, RunEditForm, SignupForm, UploadRunForm


def competition_list(request):
    competitions = Competition.objects.for_list()
    split_slug = request.GET.get("split", "")
    query = request.GET.get("q", "").strip()
    if split_slug:
        competitions = competitions.filter(splits__slug=split_slug)
    if query:
        competitions = competitions.filter(Q(slug__icontains=query) | Q(name__icontains=query))
    competitions = list(competitions)
    with_answers = format_check.competitions_with_answers()
    for competition in competitions:
        competition.grading_available = grading_available(competition)
        competition.answers_registered = competition.pk in with_answers
    return render(request, "leaderboard/competition_list.html", {
        "competitions": competitions,
        "splits": Split.objects.all(),
        "split_slug": split_slug,
        "query": query,
    })


def competition_detail(request, slug: str):
    competition = get_object_or_404(Competition.objects.for_list(), slug=slug)
    if competition.kind == Competition.Kind.RESEARCH:
        return research.page(request, competition)
    thresholds = competition.thresholds()
    figure, marks = None, []
    if thresholds is not None:
        scores = list(competition.human_scores.values_list("score", flat=True))
        marks = humans.run_marks(competition=competition, user=request.user)
        figure = add_run_marks(human_leaderboard_figure(
            scores, thresholds, reference=competition.has_reference_leaderboard), marks)
    return static_export.render_or_export(request, "leaderboard/competition_detail.html", {
        "competition": competition,
        "grader": grader_for(competition),
        "answers_registered": format_check.answers_file(competition) is not None,
        "runs": runs_index.best_runs(user=request.user, competition=competition),
        "thresholds": thresholds,
        "figure": figure,
        "n_marks": len(marks),
        "versions": versions.history(competition),
        "public_files": public_data.listing(competition),
        "failures": breakdown(list(Run.objects.visible_to(request.user).filter(
            competition=competition, status=Run.Status.GRADED).only(*FAILURE_FIELDS))),
    }, f"medalboard-{competition.slug}.html")


# --- runs in: the upload form, its progress page, editing -------------------------------------


def _run_url(run) -> str:
    """The replay page of a run (built elsewhere); the status endpoint until that route exists."""
    try:
        return reverse("run-detail", args=[run.pk])
    except NoReverseMatch:
        return reverse("run-status", args=[run.pk])


@login_required
def upload_run(request):
    form = UploadRunForm(request.POST or None, request.FILES or None, user=request.user)
    status, format_check = 200, None
    if request.method == "POST" and form.is_valid() and form.cleaned_data["check_only"]:
        data = form.cleaned_data
        try:
            format_check = quotas.check_format(competition=data["competition"], submission=data["submission"])
        except quotas.TooLargeToCheck as exc:
            form.add_error("submission", str(exc))
            status = 413
    elif request.method == "POST" and form.is_valid() and (broken := _broken_file(form.cleaned_data)):
        form.add_error("submission", f"Not saved: {broken}. Fix the file and upload it again.")
    elif request.method == "POST" and form.is_valid():
        try:
            received = intake.wait(intake.receive(owner=request.user, **_upload_fields(form.cleaned_data)))
        except artifacts.StorageUnavailable as exc:
            form.add_error(None, str(exc))
            status = 503
        except quotas.QuotaExceeded as exc:
            form.add_error(None, str(exc))
            status = 429
        else:
            if received.status == RunIntake.Status.FAILED:
                form.add_error(None, received.error)
                status = {RunIntake.Failure.QUOTA: 429, RunIntake.Failure.STORAGE: 503}.get(received.failure, 200)
            elif received.status == RunIntake.Status.IMPORTED and received.run_id:
                if received.note:
                    messages.info(request, f"This upload is {received.note}.")
                return redirect("run-progress", pk=received.run_id)
            else:
                return redirect("intake-progress", pk=received.pk)
    return render(request, "leaderboard/upload.html", {
        "form": form, "max_bytes": settings.MAX_UPLOAD_BYTES, "format_check": format_check,
        "daily_quota": settings.DAILY_GRADING_QUOTA, "quotas_today": quotas.used_today(user=request.user),
        "recent_intakes": RunIntake.objects.filter(owner=request.user)[:5],
    }, status=status)


def _broken_file(data: dict) -> str | None:
    """Why grading would reject a lone submission CSV sent through the form, if it would: such a file
    would only become a run saying "invalid submission", so the form says why and saves nothing (the
    API keeps such runs; its clients check first with /api/runs/check/). An archive, a file sent with a
    trajectory or snapshots, one too large to check here, or a competition this site cannot check goes
    on to be imported as before."""
    submission = data["submission"]
    if (submission is None or data["trajectory_files"] or data["snapshots"] or data["competition"] is None
            or not (submission.name or "").lower().endswith(".csv")
            or (submission.size or 0) > settings.FORMAT_CHECK_MAX_BYTES):
        return None
    verdict = quotas.check_format(competition=data["competition"], submission=submission)
    submission.seek(0)
    return None if verdict.valid or not verdict.checked else verdict.message


def _upload_fields(data: dict) -> dict:
    """The form's fields as leaderboard.runs.intake.receive takes them."""
    return {
        "submission": data["submission"], "trajectory_files": data["trajectory_files"],
        "snapshot_files": data["snapshots"], "metadata": {
            "competition": data["competition"].slug if data["competition"] else data["task"].strip(),
            "agent_name": data["agent"], "agent_version": data["agent_version"], "model_name": data["model"],
            "seed": data["seed"], "hardware": data["hardware"], "gpu_type": data["gpu_type"],
            "gpu_count": data["gpu_count"], "cpu_count": data["cpu_count"], "memory_gb": data["memory_gb"],
            "time_limit_hours": data["time_limit_hours"], "notes": data["notes"], "is_private": data["is_private"],
            "team": data["team"].pk if data.get("team") else None,
            "disclosures": {name: data[name] for name in DISCLOSURE_FIELDS},
        },
    }


@login_required
def intake_progress(request, pk: int):
    """An upload a worker is importing: the page follows it, then moves on to the run's progress."""
    received = visible_intake(request.user, pk)
    if received.status == RunIntake.Status.IMPORTED and received.run_id:
        return redirect("run-progress", pk=received.run_id)
    return render(request, "leaderboard/intake.html", {"intake": received})


def run_progress(request, pk: int):
    run = get_object_or_404(Run.objects.visible_to(request.user).select_related("competition"), pk=pk)
    return render(request, "leaderboard/upload.html", {"run": run, "run_url": _run_url(run)})


def run_status(request, pk: int):
    run = get_object_or_404(Run.objects.visible_to(request.user), pk=pk)
    return JsonResponse({
        "id": run.pk, "status": run.status, "state": run.state, "progress": run.progress,
        "done": run.status in (Run.Status.GRADED, Run.Status.FAILED, Run.Status.WAITING),
        "score": run.score, "medal": run.medal_label, "any_medal": run.any_medal,
        "valid_submission": run.valid_submission, "verification": run.verification,
        "grading_error": run.grading_error, "url": _run_url(run),
    })


@login_required
def run_edit(request, pk: int):
    run = get_object_or_404(Run.objects.visible_to(request.user), pk=pk)
    if not run.can_edit(request.user):
        raise PermissionDenied("only the run's owner or staff can edit it")
    form = RunEditForm(request.POST or None, instance=Run(notes=run.notes, is_private=run.is_private))
    if request.method == "POST" and form.is_valid():
        services.update_run(run=run, user=request.user, notes=form.cleaned_data["notes"],
                            is_private=form.cleaned_data["is_private"])
        messages.success(request, "Run updated.")
        return redirect(_run_url(run))
    return render(request, "leaderboard/run_edit.html", {"run": run, "form": form})


@login_required
@require_http_methods(["GET", "POST"])
def run_delete(request, pk: int):
    """GET: a page that asks to confirm; POST (its form): delete."""
    run = get_object_or_404(Run.objects.visible_to(request.user).select_related("competition"), pk=pk)
    if not run.can_edit(request.user):
        raise PermissionDenied("only the run's owner or staff can delete it")
    if request.method == "GET":
        return render(request, "leaderboard/run_delete.html", {"run": run})
    services.delete_run(run=run, user=request.user)
    messages.success(request, f"Run {pk} deleted.")
    return redirect("home")


# --- accounts ------------------------------------------------------------------------------------


def signup(request):
    if request.user.is_authenticated:
        return redirect("home")
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        auth_login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        messages.success(request, f"Welcome, {user.username}.")
        return redirect("home")
    return render(request, "registration/signup.html", {"form": form})


@never_cache  # the page shows a secret: no browser or proxy may keep a copy
@login_required
def api_token(request):
    token = Token.objects.filter(user=request.user).first()
    if request.method == "POST":
        if token is not None:
            token.delete()  # "regenerate": the old token stops working at once
        token = Token.objects.create(user=request.user)
        messages.success(request, "A new API token was created.")
        return redirect("account-token")
    return render(request, "leaderboard/token.html", {"token": token})


# --- the leaderboard and experiments -------------------------------------------------------------


def leaderboard(request):
    query = LeaderboardQuerySerializer(data=request.GET)
    params = {**{"split": "lite", "sort": "-any_medal"}, **(query.validated_data if query.is_valid() else {})}
    export = request.GET.get("format", "")
    try:
        if export in ("csv", "json"):
            split, rows = leaderboard_rows(params, request.user)
        else:  # the table and chart: cached for each audience (leaderboard.analysis.page_cache)
            board = page_cache.for_viewer(request.user, verified_only=bool(params.get("verified")),
                                          key=("board", request.GET.urlencode(), published.stamp()),
                                          compute=lambda scope: _board(params, request, scope))
    except Split.DoesNotExist:
        if export not in ("csv", "json") and _research_only(params, request):
            return render(request, "leaderboard/leaderboard.html", {
                "research_only": True, "research": research_stats.research_results(
                    research_stats.research_runs(request.user, verified_only=bool(params.get("verified")))),
                "verified_only": bool(params.get("verified")),
                "has_mlebench": Split.objects.filter(benchmark__slug="mle-bench").exists()})
        raise Http404("that split is not in the catalogue") from None
    if export == "csv":
        response = HttpResponse(rows_to_csv(rows), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="medalboard-{split.slug}.csv"'
        return response
    if export == "json":
        return JsonResponse({"split": split.slug, "count": len(rows), "results": rows})
    split = board["split"]
    return static_export.render_or_export(request, "leaderboard/leaderboard.html", {
        "board": {**board, "html": mark_safe(board["html"]),  # noqa: S308 - both rendered by our templates
                  "published_html": mark_safe(board["published_html"])},  # noqa: S308
        "split": split, "research": research_stats.research_results(
            research_stats.research_runs(request.user, verified_only=bool(params.get("verified")))),
    }, f"medalboard-{split.slug}.html")


def _research_only(params: dict, request) -> bool:
    """The front page (or ?split=research) of a site that hosts research tasks and no MLE-bench split
    of that name: the research section alone, not a 404."""
    from leaderboard.competitions.research_import import SPLIT as RESEARCH_SPLIT

    named = request.GET.get("split")
    if named not in (None, "", RESEARCH_SPLIT):
        return False
    return Split.objects.filter(slug=RESEARCH_SPLIT).exists() or \
        Competition.objects.filter(kind=Competition.Kind.RESEARCH).exists()


def _board(params: dict, request, scope: tuple) -> dict:
    """The leaderboard's table and cost chart, and MLE-bench's published results, as HTML: the same
    for every viewer of `scope` (no request in the rendering: no CSRF token, no user)."""
    board_params, split, rows, opened_from = _opening_board(params, request, scope)
    for row in rows:
        row["cells"] = [(key, row[f"{key}_pct"], row[f"{key}_sem"]) for key in stats.METRICS]
    priced = [r for r in rows if r["cost_usd"] is not None and r["any_medal_pct"] is not None]
    front = stats.pareto_front([(r["cost_usd"], r["any_medal_pct"]) for r in priced])
    cost_figure = cost_frontier_figure(priced, front) if len(priced) >= 2 else None
    html = render_to_string("leaderboard/_board.html", {
        "rows": rows, "split": split, "params": board_params, "split_choices": stats.split_choices(),
        "has_demo": any(row["demo"] for row in rows), "cost_figure": cost_figure, "metrics": stats.METRICS,
        "query_string": request.GET.urlencode(), "opened_from": opened_from,
        "disclosure_filters": [(name, label, board_params.get(name, ""), choices)
                               for name, label, choices in DISCLOSURE_FILTERS],
    })
    column = published.split_column(params["split"])
    published_html = render_to_string("leaderboard/_published.html", {
        "split": opened_from or split, "published": published.published_results(params["split"]),
        "published_columns": published.COLUMNS, "published_column": column,
        "published_column_label": dict(published.COLUMNS).get(column or "", ""),
    })
    return {"html": str(html), "published_html": str(published_html), "split": split,
            "has_chart": cost_figure is not None}


YES_NO_UNKNOWN = [("yes", "yes"), ("no", "no"), ("unknown", "not disclosed")]
# The leaderboard's disclosure filters: query parameter, label, choices (stats.LeaderboardFilters).
DISCLOSURE_FILTERS = [("internet", "Internet", YES_NO_UNKNOWN), ("test_signal", "Test signal", YES_NO_UNKNOWN),
                      ("leakage", "Known leakage", [("yes", "yes"), ("no", "no")])]


def _opening_board(params: dict, request, scope: tuple) -> tuple[dict, Split, list[dict], Split | None]:
    """The board's parameters, split and rows; for a visitor who named no split, when no experiment of the
    default split has a complete seed with a valid submission, the first split whose board has one instead
    (on a fresh site, the demo content), with the split it stands in for: a first page of dashes, or of
    someone's rejected file, says nothing about the site."""
    split, rows = scoped_rows(params, request.user, scope)
    if "split" in request.GET or _has_complete_seed(rows):
        return params, split, rows, None
    for slug, _ in stats.split_choices():
        if stats.SPLIT_ALIASES.get(slug, slug) == split.slug:
            continue
        try:
            candidate, candidate_rows = scoped_rows({**params, "split": slug}, request.user, scope)
        except Split.DoesNotExist:
            continue
        if _has_complete_seed(candidate_rows):
            return {**params, "split": slug}, candidate, candidate_rows, split
    return params, split, rows, None


def _has_complete_seed(rows: list[dict]) -> bool:
    """Some experiment has a complete seed and a valid submission in it: an invalid upload alone never
    makes a board the first page."""
    return any(row["n_seeds"] and row["valid_submission_pct"] for row in rows)


def experiment_detail(request, pk: int):
    experiment = get_object_or_404(Experiment.objects.select_related("agent", "model", "owner", "team"), pk=pk)
    runs = list(Run.objects.visible_to(request.user).filter(experiment=experiment)
                .select_related("competition").order_by("created_at", "id"))
    if not runs:
        raise Http404("no runs of this experiment are visible to you")
    competition_ids = {r.competition_id for r in runs if r.competition_id is not None}
    splits = (Split.objects.filter(benchmark__slug="mle-bench", competitions__in=competition_ids)
              .distinct().prefetch_related("competitions"))
    finished = [r for r in runs if r.status == Run.Status.GRADED]  # see RunQuerySet.for_leaderboard
    ks = tuple(range(1, max(3, len({r.seed for r in finished})) + 1))
    summaries = [(split, summary) for split in splits for summary in _by_version(experiment, finished, split, ks)]
    curves = {f"{split.name} {s.versions_label}".strip(): [(k, v) for k, v in s.pass_at.items() if v is not None]
              for split, s in summaries}
    curves = {name: points for name, points in curves.items() if len(points) > 1}
    grid = stats.latest_per_seed(runs)
    seeds = sorted(grid)
    tasks = sorted({(r.competition.slug if r.competition else r.task_name, r.competition_id) for r in runs},
                   key=lambda t: t[0])
    rows = [(label, [grid[s].get(cid) if cid is not None else _by_task(runs, label, s) for s in seeds])
            for label, cid in tasks]
    research = research_stats.research_results([
        r for r in runs if r.status == Run.Status.GRADED and r.competition is not None
        and r.competition.kind == Competition.Kind.RESEARCH and r.competition.baseline_score is not None
    ])
    shares = humans.beaten_shares(runs)
    placed = {slug for slug, _ in shares}
    references = {r.competition.has_reference_leaderboard for r in runs
                  if r.competition and r.competition.slug in placed}
    return static_export.render_or_export(request, "leaderboard/experiment.html", {
        "experiment": experiment, "summaries": summaries, "seeds": seeds, "rows": rows,
        "has_demo_runs": any(r.is_demo for r in runs), "n_value_columns": len(stats.METRICS) + len(ks),
        "research": research, "metrics": stats.METRICS, "n_runs": len(runs), "ks": ks,
        "disclosures": experiment.disclosures(),
        "pass_at_k_figure": pass_at_k_figure(curves) if curves else None,
        "beaten_figure": beaten_share_figure(shares, references) if shares else None,
        "beaten_words": beaten_words(references),
        "others": Experiment.objects.visible_to(request.user).exclude(pk=experiment.pk)
        .select_related("agent", "model", "owner", "team"),
        "split_choices": stats.split_choices(), **reproductions.context(experiment, runs, request.user),
        "failures": breakdown(runs),
    }, f"medalboard-experiment-{experiment.pk}.html")


def _by_version(experiment: Experiment, runs: list[Run], split: Split, ks: tuple) -> list[stats.ExperimentStats]:
    """The experiment's statistics on a split, one per version of its competitions the runs were graded on."""
    competitions = split.competitions.all()
    found = stats.experiment_stats_by_version(experiment, runs, {c.pk for c in competitions}, ks=ks)
    slugs, current = {c.pk: c.slug for c in competitions}, {c.pk: c.version for c in competitions}
    for summary in found:
        summary.versions_label = competition_versions.label(summary.versions, slugs, current)
    return found or [stats.experiment_stats(experiment, [], set(slugs), ks=ks)]


def compare_experiments(request):
    """Two experiments on the same split, paired by competition (leaderboard.analysis.paired)."""
    ids = [_positive_int(request.GET.get(key)) for key in ("a", "b")]
    found = (Experiment.objects.visible_to(request.user).select_related("agent", "model", "owner", "team")
             .in_bulk([i for i in ids if i]))
    if None in ids or len(found) != 2:
        raise Http404("give two experiments: ?a=<id>&b=<id>")
    split_slug = request.GET.get("split", "lite")
    try:
        split = stats.resolve_split(split_slug)
    except Split.DoesNotExist:
        raise Http404("that split is not in the catalogue") from None
    competitions = {c.pk: c for c in split.competitions.all()}
    runs = list(Run.objects.visible_to(request.user)
                .filter(status=Run.Status.GRADED, experiment_id__in=ids, competition_id__in=competitions)
                .only("id", "experiment_id", "competition_id", "seed", "any_medal", "beats_human_pct", "is_demo")
                .order_by("created_at", "id"))
    comparison = paired.compare([r for r in runs if r.experiment_id == ids[0]],
                                [r for r in runs if r.experiment_id == ids[1]], set(competitions))
    return render(request, "leaderboard/compare_experiments.html", {
        "a": found[ids[0]], "b": found[ids[1]], "split": split, "split_slug": split_slug,
        "split_choices": stats.split_choices(), "comparison": comparison,
        "rows": [(competitions[c], side_a, side_b) for c, side_a, side_b in comparison.rows],
        "only_a": [competitions[c] for c in comparison.only_a],
        "only_b": [competitions[c] for c in comparison.only_b],
        "beaten_words": beaten_words({competitions[c].has_reference_leaderboard for c, _, _ in comparison.rows}),
        **question_views.comparison_columns(request, ids, split.slug),
        "has_demo_runs": any(r.is_demo for r in runs),
    })


def _positive_int(value) -> int | None:
    try:
        number = int(value)
    except (TypeError, ValueError):
        return None
    return number if number > 0 else None


def _by_task(runs, task_name: str, seed: int):
    matches = [r for r in runs if r.competition_id is None and r.task_name == task_name and r.seed == seed]
    return matches[-1] if matches else None
