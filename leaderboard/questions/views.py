"""/questions/: your saved questions and the public ones, a form to save one (prefilled from a search
or a failure table's row), editing, deleting, and the runs one matches in an experiment."""

from __future__ import annotations

from collections import Counter

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from leaderboard.lib import chat
from leaderboard.models import Experiment, StepKind
from leaderboard.questions import matching
from leaderboard.questions.models import SavedQuestion
from leaderboard.questions.serializers import FILTER_NAMES, QuestionSerializer, ScopeSerializer
from leaderboard.search.params import MEDAL_CHOICES


def questions_page(request: HttpRequest) -> HttpResponse:
    """The list, and the form that saves a new one (its fields prefilled from the URL)."""
    form = _form_values(request.POST if request.method == "POST" else request.GET)
    if request.method == "POST":
        if not request.user.is_authenticated:
            return redirect(f"/accounts/login/?next={request.path}")
        saved = _save(request, form, None)
        if saved is not None:
            return redirect("questions")
    return _render_list(request, form)


@login_required
def question_edit(request: HttpRequest, pk: int) -> HttpResponse:
    question = get_object_or_404(SavedQuestion, pk=pk, owner=request.user)
    form = _form_values(request.POST) if request.method == "POST" else _values_of(question)
    if request.method == "POST" and _save(request, form, question) is not None:
        return redirect("questions")
    return render(
        request,
        "leaderboard/question_edit.html",
        {"question": question, "form": form, **_choices()},
        status=400 if form.get("errors") else 200,
    )


@login_required
@require_POST
def question_delete(request: HttpRequest, pk: int) -> HttpResponse:
    get_object_or_404(SavedQuestion, pk=pk, owner=request.user).delete()
    return redirect("questions")


def question_runs(request: HttpRequest, pk: int) -> HttpResponse:
    """The runs of an experiment (on a split) that the question matches, among those the viewer may see."""
    question = get_object_or_404(SavedQuestion.objects.visible_to(request.user), pk=pk)
    scope = ScopeSerializer(data=request.GET)
    if not scope.is_valid():
        raise Http404("give an experiment: ?experiment=<id>")
    experiment = get_object_or_404(Experiment.objects.visible_to(request.user), pk=scope.validated_data["experiment"])
    found = matching.matching_runs(question, matching.scoped_runs(request.user, **scope.validated_data))
    return render(
        request,
        "leaderboard/question_runs.html",
        {
            "question": question,
            "experiment": experiment,
            "split": scope.validated_data["split"],
            "count": len(found),
            "runs": matching.listed(found),
            "llm_summary": chat.configured(),
        },
    )


def _render_list(request: HttpRequest, form: dict) -> HttpResponse:
    questions = SavedQuestion.objects.visible_to(request.user).select_related("owner")
    return render(
        request,
        "leaderboard/questions.html",
        {"questions": questions, "form": form, **_choices()},
        status=400 if form.get("errors") else 200,
    )


def _save(request: HttpRequest, form: dict, question: SavedQuestion | None) -> SavedQuestion | None:
    data = {k: form[k] for k in ("name", "kind", "query", "signature", "is_public")}
    serializer = QuestionSerializer(question, data={**data, "filters": form["filters"]}, context={"request": request})
    if serializer.is_valid():
        return serializer.save(owner=request.user)
    form["errors"] = [f"{k}: {' '.join(map(str, v))}" for k, v in serializer.errors.items()]
    return None


def _form_values(source) -> dict:
    """The form's fields from a POST or from a prefilling URL (a search page's own parameters work)."""
    return {
        "name": source.get("name", ""),
        "kind": source.get("question_kind") or ("failure" if source.get("signature") else "search"),
        "query": source.get("query", source.get("q", "")),
        "signature": source.get("signature", ""),
        "is_public": source.get("is_public") in ("on", "true", "1"),
        "filters": {
            name: source.get(f"f_{name}", source.get(name, ""))
            for name in FILTER_NAMES
            if source.get(f"f_{name}", source.get(name, ""))
        },
    }


def _values_of(question: SavedQuestion) -> dict:
    return {
        "name": question.name,
        "kind": question.kind,
        "query": question.query,
        "signature": question.signature,
        "is_public": question.is_public,
        "filters": dict(question.filters),
    }


def _choices() -> dict:
    return {"step_kinds": StepKind.choices, "medals": MEDAL_CHOICES, "filter_names": FILTER_NAMES}


MAX_COLUMNS = 8  # saved questions counted on one comparison


def comparison_columns(request: HttpRequest, experiments: list[int], split: str) -> dict:
    """The experiment comparison's saved-question columns: the questions the viewer may pick, and for
    each picked one (`?question=<id>`, repeated) its count per experiment, of that experiment's runs
    on the split that the viewer may see."""
    available = list(SavedQuestion.objects.visible_to(request.user).select_related("owner"))
    wanted = {int(v) for v in request.GET.getlist("question") if v.isdigit()}
    picked = [q for q in available if q.pk in wanted][:MAX_COLUMNS]
    runs = matching.scoped_runs(request.user, experiments, split)
    totals = Counter(runs.values_list("experiment_id", flat=True))
    columns = [(q, matching.counts(q, runs)) for q in picked]
    rows = [(e, totals[e], [(q, found[e]) for q, found in columns]) for e in experiments]
    return {
        "questions_available": available,
        "questions_picked": {q.pk for q in picked},
        "question_columns": [q for q, _ in columns],
        "question_rows": rows,
    }
