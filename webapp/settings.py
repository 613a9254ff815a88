"""Django settings for Medalboard.

Every setting that differs between a laptop and production comes from the environment, through the
small helpers below, with a default that works on a bare machine: SQLite under var/, an embedded
Celery broker (kombu's filesystem transport) and a local artifact folder.
"""

import importlib.util
import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from runner.gateway.config import parse_upstreams

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("MEDALBOARD_VAR_DIR", BASE_DIR / "var"))


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    if value.lower() in ("1", "true", "yes", "on"):
        return True
    if value.lower() in ("0", "false", "no", "off"):
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (true/false), not {value!r}")


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    try:
        return int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, not {value!r}") from None


def env_float(name: str, default: float) -> float:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    try:
        number = float(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a number, not {value!r}") from None
    if not number > 0 or number == float("inf"):
        raise ImproperlyConfigured(f"{name} must be a positive finite number, not {value!r}")
    return number


def env_list(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return [item.strip() for item in value.split(",") if item.strip()]


def env_upstreams(name: str) -> dict[str, str]:
    """`provider=URL,provider=URL` as {provider: URL} (runner.gateway.config.parse_upstreams)."""
    return parse_upstreams(name, env_list(name, []))


DEBUG = env_bool("DEBUG", False)
SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off (set DEBUG=true for local use)")
    SECRET_KEY = "insecure-local-development-key-never-use-in-production"

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "testserver"] if DEBUG else [])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "leaderboard",
    "runner",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "webapp.middleware.RequestGuardMiddleware",
    "webapp.middleware.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "webapp.urls"
WSGI_APPLICATION = "webapp.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL") or f"sqlite:///{VAR_DIR / 'medalboard.sqlite3'}",
        # Persistent connections (checked before each request's first query) save a connect per
        # request; 0 closes them after every request.
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 60),
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The embedded default serves the site and a worker from one file: WAL lets readers go on while
    # a run is imported, and synchronous=NORMAL is WAL's documented safe pairing (no corruption on a
    # crash; the last commits may be lost on power loss). Writers wait for locks instead of failing.
    DATABASES["default"].setdefault("OPTIONS", {}).update({
        "timeout": 30,
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        # Runners, the worker and the site write from several processes at once: a transaction that
        # reads and then writes must take the write lock up front (waiting up to `timeout`), or SQLite
        # fails it at once with "database is locked" instead of waiting.
        "transaction_mode": "IMMEDIATE",
    })
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT", VAR_DIR / "staticfiles"))
# Plotly's bundled plotly.min.js is served locally (no CDN is reachable offline); find_spec locates the
# installed package without importing it: settings import nothing but what they read.
STATICFILES_DIRS = [BASE_DIR / "static",
                    ("vendor/plotly", Path(importlib.util.find_spec("plotly").origin).parent / "package_data")]
# Uploaded submissions, trajectories and logs. Private competition answers are NOT stored here:
# they stay where the catalogue's data root keeps them and are never served.
MEDIA_ROOT = Path(os.environ.get("MEDIA_ROOT", VAR_DIR / "artifacts"))
STORAGES = {
    "default": {
        "BACKEND": os.environ.get("ARTIFACT_STORAGE", "django.core.files.storage.FileSystemStorage"),
    },
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if not DEBUG
        else "django.contrib.staticfiles.storage.StaticFilesStorage",
    },
}
WHITENOISE_USE_FINDERS = True

# Medalboard's own settings.


