from django.urls import path

from runner.web import views

urlpatterns = [
    path("jobs/", views.job_list, name="job-list"),
    path("jobs/new/", views.job_new, name="job-new"),
    path("jobs/<int:pk>/", views.job_detail, name="job-detail"),
    path("jobs/<int:pk>/cancel/", views.job_cancel, name="job-cancel"),
    path("experiments/<int:pk>/reproduce/", views.experiment_reproduce, name="experiment-reproduce"),
    path("runners/", views.runner_list, name="runner-list"),
    path("runs/<int:pk>/live.json", views.run_live, name="run-live"),
]
