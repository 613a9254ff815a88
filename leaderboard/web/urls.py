from django.urls import path

from leaderboard.questions import summary_views
from leaderboard.questions import views as questions
from leaderboard.search.views import search_page
from leaderboard.web import findings, public_data, replay, run_files, runs_index, similarity, views
from leaderboard.web import scaling as scaling_views

urlpatterns = [
    path("", views.leaderboard, name="home"),
    path("competitions/", views.competition_list, name="competition-list"),
    path("competitions/<str:slug>/", views.competition_detail, name="competition-detail"),
    path("competitions/<str:slug>/data/", public_data.public_file, name="competition-data"),
    path("competitions/<str:slug>/data/<path:path>", public_data.public_file, name="competition-data-file"),
    path("runs/", runs_index.runs_index, name="runs-index"),
    path("search/", search_page, name="search"),
    path("questions/", questions.questions_page, name="questions"),
    path("questions/<int:pk>/edit/", questions.question_edit, name="question-edit"),
    path("questions/<int:pk>/delete/", questions.question_delete, name="question-delete"),
    path("questions/<int:pk>/runs/", questions.question_runs, name="question-runs"),
    path("questions/summaries/", summary_views.summaries_page, name="summaries"),
    path("questions/summaries/<int:pk>/", summary_views.summary_detail, name="summary-detail"),
    path("runs/<int:pk>/", replay.run_detail, name="run-detail"),
    path("runs/<int:pk>/steps/", replay.run_steps_window, name="run-steps-window"),
    path("runs/<int:pk>/trajectory.jsonl", replay.run_trajectory_download, name="run-trajectory"),
    path("runs/<int:pk>/files/<int:artifact_id>/", run_files.artifact_download, name="run-artifact"),
    path("runs/<int:pk>/grading-report.json", run_files.report_download, name="run-report"),
    path("runs/<int:pk>/mlagentbench.zip", run_files.mlagentbench_trace_download, name="run-mlagentbench"),
    path("runs/<int:pk>/similar/<int:other>/", similarity.run_similar, name="run-similar"),
    path("runs/<int:pk>/similar/reference/<int:reference>/", similarity.run_similar_reference,
         name="run-similar-reference"),
    path("compare/", replay.compare, name="compare"),
    path("compare/experiments/", views.compare_experiments, name="compare-experiments"),
    path("experiments/<int:pk>/", views.experiment_detail, name="experiment-detail"),
    path("scaling/<slug:kind>/", scaling_views.scaling_page, name="scaling"),
    path("runs/upload/", views.upload_run, name="upload-run"),
    path("runs/<int:pk>/progress/", views.run_progress, name="run-progress"),
    path("runs/intakes/<int:pk>/", views.intake_progress, name="intake-progress"),
    path("runs/<int:pk>/status.json", views.run_status, name="run-status"),
    path("runs/<int:pk>/edit/", views.run_edit, name="run-edit"),
    path("runs/<int:pk>/delete/", views.run_delete, name="run-delete"),
    path("runs/<int:pk>/findings/<int:finding_id>/review/", findings.finding_review, name="finding-review"),
    path("accounts/signup/", views.signup, name="signup"),
    path("account/token/", views.api_token, name="account-token"),
]