# The read-only data beside the checkout (`../shared`: the MLE-bench catalogue, real trajectories); a
# checkout elsewhere names it with MEDALBOARD_SHARED_DIR.
SHARED_DIR = Path(os.environ.get("MEDALBOARD_SHARED_DIR") or BASE_DIR.parent / "shared")
CATALOGUE_DIR = Path(os.environ.get("MEDALBOARD_CATALOGUE_DIR", SHARED_DIR / "data" / "mle-bench"))
NEW_USERS_CAN_SUBMIT_JOBS = env_bool("MEDALBOARD_NEW_USERS_CAN_SUBMIT_JOBS", False)  # runner.jobs.access
MAX_ACTIVE_JOBS_PER_USER = env_int("MEDALBOARD_MAX_ACTIVE_JOBS_PER_USER", 3)  # runner.jobs.access
# The Fernet key runner.host.secrets seals job secrets with (MEDALBOARD_SECRETS_KEY); not Django's SECRET_KEY.
RUNNER_SECRETS_FERNET_KEY = os.environ.get("MEDALBOARD_SECRETS_KEY", "")
MAX_UPLOAD_BYTES = env_int("MEDALBOARD_MAX_UPLOAD_BYTES", 512 * 1024 * 1024)
# Every archive read (uploaded .zip/.tar, Inspect .eval) streams under these caps (leaderboard.lib.archives):
# bytes unpacked in all, per member, the unpacked/packed ratio, and the member count.
ARCHIVE_MAX_BYTES = env_int("MEDALBOARD_ARCHIVE_MAX_BYTES", MAX_UPLOAD_BYTES)
ARCHIVE_MEMBER_MAX_BYTES = env_int("MEDALBOARD_ARCHIVE_MEMBER_MAX_BYTES", 256 * 1024 * 1024)
ARCHIVE_MAX_RATIO = env_float("MEDALBOARD_ARCHIVE_MAX_RATIO", 200.0)
ARCHIVE_MAX_MEMBERS = env_int("MEDALBOARD_ARCHIVE_MAX_MEMBERS", 10_000)
# The format check runs in the web process: larger submissions are refused (413) there, and graded
# (so checked) by a worker when uploaded.
FORMAT_CHECK_MAX_BYTES = env_int("MEDALBOARD_FORMAT_CHECK_MAX_BYTES", 32 * 1024 * 1024)
# A step is stored cut when one of its strings is longer than this, or all of them add up to more
# than STEP_LIMIT; the whole step is kept as an artifact of the run (leaderboard.trajectories.step_size).
STEP_FIELD_LIMIT = env_int("MEDALBOARD_STEP_FIELD_LIMIT", 1024 * 1024)
STEP_LIMIT = env_int("MEDALBOARD_STEP_LIMIT", 4 * 1024 * 1024)
# Code similarity (leaderboard.trust.similarity): bytes of a run's code fingerprinted (untrusted, so
# bounded), the similarity above which a pair is flagged as a finding, the least one a run page shows,
# and how many closest runs each run keeps.
SIMILARITY_MAX_BYTES = env_int("MEDALBOARD_SIMILARITY_MAX_BYTES", 1024 * 1024)
SIMILARITY_THRESHOLD = env_float("MEDALBOARD_SIMILARITY_THRESHOLD", 0.6)
SIMILARITY_MIN_SHOWN = env_float("MEDALBOARD_SIMILARITY_MIN_SHOWN", 0.1)
SIMILARITY_TOP_MATCHES = env_int("MEDALBOARD_SIMILARITY_TOP_MATCHES", 20)
# A hash more runs of a competition hold than this is boilerplate: left out of run-to-run comparisons
# (never of reference code), and the postings of such a hash are never read.
SIMILARITY_COMMON_RUNS = env_int("MEDALBOARD_SIMILARITY_COMMON_RUNS", 50)
# The Docker image the built-in agents run in; built locally by `manage.py build_agent_image`.
MEDALBOARD_AGENT_IMAGE = os.environ.get("MEDALBOARD_AGENT_IMAGE") or "medalboard-agent:bookworm"
# Agents packaged as MLE-bench packages them (runner.agents): their folders are untrusted, so bounded;
# `privileged: true` is refused unless the site says otherwise; images build with this network.
AGENTS_ALLOW_PRIVILEGED = env_bool("MEDALBOARD_AGENTS_ALLOW_PRIVILEGED", False)
AGENTS_MAX_FOLDER_BYTES = env_int("MEDALBOARD_AGENTS_MAX_FOLDER_BYTES", 256 * 1024 * 1024)
AGENTS_MAX_FILES = env_int("MEDALBOARD_AGENTS_MAX_FILES", 20_000)
# What an agent image build may reach (runner.agents.build_network): `none`, `registries` (only the
# hosts below, through a filtering proxy the site starts) or a Docker network (`host`: everything).
AGENTS_BUILD_NETWORK = os.environ.get("MEDALBOARD_AGENTS_BUILD_NETWORK") or "none"
AGENTS_BUILD_REGISTRIES = env_list("MEDALBOARD_AGENTS_BUILD_REGISTRIES",
                                   ["pypi.org", "files.pythonhosted.org", "deb.debian.org"])
