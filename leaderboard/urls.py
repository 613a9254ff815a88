from django.urls import path

from leaderboard import views

urlpatterns = [
    path("", views.competition_list, name="home"),
    path("competitions/", views.competition_list, name="competition-list"),
    path("competitions/<str:slug>/", views.competition_detail, name="competition-detail"),
]
