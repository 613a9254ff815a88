import logging
import os
import warnings

from celery import Celery
from celery.exceptions import CPendingDeprecationWarning
from celery.signals import celeryd_after_setup

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")

log = logging.getLogger(__name__)

app = Celery("medalboard")
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

from runner.worker import RecoveryStep  # noqa: E402  (a bootstep: imports no models until the worker starts)

app.steps["worker"].add(RecoveryStep)


def publish(task, args: list, *, what: str, **options):
    """Send a task to the broker: its AsyncResult, or None, with one line in the log, if the broker
    cannot be reached.

    Every caller keeps its row in the database and a sweep publishes it again, so an outage costs a
    delay, not the work. After a failure the connection pools are replaced: kombu can leave a pooled
    producer without its connection, and every later send would fail on it (AttributeError) even
    once the broker is back."""
    try:
        return task.apply_async(args=args, **options) if options else task.delay(*args)
    except Exception as exc:  # noqa: BLE001 - whatever the transport raises, the row is kept
        log.warning("broker unavailable: could not enqueue %s (%s); it is sent again later", what, one_line(exc))
        reset_connections()
        return None


def reset_connections() -> None:
    """Make the next send open new broker connections. The old pools are dropped, not closed: in a
    worker the consumer may still hold them, and closing them under it stops the worker."""
    app._pool = None
    if "amqp" in app.__dict__:
        app.amqp._producer_pool = None


def one_line(exc: BaseException) -> str:
    """An exception as one short log line: its class and the first line of its message."""
    lines = str(exc).splitlines()
    return f"{exc.__class__.__name__}: {lines[0][:200]}" if lines else exc.__class__.__name__


def broker_started_at() -> float | None:
    """When the broker's server last started (a Unix time), as far as it says: Redis gives its uptime.
    None for other transports, or while it cannot be reached (the caller asks again next time).

    A message published before then is gone if the broker came back without its data (no append-only
    file, or a new, empty server at the same address)."""
    import time

    url = app.conf.broker_url or ""
    if not url.startswith(("redis://", "rediss://")):
        return None
    import redis

    client = redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)
    try:
        uptime = client.info("server")["uptime_in_seconds"]
    except (redis.RedisError, OSError, KeyError):
        return None
    finally:
        client.close()
    return time.time() - float(uptime)