AGENTS_BUILD_PIP_INDEX = os.environ.get("MEDALBOARD_AGENTS_BUILD_PIP_INDEX") or ""
AGENTS_BUILD_CA_BUNDLE = os.environ.get("MEDALBOARD_AGENTS_BUILD_CA_BUNDLE") or ""
AGENTS_GIT_MIRROR = os.environ.get("MEDALBOARD_AGENTS_GIT_MIRROR") or ""
AGENTS_BUILD_REGISTRIES_NETWORK = os.environ.get("MEDALBOARD_AGENTS_BUILD_REGISTRIES_NETWORK") or "medalboard-build"
# An agent's wheels.txt is fetched by pip on the building host (runner.agents.wheelhouse), bounded.
AGENTS_MAX_WHEELS_BYTES = env_int("MEDALBOARD_AGENTS_MAX_WHEELS_BYTES", 1024 * 1024 * 1024)
AGENTS_WHEELS_TIMEOUT_S = env_int("MEDALBOARD_AGENTS_WHEELS_TIMEOUT_S", 900)
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
# Larger uploads are spooled here while the request reads them (a request killed meanwhile leaves its
# file, which the orphan sweep deletes after ORPHAN_GRACE_S); beside MEDIA_ROOT, staging them is a rename.
FILE_UPLOAD_TEMP_DIR = os.environ.get("MEDALBOARD_UPLOAD_TEMP_DIR") or str(VAR_DIR / "upload-tmp")  # made at start

# Celery: Redis or RabbitMQ in production; the embedded filesystem broker needs no server.
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL") or "filesystem://"
CELERY_BROKER_TRANSPORT_OPTIONS = (
    {
        "data_folder_in": str(VAR_DIR / "broker" / "queue"),
        "data_folder_out": str(VAR_DIR / "broker" / "queue"),
        "processed_folder": str(VAR_DIR / "broker" / "processed"),
        "control_folder": str(VAR_DIR / "broker" / "control"),
        "store_processed": False,
        # How long a worker sleeps when it finds no message it may take. kombu's default (1 s) also
        # applies after every task (prefetch 1: the next message waits for the ack), which made the
        # embedded broker run about one task a second; a listdir every 50 ms costs next to nothing.
        "polling_interval": env_float("CELERY_BROKER_POLLING_INTERVAL", 0.05),
    }
    if CELERY_BROKER_URL.startswith("filesystem")
    # Redis redelivers an unacknowledged task (its worker died) after the visibility timeout: just
    # above the longest task limit, so a live task is never delivered twice while within its limit.
    # A job task runs longer (its own wall clock) and a redelivery finds it claimed and does nothing.
    else {"visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", env_int("CELERY_TASK_TIME_LIMIT", 3900) + 300)}
)
# The embedded broker publishes atomically and survives a half-written or vanished message file (webapp.broker).
CELERY_BROKER_TRANSPORT = "webapp.broker:Transport" if CELERY_BROKER_URL.startswith("filesystem") else None
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", 3600)
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 3900)

