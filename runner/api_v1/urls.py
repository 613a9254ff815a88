from django.urls import path

from runner.api_v1 import views

urlpatterns = [
    path("register/", views.RegisterView.as_view(), name="runner-v1-register"),
    path("claim/", views.ClaimView.as_view(), name="runner-v1-claim"),
    path("tasks/<int:pk>/lease/", views.LeaseView.as_view(), name="runner-v1-lease"),
    path("tasks/<int:pk>/start/", views.StartView.as_view(), name="runner-v1-start"),
    path("tasks/<int:pk>/release/", views.ReleaseView.as_view(), name="runner-v1-release"),
    path("tasks/<int:pk>/steps/", views.StepsView.as_view(), name="runner-v1-steps"),
    path("tasks/<int:pk>/uploads/<slug:key>/", views.UploadView.as_view(), name="runner-v1-upload"),
    path("tasks/<int:pk>/snapshots/", views.SnapshotView.as_view(), name="runner-v1-snapshot"),
    path("tasks/<int:pk>/finish/", views.FinishView.as_view(), name="runner-v1-finish"),
    path("tasks/<int:pk>/data/<str:sha256>/", views.DataView.as_view(), name="runner-v1-data"),
    path("tasks/<int:pk>/agent/<str:sha256>/", views.AgentFileView.as_view(), name="runner-v1-agent-file"),
]
