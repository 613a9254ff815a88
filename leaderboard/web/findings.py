"""Staff decisions on a run's findings from the run page (the form in trust/_findings.html)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from leaderboard.trust.decisions import DecisionError, decide
from leaderboard.trust.models import Finding
from leaderboard.trust.titles import check_title


@require_POST
@staff_member_required
def finding_review(request: HttpRequest, pk: int, finding_id: int) -> HttpResponse:
    finding = get_object_or_404(Finding, pk=finding_id, run_id=pk)
    try:
        decide(finding=finding, user=request.user, status=request.POST.get("status", ""),
               reason=request.POST.get("reason", ""))
    except DecisionError as exc:
        messages.error(request, f"Not recorded: {exc}.")
    else:
        messages.success(request, f"Finding “{check_title(finding.check_name)}” is now {request.POST['status']}.")
    return redirect(reverse("run-detail", args=[pk]) + f"#finding-{finding.pk}")
