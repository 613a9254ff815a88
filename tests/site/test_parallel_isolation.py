"""`make test` runs the suite on parallel workers (pytest-xdist). Two workers running at the same time
share no state: each has its own test database, broker (folder or Redis database), artifact, upload,
runner and research folders, and sees none of the other's rows, files or messages."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from django.conf import settings


@pytest.mark.alone  # it starts a parallel session of its own, on the suite's services
def test_two_parallel_workers_share_no_state(tmp_path):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST_", "MEDALBOARD_TEST_", "DJANGO_"))
           and k not in ("MEDALBOARD_UPLOAD_TEMP_DIR", "MEDALBOARD_RUNNER_WORK_DIR", "MEDALBOARD_RESEARCH_DIR")}
    if os.environ.get("MEDALBOARD_TEST_SUITE_BROKER_URL"):  # as the suite was given it, before a worker moved it
        env["CELERY_BROKER_URL"] = os.environ["MEDALBOARD_TEST_SUITE_BROKER_URL"]
    env["MEDALBOARD_PROBE_OUT"] = str(tmp_path)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-n", "2", "--dist", "each",
         "tests/site/parallel_probe.py"],
        cwd=settings.BASE_DIR, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    uses = {w: json.loads((tmp_path / f"{w}.uses.json").read_text()) for w in ("gw0", "gw1")}
    for what in uses["gw0"]:
        assert uses["gw0"][what] != uses["gw1"][what], f"both workers use the same {what}: {uses['gw0'][what]}"
    for me in ("gw0", "gw1"):
        seen = json.loads((tmp_path / f"{me}.seen.json").read_text())
        assert seen == {"users": [f"probe-{me}"], "files": [f"probe-{me}"], "messages": [me]}, (me, seen)
