"""Run by tests/site/test_parallel_isolation.py on two pytest-xdist workers at once (`--dist each`, so
each worker runs this test): each leaves a trace in its database, artifact folder and broker, waits
for the other to have done the same, then records which traces it can see. Not collected on its
own (the file name does not start with test_)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from queue import Empty

from django.conf import settings
from django.db import connection

OUT = Path(os.environ.get("MEDALBOARD_PROBE_OUT", "."))
QUEUE = "medalboard-parallel-probe"


def test_leave_a_trace_then_look_for_the_other_workers(transactional_db, django_user_model):
    from webapp.celery import app

    me = os.environ["PYTEST_XDIST_WORKER"]
    django_user_model.objects.create_user(f"probe-{me}")  # committed: visible to anyone on this database
    media = Path(settings.MEDIA_ROOT)
    media.mkdir(parents=True, exist_ok=True)
    (media / f"probe-{me}").write_text(me)
    with app.connection_for_write() as conn:
        conn.SimpleQueue(QUEUE).put(me)
    (OUT / f"{me}.uses.json").write_text(json.dumps(_what_this_worker_uses()))
    _wait_for_both(OUT)
    seen = {"users": sorted(django_user_model.objects.filter(username__startswith="probe-")
                            .values_list("username", flat=True)),
            "files": sorted(p.name for p in media.glob("probe-*")), "messages": _drain()}
    (OUT / f"{me}.seen.json").write_text(json.dumps(seen))


def _what_this_worker_uses() -> dict[str, str]:
    options = settings.CELERY_BROKER_TRANSPORT_OPTIONS
    return {"database": connection.settings_dict["NAME"],
            "broker": f"{settings.CELERY_BROKER_URL} {options.get('data_folder_in', '')}",
            "artifacts": str(settings.MEDIA_ROOT), "runner work": str(settings.RUNNER_WORK_DIR),
            "uploads": str(settings.FILE_UPLOAD_TEMP_DIR), "research": str(settings.RESEARCH_DIR)}


def _wait_for_both(folder: Path, timeout_s: float = 180) -> None:
    deadline = time.monotonic() + timeout_s
    while len(list(folder.glob("*.uses.json"))) < 2:
        assert time.monotonic() < deadline, "the other worker never got this far"
        time.sleep(0.2)


def _drain() -> list[str]:
    from webapp.celery import app

    got = []
    with app.connection_for_write() as conn:
        queue = conn.SimpleQueue(QUEUE)
        while True:
            try:
                message = queue.get(block=True, timeout=2)
            except Empty:
                return got
            got.append(message.payload)
            message.ack()
