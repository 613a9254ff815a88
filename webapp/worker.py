"""What every Celery worker of the site runs beside its tasks, as a worker bootstep (so the embedded
default, a bare `celery -A webapp worker`, has it too, with no separate beat process):

- the site-wide recovery sweep (webapp.maintenance.sweep) every SWEEP_INTERVAL_S;
- on a runner (MEDALBOARD_RUNNER_NAME set by `manage.py runner`), a heartbeat every
  RUNNER_HEARTBEAT_S, which also reports the images the runner has.
Several workers sweeping at once is safe: the sweep only makes conditional updates.
"""

from __future__ import annotations

import logging
import os
import threading

from celery import bootsteps

log = logging.getLogger(__name__)


def _outage_errors() -> tuple[type[BaseException], ...]:
    from django.db import InterfaceError, OperationalError
    from kombu.exceptions import OperationalError as BrokerError

    return (BrokerError, OperationalError, InterfaceError, ConnectionError, TimeoutError)


def _service(exc: BaseException) -> str:
    return "the database" if exc.__class__.__module__.startswith("django.db") else "the broker"


def _every(interval: float, stop: threading.Event, work, name: str) -> threading.Thread:
    starter = threading.current_thread()  # the worker's own thread: the loop ends with it

    def loop() -> None:
        from django.db import close_old_connections

        from webapp.queue import one_line

        outages = _outage_errors()  # imported here: Django is set up once the worker runs

        while not stop.wait(interval) and starter.is_alive():
            try:
                work()
            except outages as exc:  # the database or broker is away: the next pass retries, one line says so
                log.warning("%s: %s unavailable (%s); retrying in %g s", name, _service(exc), one_line(exc), interval)
            except Exception:  # noqa: BLE001 - a failed pass is retried at the next interval
                log.exception("%s failed", name)
            finally:
                close_old_connections()

    thread = threading.Thread(target=loop, name=name, daemon=True)
    thread.start()
    return thread


class RecoveryStep(bootsteps.StartStopStep):
    """The sweep and, on runners, the heartbeat: daemon threads of the worker's main process."""

    def __init__(self, worker, **kwargs) -> None:
        super().__init__(worker, **kwargs)
        self.stop_event = threading.Event()

    def start(self, worker) -> None:
        from django.conf import settings

        from webapp.maintenance import sweep

        _every(settings.SWEEP_INTERVAL_S, self.stop_event, sweep, "medalboard-sweep")
        if os.environ.get("MEDALBOARD_RUNNER_NAME"):
            from runner.jobs.registry import heartbeat

            name = os.environ["MEDALBOARD_RUNNER_NAME"]
            _every(settings.RUNNER_HEARTBEAT_S, self.stop_event, lambda: heartbeat(name), "medalboard-heartbeat")

    def stop(self, worker) -> None:
        self.stop_event.set()
