"""Settings of a remote runner's process: the site's URL, a token, a work and a cache folder, the
upstreams its LLM gateway may reach, and nothing else. The database backend is Django's dummy one,
so any query raises; there is no SECRET_KEY of the site's (a random one, for Django's own needs) and
no broker."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from runner.gateway.config import parse_upstreams

BASE_DIR = Path(__file__).resolve().parents[2]
SECRET_KEY = secrets.token_urlsafe(50)  # the process's own; signs nothing of the site's
DEBUG = False
INSTALLED_APPS = ["runner.remote"]
DATABASES = {"default": {"ENGINE": "django.db.backends.dummy"}}
USE_TZ = True
LOGGING_CONFIG = None

SITE_URL = os.environ.get("MEDALBOARD_SITE_URL", "")
RUNNER_TOKEN = os.environ.get("MEDALBOARD_RUNNER_TOKEN", "")
RUNNER_WORK_DIR = Path(os.environ.get("MEDALBOARD_RUNNER_WORK_DIR", BASE_DIR / "var" / "remote-runner"))
RUNNER_CACHE_DIR = Path(os.environ.get("MEDALBOARD_RUNNER_CACHE_DIR", RUNNER_WORK_DIR / "cache"))
# a research task's environment (runner.research.environment), built here when the site names one
RESEARCH_ENV_DIR = Path(os.environ.get("MEDALBOARD_RESEARCH_ENV_DIR", RUNNER_CACHE_DIR / "research-env"))
RUNNER_SLOTS = os.environ.get("MEDALBOARD_RUNNER_SLOTS", "1")  # tasks at once; checked by the command (1 to 64)
RUNNER_PREPARED_DATA_DIR = os.environ.get("MEDALBOARD_RUNNER_DATA_DIR", "")  # MLE-bench's prepared data, if here
DOCKER_RUNTIME = os.environ.get("MEDALBOARD_DOCKER_RUNTIME", "runc")
LOST_SITE_S = float(os.environ.get("MEDALBOARD_RUNNER_LOST_SITE_S", "300"))
# A task's disk quota as a file system of its size (runner.host.scratch; needs root and mkfs.ext4), if this
# runner's operator asks for it; else measured at every check, the agent stopped past it.
JOB_DISK_QUOTA_MOUNT = os.environ.get("MEDALBOARD_JOB_DISK_QUOTA_MOUNT", "").lower() in ("1", "true", "yes", "on")
SANDBOX_NETWORKS: list[str] = []
# The LLM gateway's upstreams are this runner operator's to name, as on a Celery runner
# (docs/gateway.md); the keys come with each job's claim and stay in the runner's memory.
_UPSTREAMS = os.environ.get("MEDALBOARD_LLM_UPSTREAMS", "")
LLM_UPSTREAMS = parse_upstreams("MEDALBOARD_LLM_UPSTREAMS", [item for item in _UPSTREAMS.split(",") if item.strip()])
LLM_TIMEOUT_S = float(os.environ.get("MEDALBOARD_LLM_TIMEOUT_S", "600"))

# MLE-bench-packaged agents (runner.remote.agents) are built on this runner's Docker host: the same
# settings as the site's (webapp/settings.py), set by this runner's operator.
MEDALBOARD_AGENT_IMAGE = os.environ.get("MEDALBOARD_AGENT_IMAGE") or "medalboard-agent:bookworm"
AGENTS_ALLOW_PRIVILEGED = os.environ.get("MEDALBOARD_AGENTS_ALLOW_PRIVILEGED", "").lower() in ("1", "true", "yes", "on")
AGENTS_MAX_FOLDER_BYTES = int(os.environ.get("MEDALBOARD_AGENTS_MAX_FOLDER_BYTES") or 256 * 1024 * 1024)
AGENTS_MAX_FILES = int(os.environ.get("MEDALBOARD_AGENTS_MAX_FILES") or 20_000)
AGENTS_BUILD_NETWORK = os.environ.get("MEDALBOARD_AGENTS_BUILD_NETWORK") or "none"
_REGISTRIES = os.environ.get("MEDALBOARD_AGENTS_BUILD_REGISTRIES") or "pypi.org,files.pythonhosted.org,deb.debian.org"
AGENTS_BUILD_REGISTRIES = [host.strip() for host in _REGISTRIES.split(",") if host.strip()]
AGENTS_BUILD_PIP_INDEX = os.environ.get("MEDALBOARD_AGENTS_BUILD_PIP_INDEX") or ""
AGENTS_BUILD_CA_BUNDLE = os.environ.get("MEDALBOARD_AGENTS_BUILD_CA_BUNDLE") or ""
AGENTS_GIT_MIRROR = os.environ.get("MEDALBOARD_AGENTS_GIT_MIRROR") or ""
AGENTS_BUILD_REGISTRIES_NETWORK = os.environ.get("MEDALBOARD_AGENTS_BUILD_REGISTRIES_NETWORK") or "medalboard-build"
AGENTS_MAX_WHEELS_BYTES = int(os.environ.get("MEDALBOARD_AGENTS_MAX_WHEELS_BYTES") or 1024 * 1024 * 1024)
AGENTS_WHEELS_TIMEOUT_S = int(os.environ.get("MEDALBOARD_AGENTS_WHEELS_TIMEOUT_S") or 900)