# Runners and jobs (runner/): leases, heartbeats and the sweep that recovers lost work.
RUNNER_HEARTBEAT_S = env_float("MEDALBOARD_RUNNER_HEARTBEAT_S", 10.0)
RUNNER_OFFLINE_AFTER_HEARTBEATS = env_int("MEDALBOARD_RUNNER_OFFLINE_AFTER_HEARTBEATS", 3)
RUNNER_WORK_DIR = Path(os.environ.get("MEDALBOARD_RUNNER_WORK_DIR", VAR_DIR / "runner"))
# Files remote runners upload (runner.api_v1), staged here until their task ends; never served.
RUNNER_UPLOAD_DIR = Path(os.environ.get("MEDALBOARD_RUNNER_UPLOAD_DIR", VAR_DIR / "runner-uploads"))
RUNNER_UPLOAD_CHUNK_BYTES = env_int("MEDALBOARD_RUNNER_UPLOAD_CHUNK_BYTES", 8 << 20)  # one request's most
MAX_TIME_LIMIT_MINUTES = env_float("MEDALBOARD_MAX_TIME_LIMIT_MINUTES", 24 * 60)
MAX_SEEDS = env_int("MEDALBOARD_MAX_SEEDS", 20)
MAX_GPUS = env_int("MEDALBOARD_MAX_GPUS", 8)  # a job's GPU count while no runner has registered yet
# Every claim of work (webapp.leases: job tasks, gradings, upload imports) is a short lease its holder
# renews while it works, so a worker killed mid-work is noticed within about LEASE_S plus a sweep
# interval, whatever the work's time limit. Each kind may be given its own length below.
LEASE_S = env_float("MEDALBOARD_LEASE_S", 60.0)
JOB_LEASE_S = env_float("MEDALBOARD_JOB_LEASE_S", LEASE_S)  # a running task's claim, renewed at every poll
JOB_MAX_ATTEMPTS = env_int("MEDALBOARD_JOB_MAX_ATTEMPTS", 2)
JOB_POLL_S = env_float("MEDALBOARD_JOB_POLL_S", 1.0)
JOB_STOP_GRACE_S = env_float("MEDALBOARD_JOB_STOP_GRACE_S", 5.0)
# How long an agent may go on after the LLM gateway refused it a call for the job's budget (its last
# calls, tokens or cost) before the runner stops the sandbox: time to write a last submission.
JOB_BUDGET_GRACE_S = env_float("MEDALBOARD_JOB_BUDGET_GRACE_S", 5.0)
# What a job's run keeps of its sandbox's folders (runner.host.outputs): a file over the first is stored
# cut, files past the run's total or count are skipped, each with a note on the run.
JOB_OUTPUT_FILE_BYTES = env_int("MEDALBOARD_JOB_OUTPUT_FILE_BYTES", 512 * 1024 * 1024)
JOB_OUTPUT_TOTAL_BYTES = env_int("MEDALBOARD_JOB_OUTPUT_TOTAL_BYTES", 2 * 1024 * 1024 * 1024)
JOB_OUTPUT_MAX_FILES = env_int("MEDALBOARD_JOB_OUTPUT_MAX_FILES", 5000)
# Disk a task's folders may use (runner.host.scratch): a file system of that size when the runner is root
# (JOB_DISK_QUOTA_MOUNT), else measured by the supervisor, which stops the agent past it.
JOB_DISK_QUOTA_BYTES = int(env_float("MEDALBOARD_JOB_DISK_QUOTA_GB", 20.0) * (1 << 30))
JOB_DISK_QUOTA_MOUNT = env_bool("MEDALBOARD_JOB_DISK_QUOTA_MOUNT", True)
# Research tasks (MLAgentBench's layout): where import_research_tasks keeps each task's env/ and its
# private scripts/; the queue a runner computes the starter's baseline from; how long eval.py may take
# in the grading sandbox, how often and how many workspace snapshots a run keeps.
RESEARCH_DIR = Path(os.environ.get("MEDALBOARD_RESEARCH_DIR", VAR_DIR / "research-tasks"))
RESEARCH_BASELINE_QUEUE = os.environ.get("MEDALBOARD_RESEARCH_BASELINE_QUEUE") or "jobs.cpu"
RESEARCH_EVAL_TIME_LIMIT_S = env_float("MEDALBOARD_RESEARCH_EVAL_TIME_LIMIT_S", 600.0)
# A baseline's claim (webapp.leases), renewed while the starter and the eval run; a lost one is computed again
RESEARCH_BASELINE_LEASE_S = env_float("MEDALBOARD_RESEARCH_BASELINE_LEASE_S", LEASE_S)
RESEARCH_BASELINE_MAX_ATTEMPTS = env_int("MEDALBOARD_RESEARCH_BASELINE_MAX_ATTEMPTS", 2)
# How many times the starter runs for a baseline (their mean is the baseline, as MLAgentBench averages its
# Baseline runs): one run's spread can be wider than the 10 % success margin.
RESEARCH_BASELINE_RUNS = env_int("MEDALBOARD_RESEARCH_BASELINE_RUNS", 3)
RESEARCH_SNAPSHOT_EVERY_S = env_float("MEDALBOARD_RESEARCH_SNAPSHOT_EVERY_S", 30.0)
RESEARCH_MAX_SNAPSHOTS = env_int("MEDALBOARD_RESEARCH_MAX_SNAPSHOTS", 50)
# What a research task's starter and eval.py run in (runner.research.environment): MLAgentBench's
# requirements, `light` or `full` (runner/research/requirements/), the same wheels on every backend:
# a venv on the local backend, an image FROM mlebench-env on Docker, built once per requirements hash
# under RESEARCH_ENV_DIR. "none": the agent image's Python on Docker, the runner's own on local (tests).
RESEARCH_ENVIRONMENT = os.environ.get("MEDALBOARD_RESEARCH_ENVIRONMENT") or "light"
if RESEARCH_ENVIRONMENT not in ("light", "full", "none"):
    raise ImproperlyConfigured("MEDALBOARD_RESEARCH_ENVIRONMENT must be light, full or none")
