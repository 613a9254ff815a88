from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.routers import DefaultRouter

from leaderboard.api import CompetitionViewSet
from leaderboard.runs_api import LeaderboardAPIView, RunViewSet
from leaderboard.steps_api import RunOutlineView, RunStepsView

router = DefaultRouter()
router.register("competitions", CompetitionViewSet, basename="competition")
router.register("runs", RunViewSet, basename="run")

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
    path("api/runs/<int:pk>/steps/", RunStepsView.as_view(), name="run-steps"),
    path("api/runs/<int:pk>/outline/", RunOutlineView.as_view(), name="run-outline"),
    path("api/leaderboard/", LeaderboardAPIView.as_view(), name="api-leaderboard"),
    path("api/", include(router.urls)),
    path("", include("leaderboard.urls")),
]
