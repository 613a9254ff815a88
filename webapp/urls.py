from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.routers import DefaultRouter

from leaderboard.api.competitions import CompetitionViewSet
from leaderboard.api.findings import FindingReviewView
from leaderboard.api.intakes import IntakeView
from leaderboard.api.reproductions import ExperimentReproductionsView
from leaderboard.api.runs import GradingQuotaView, LeaderboardAPIView, RunViewSet
from leaderboard.api.scaling import HardwareAPIView, PassAtKAPIView, TimeCurveAPIView
from leaderboard.api.steps import RunOutlineView, RunStepsView
from leaderboard.questions.api import QuestionViewSet, SummaryViewSet
from leaderboard.search.api import SearchView
from leaderboard.web import plotly_asset
from leaderboard.web.login_throttle import ThrottledLoginView
from runner.web.jobs_api import ExperimentReproduceView, JobViewSet, RunnerListView

router = DefaultRouter()
router.register("competitions", CompetitionViewSet, basename="competition")
router.register("runs", RunViewSet, basename="run")
router.register("jobs", JobViewSet, basename="job")
router.register("questions", QuestionViewSet, basename="question")
router.register("summaries", SummaryViewSet, basename="summary")

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/login/", ThrottledLoginView.as_view(), name="login"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("assets/plotly/<str:version>/plotly.min.js", plotly_asset.plotly_js, name="plotly-js"),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="schema"), name="api-docs"),
    path("api/runs/<int:pk>/steps/", RunStepsView.as_view(), name="run-steps"),
    path("api/findings/<int:pk>/review/", FindingReviewView.as_view(), name="api-finding-review"),
    path("api/runs/<int:pk>/outline/", RunOutlineView.as_view(), name="run-outline"),
    path("api/leaderboard/", LeaderboardAPIView.as_view(), name="api-leaderboard"),
    path("api/search/", SearchView.as_view(), name="api-search"),
    path("api/quota/", GradingQuotaView.as_view(), name="api-quota"),
    path("api/intakes/<int:pk>/", IntakeView.as_view(), name="api-intake"),
    path("api/scaling/time/", TimeCurveAPIView.as_view(), name="api-scaling-time"),
    path("api/scaling/pass-at-k/", PassAtKAPIView.as_view(), name="api-scaling-pass-at-k"),
    path("api/scaling/hardware/", HardwareAPIView.as_view(), name="api-scaling-hardware"),
    path("api/runners/", RunnerListView.as_view(), name="api-runners"),
    path("api/runner/v1/", include("runner.api_v1.urls")),
    path("api/experiments/<int:pk>/reproductions/", ExperimentReproductionsView.as_view(),
         name="api-experiment-reproductions"),
    path("api/experiments/<int:pk>/reproduce/", ExperimentReproduceView.as_view(), name="api-experiment-reproduce"),
    path("api/", include(router.urls)),
    path("", include("runner.web.urls")),
    path("", include("leaderboard.web.urls")),
]