RESEARCH_ENV_DIR = Path(os.environ.get("MEDALBOARD_RESEARCH_ENV_DIR", VAR_DIR / "research-env"))
# The OCI runtime of a Docker runner's sandboxes: runc (Docker's default) or runsc (gVisor).
DOCKER_RUNTIME = os.environ.get("MEDALBOARD_DOCKER_RUNTIME") or "runc"
# Docker networks this runner lets sandboxes join (runner.host.networks); none by default. Never host,
# bridge, default, none or a mode with a colon: those are refused when the runner starts.
SANDBOX_NETWORKS = env_list("MEDALBOARD_SANDBOX_NETWORKS", [])
# Whether a job's runs are private (owner and staff only) when the job does not say; public like an
# upload by default, so a site that publishes its benchmark runs needs no extra step.
JOB_RUNS_PRIVATE_DEFAULT = env_bool("MEDALBOARD_JOB_RUNS_PRIVATE_DEFAULT", False)
# The LLM gateway (runner.gateway): per provider, the base URL its SDK would use, e.g.
# "openai=https://api.openai.com/v1,anthropic=https://api.anthropic.com". A provider not named here
# is not reachable from this runner's sandboxes. LLM_TIMEOUT_S: the longest wait for an upstream's bytes.
LLM_UPSTREAMS = env_upstreams("MEDALBOARD_LLM_UPSTREAMS")
LLM_TIMEOUT_S = env_float("MEDALBOARD_LLM_TIMEOUT_S", 600.0)
GRADING_LEASE_S = env_float("MEDALBOARD_GRADING_LEASE_S", LEASE_S)  # renewed every third of it while grading
GRADING_MAX_ATTEMPTS = env_int("MEDALBOARD_GRADING_MAX_ATTEMPTS", 3)
STALE_PENDING_S = env_float("MEDALBOARD_STALE_PENDING_S", 300.0)  # a pending run not picked up by then is re-queued
# A pending run waiting this long says so on its progress page: its task may have been lost.
GRADING_STUCK_AFTER_S = env_float("MEDALBOARD_GRADING_STUCK_AFTER_S", 120.0)
SWEEP_INTERVAL_S = env_float("MEDALBOARD_SWEEP_INTERVAL_S", 30.0)
# Uploads (leaderboard.runs.intake): the request stages the files and a worker imports them under these
# limits; the request waits up to INTAKE_WAIT_S for the outcome before answering "202: still importing".
INTAKE_TIME_LIMIT_S = env_float("MEDALBOARD_INTAKE_TIME_LIMIT_S", 600.0)  # soft limit; the hard one is 30 s later
INTAKE_LEASE_S = env_float("MEDALBOARD_INTAKE_LEASE_S", LEASE_S)  # renewed every third of it while importing
INTAKE_MAX_ATTEMPTS = env_int("MEDALBOARD_INTAKE_MAX_ATTEMPTS", 2)
INTAKE_WAIT_S = env_float("MEDALBOARD_INTAKE_WAIT_S", 0.25)  # a sync web worker that waits serves nobody
# Import inside the request instead (the test suite; a site with no worker at all). Not for a public site.
INTAKE_IN_REQUEST = env_bool("MEDALBOARD_INTAKE_IN_REQUEST", False)
# Files in artifact storage that no row names (a request killed mid-upload) and stale scratch folders
# are deleted once older than this, at most once per interval (leaderboard.runs.orphans).
ORPHAN_GRACE_S = env_float("MEDALBOARD_ORPHAN_GRACE_S", 24 * 3600.0)
ORPHAN_SWEEP_INTERVAL_S = env_int("MEDALBOARD_ORPHAN_SWEEP_INTERVAL_S", 3600)

REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticatedOrReadOnly"],
    "DEFAULT_PAGINATION_CLASS": "leaderboard.api.pagination.BoundedLimitOffsetPagination",
    # JSON bodies bounded in size, depth and number range (webapp.parsers); forms and uploads as DRF has them.
    "DEFAULT_PARSER_CLASSES": [
        "webapp.parsers.BoundedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "PAGE_SIZE": 100,
    # Requests per client (anonymous: by address; users: by account); counted in the cache below.
    "DEFAULT_THROTTLE_CLASSES": [
        "rest_framework.throttling.AnonRateThrottle",
        "rest_framework.throttling.UserRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "anon": os.environ.get("MEDALBOARD_API_RATE_ANON") or "120/min",
        "user": os.environ.get("MEDALBOARD_API_RATE_USER") or "600/min",
        "uploads": os.environ.get("MEDALBOARD_API_RATE_UPLOADS") or "30/hour",
    },
}
# Failed logins per account within the window before the login form refuses (leaderboard.web.login_throttle).
LOGIN_FAILURES_ALLOWED = env_int("MEDALBOARD_LOGIN_FAILURES_ALLOWED", 5)
LOGIN_THROTTLE_SECONDS = env_int("MEDALBOARD_LOGIN_THROTTLE_SECONDS", 15 * 60)
# Sent with every page (webapp.middleware): scripts only from this site, no inline scripts or handlers.
# Styles allow inline attributes, which Plotly sets on the charts it draws; images may come from HTTPS
# hosts (competition descriptions show Kaggle's; whether they load unasked is the page's choice).
CONTENT_SECURITY_POLICY = os.environ.get("MEDALBOARD_CONTENT_SECURITY_POLICY") or (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob: https:; "
    "font-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; "
    "frame-ancestors 'none'"
)
# Graded uploads per user, per competition, per UTC day (leaderboard.runs.quotas): Kaggle's usual 5.
DAILY_GRADING_QUOTA = env_int("MEDALBOARD_DAILY_GRADING_QUOTA", 5)
# Throttle counters and cached counts. One process keeps its own by default; with several gunicorn
# workers or hosts set MEDALBOARD_CACHE_URL=redis://... so limits hold across them.
# The cache is optional at run time: while Redis is unreachable, reads miss and writes are dropped
# (webapp.cache, logged and counted), throttles fail open, and each call gives up within the timeout.
if os.environ.get("MEDALBOARD_CACHE_URL"):
    CACHES = {"default": {"BACKEND": "webapp.cache.FailSafeRedisCache",
                          "LOCATION": os.environ["MEDALBOARD_CACHE_URL"],
                          "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5}}}
# Rule checks over every run (leaderboard.trust, docs/trust.md). A run may end this long past its time
# limit before it counts as an overrun (the runner's stop grace, clocks); 1% of the limit if larger.
TRUST_TIME_LIMIT_GRACE_S = env_float("MEDALBOARD_TRUST_TIME_LIMIT_GRACE_S", 60.0)
# The optional LLM judge (MLE-bench's rule-violation questions), off unless a model is named. It calls
# an OpenAI-compatible chat API, meant to be an LLM gateway's (`http://host:port/openai/v1`), with a token.
TRUST_JUDGE_MODEL = os.environ.get("MEDALBOARD_TRUST_JUDGE_MODEL", "").strip()
TRUST_JUDGE_URL = os.environ.get("MEDALBOARD_TRUST_JUDGE_URL", "").strip().rstrip("/")
TRUST_JUDGE_TOKEN = os.environ.get("MEDALBOARD_TRUST_JUDGE_TOKEN", "")
TRUST_JUDGE_TIMEOUT_S = env_float("MEDALBOARD_TRUST_JUDGE_TIMEOUT_S", 120.0)
TRUST_JUDGE_MAX_CHARS = env_int("MEDALBOARD_TRUST_JUDGE_MAX_CHARS", 128_000)  # of log or code per question
# The optional LLM summary of a selection of runs (leaderboard.questions.summaries) asks the judge's
# model; each user may ask this many per hour, of at most this many runs each.
SUMMARY_PER_HOUR = env_int("MEDALBOARD_SUMMARY_PER_HOUR", 10)
SUMMARY_MAX_RUNS = env_int("MEDALBOARD_SUMMARY_MAX_RUNS", 40)

SPECTACULAR_SETTINGS = {
    "TITLE": "Medalboard API",
    "DESCRIPTION": "Competitions, runs, grading and trajectories of ML-engineering agents.\n\n"
                   "[← Back to Medalboard](/) · [Runs](/runs/) · [Competitions](/competitions/) · "
                   "[Upload a run](/runs/upload/) · [Your API token](/account/token/)",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # The disclosure fields and filters share their choices (leaderboard.api.runs): one name each; findings
    # have a `status` of their own (open, confirmed, dismissed), beside runs' and jobs'.
    "ENUM_NAME_OVERRIDES": {"DisclosureEnum": ["yes", "no"], "DisclosureFilterEnum": ["yes", "no", "unknown"],
                            "FindingStatusEnum": "leaderboard.trust.models.Finding.Status",
                            "QuestionKindEnum": "leaderboard.questions.models.SavedQuestion.Kind",
                            "CompetitionKindEnum": "leaderboard.models.Competition.Kind"},
}

if not DEBUG:
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31536000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", True)
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
}
