"""The environment the test suite's settings read, set before webapp.settings is imported: a throwaway
key, no HTTPS redirect, limits out of the way, and under pytest-xdist a database, broker and folders per
worker. webapp/test_settings.py imports this module first; a process a test starts inherits the
environment, and so the same choices."""

import os
import re
import tempfile
from pathlib import Path

os.environ.setdefault("SECRET_KEY", "test-suite-only-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz")
os.environ.setdefault("SECURE_SSL_REDIRECT", "false")
# The suite sends thousands of requests from one address and user: limits are tested one by one.
for _name in ("MEDALBOARD_API_RATE_ANON", "MEDALBOARD_API_RATE_USER", "MEDALBOARD_API_RATE_UPLOADS"):
    os.environ.setdefault(_name, "1000000/min")
os.environ.setdefault("MEDALBOARD_DAILY_GRADING_QUOTA", "1000000")
os.environ.setdefault("MEDALBOARD_LOGIN_FAILURES_ALLOWED", "1000000")
# Uploads are imported inside the request, so a test sees their outcome at once with no worker;
# tests/runs/test_intake.py turns this off to test the worker path.
os.environ.setdefault("MEDALBOARD_INTAKE_IN_REQUEST", "true")
# A task's scratch is measured, not mounted, unless a test asks for the mount (tests/runner/test_hostile_agents.py):
# tests that SIGKILL a runner would otherwise leave a loop mount behind in pytest's tmp folders.
os.environ.setdefault("MEDALBOARD_JOB_DISK_QUOTA_MOUNT", "false")
# Research starters and evals run in the runner's Python (local) or the agent image (Docker) unless a test
# asks for MLAgentBench's environment (tests/runner/test_research_environment.py): building it takes minutes.
os.environ.setdefault("MEDALBOARD_RESEARCH_ENVIRONMENT", "none")

# `make test` runs the suite in parallel (pytest-xdist): each worker process has its own database
# (pytest-django adds the worker's id to the test database's name), and here its own broker (folder, or
# Redis database number), artifact, upload, runner and research folders. A process a test starts
# (a Celery worker) inherits PYTEST_XDIST_WORKER and so finds the same ones.
TEST_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")  # "gw0", "gw1", ...; "" when not parallel


def per_worker(variable: str, prefix: str) -> str:
    """A throwaway folder of this test session's, or of this worker's, named in the environment so
    that processes a test starts use it too (the controller's variable, which workers inherit, is not theirs)."""
    name = f"{variable}_{TEST_WORKER.upper()}" if TEST_WORKER else variable
    return os.environ.setdefault(name, tempfile.mkdtemp(prefix=f"{prefix}{TEST_WORKER}-"))


if TEST_WORKER:
    SCRATCH = Path(per_worker("MEDALBOARD_TEST_SCRATCH", "medalboard-test-scratch-"))
    for _name, _folder in (
        ("MEDALBOARD_UPLOAD_TEMP_DIR", "upload-tmp"),
        ("MEDALBOARD_RUNNER_WORK_DIR", "runner"),
        ("MEDALBOARD_RESEARCH_DIR", "research-tasks"),
    ):
        os.environ.setdefault(_name, str(SCRATCH / _folder))  # a test may name its own for a process it starts
    # One Redis database per worker: the next numbers after the suite's own (16 by default: up to 15
    # workers). Only the URL the suite was given is moved; a test's own broker (a throwaway Redis) stays.
    _suite_url = os.environ.setdefault("MEDALBOARD_TEST_SUITE_BROKER_URL", os.environ.get("CELERY_BROKER_URL", ""))
    if os.environ.get("CELERY_BROKER_URL") == _suite_url and _suite_url.startswith(("redis://", "rediss://")):
        _base, _db = re.match(r"^(.*?)(?:/(\d+))?/?$", _suite_url).groups()
        os.environ["CELERY_BROKER_URL"] = f"{_base}/{int(_db or 0) + 1 + int(TEST_WORKER.removeprefix('gw'))}"
