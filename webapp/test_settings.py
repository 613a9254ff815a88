"""Settings for the test suite: production settings with a throwaway key and no HTTPS redirect (the
environment they read is set first, by webapp/test_environment.py)."""

import os
import tempfile
from pathlib import Path

from webapp import test_environment  # first: the environment webapp.settings reads
from webapp.settings import *  # noqa: F403

TEST_WORKER = test_environment.TEST_WORKER  # "gw0", "gw1", ...; "" when not parallel

STORAGES = {**STORAGES, "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}}  # noqa: F405
MEDIA_ROOT = VAR_DIR / "test-artifacts"  # noqa: F405
if TEST_WORKER:
    MEDIA_ROOT = test_environment.SCRATCH / "artifacts"
RUNNER_UPLOAD_DIR = MEDIA_ROOT.with_name(MEDIA_ROOT.name + "-runner-uploads")
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast personas
ALLOWED_HOSTS = ["testserver", "localhost", "127.0.0.1"]
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # noqa: F405  (whitenoise warns about a missing folder)

if CELERY_BROKER_URL.startswith("filesystem"):  # noqa: F405
    # Tests publish to a throwaway broker folder, never into the developer's var/broker/.
    # Worker processes a test starts inherit the folder through the environment.
    _broker = Path(test_environment.per_worker("MEDALBOARD_TEST_BROKER_DIR", "medalboard-test-broker-"))
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
