import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")

app = Celery("medalboard")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

from runner.worker import RecoveryStep  # noqa: E402  (a bootstep: imports no models until the worker starts)

app.steps["worker"].add(RecoveryStep)
