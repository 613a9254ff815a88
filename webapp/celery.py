"""Where the Celery app is assembled: its settings, its worker bootstep, and the tasks it discovers. Nothing
imports this module for a helper: work is sent by task name through webapp.queue."""

import os
import warnings

from celery import Celery
from celery.exceptions import CPendingDeprecationWarning
from celery.signals import celeryd_after_setup

from webapp.worker import RecoveryStep  # a bootstep: it imports no models until the worker starts

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")

app = Celery("medalboard")
app.set_default()  # the process's one app, in every thread: webapp.queue sends through it by task name
app.config_from_object("django.conf:settings", namespace="CELERY")
# A worker waits out a broker outage of any length instead of exiting after 100 tries; at start it
# waits for the broker the same way (and says so once, not with a deprecation warning per try).
app.conf.broker_connection_retry_on_startup = True
app.conf.broker_connection_max_retries = None
# Tasks running when the broker goes away keep running (a job's sandbox is not killed by a broker
# blip; its lease and late ack make a redelivery harmless). Celery warns about that choice in a
# multi-line deprecation notice on every connection loss; the log line before it says what happened.
app.conf.worker_cancel_long_running_tasks_on_connection_loss = False


@celeryd_after_setup.connect
def _quiet_connection_loss_notice(**kwargs) -> None:
    # After the worker's logging set-up, which turns every Celery deprecation warning back on.
    warnings.filterwarnings("ignore", category=CPendingDeprecationWarning, module="celery.worker.consumer.consumer")

app.autodiscover_tasks()

app.steps["worker"].add(RecoveryStep)
