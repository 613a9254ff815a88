from django.urls import path

from leaderboard import replay, views

urlpatterns = [
    path("", views.competition_list, name="home"),
    path("competitions/", views.competition_list, name="competition-list"),
    path("competitions/<str:slug>/", views.competition_detail, name="competition-detail"),
    path("runs/<int:pk>/", replay.run_detail, name="run-detail"),
    path("runs/<int:pk>/steps/", replay.run_steps_window, name="run-steps-window"),
    path("compare/", replay.compare, name="compare"),
]
