"""Settings for the test suite: production settings with a throwaway key and no HTTPS redirect."""

import os
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


def _per_worker(variable: str, prefix: str) -> str:
    """A throwaway folder of this test session's, or of this worker's, named in the environment so
    that processes a test starts use it too (the controller's variable, which workers inherit, is not theirs)."""
    import tempfile

    name = f"{variable}_{TEST_WORKER.upper()}" if TEST_WORKER else variable
    return os.environ.setdefault(name, tempfile.mkdtemp(prefix=f"{prefix}{TEST_WORKER}-"))


if TEST_WORKER:
    _scratch = Path(_per_worker("MEDALBOARD_TEST_SCRATCH", "medalboard-test-scratch-"))
    for _name, _folder in (("MEDALBOARD_UPLOAD_TEMP_DIR", "upload-tmp"), ("MEDALBOARD_RUNNER_WORK_DIR", "runner"),
                           ("MEDALBOARD_RESEARCH_DIR", "research-tasks")):
        os.environ.setdefault(_name, str(_scratch / _folder))  # a test may name its own for a process it starts
    # One Redis database per worker: the next numbers after the suite's own (16 by default: up to 15
    # workers). Only the URL the suite was given is moved; a test's own broker (a throwaway Redis) stays.
    _suite_url = os.environ.setdefault("MEDALBOARD_TEST_SUITE_BROKER_URL", os.environ.get("CELERY_BROKER_URL", ""))
    if os.environ.get("CELERY_BROKER_URL") == _suite_url and _suite_url.startswith(("redis://", "rediss://")):
        import re

        _base, _db = re.match(r"^(.*?)(?:/(\d+))?/?$", _suite_url).groups()
        os.environ["CELERY_BROKER_URL"] = f"{_base}/{int(_db or 0) + 1 + int(TEST_WORKER.removeprefix('gw'))}"

from webapp.settings import *  # noqa: E402,F403

STORAGES = {**STORAGES, "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}}  # noqa: F405
MEDIA_ROOT = VAR_DIR / "test-artifacts"  # noqa: F405
if TEST_WORKER:
    MEDIA_ROOT = _scratch / "artifacts"
RUNNER_UPLOAD_DIR = MEDIA_ROOT.with_name(MEDIA_ROOT.name + "-runner-uploads")
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast personas
ALLOWED_HOSTS = ["testserver", "localhost", "127.0.0.1"]
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # noqa: F405  (whitenoise warns about a missing folder)

if CELERY_BROKER_URL.startswith("filesystem"):  # noqa: F405
    # Tests publish to a throwaway broker folder, never into the developer's var/broker/.
    # Worker processes a test starts inherit the folder through the environment.
    _broker = Path(_per_worker("MEDALBOARD_TEST_BROKER_DIR", "medalboard-test-broker-"))  # noqa: F405
    CELERY_BROKER_TRANSPORT_OPTIONS = {  # noqa: F405  (the site's options, e.g. its polling interval)
        **CELERY_BROKER_TRANSPORT_OPTIONS,  # noqa: F405
        "data_folder_in": str(_broker / "queue"), "data_folder_out": str(_broker / "queue"),
        "processed_folder": str(_broker / "processed"), "control_folder": str(_broker / "control"),
        "store_processed": False,
    }
    for _folder in ("queue", "processed", "control"):
        (_broker / _folder).mkdir(exist_ok=True)

if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":  # noqa: F405
    # A file rather than memory, so that real worker processes a test starts (tests/job_support.py)
    # share the test database; each test session gets its own file.
    import tempfile

    DATABASES["default"]["TEST"] = {"NAME": os.environ.setdefault(  # noqa: F405
        "MEDALBOARD_TEST_DB", str(Path(tempfile.mkdtemp(prefix="medalboard-test-db-")) / "test.sqlite3"))}  # noqa: F405

RUNNER_SECRETS_FERNET_KEY = "dGVzdC1zdWl0ZS1vbmx5LWZlcm5ldC1rZXktMDEyMzQ="  # a fixed Fernet key for the suite only

# A test's worker process may import modules at start (Celery's `imports`): tests/slow_work.py makes
# grading and importing slow, so a test can kill the worker mid-work (tests/job_support.slow_work_env).
CELERY_IMPORTS = tuple(name for name in os.environ.get("MEDALBOARD_TEST_WORKER_IMPORTS", "").split(",") if name)
TEST_SLOW_WORK_S = float(os.environ.get("MEDALBOARD_TEST_SLOW_WORK_S", "0"))
TEST_WORK_LOG = os.environ.get("MEDALBOARD_TEST_WORK_LOG", "")
# One starter run per baseline in tests (the default, 3, triples every test that computes one); the
# tests of the mean over runs set more.
RESEARCH_BASELINE_RUNS = int(os.environ.get("MEDALBOARD_RESEARCH_BASELINE_RUNS") or 1)
