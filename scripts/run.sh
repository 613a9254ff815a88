#!/usr/bin/env bash
# Runs the whole product on one machine with embedded defaults: SQLite, the filesystem Celery broker,
# the local execution backend. Imports the catalogue and demo content, then serves the site on
# 127.0.0.1:8000 with a Celery worker beside it. Ctrl-C stops both.
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBUG="${DEBUG:-true}"
export DJANGO_SETTINGS_MODULE="${DJANGO_SETTINGS_MODULE:-webapp.settings}"
PY=.venv/bin/python
mkdir -p "${MEDALBOARD_VAR_DIR:-var}"
$PY manage.py migrate --noinput -v0
$PY manage.py import_competitions
if $PY manage.py help seed_demo >/dev/null 2>&1; then $PY manage.py seed_demo; fi
.venv/bin/celery -A webapp worker --loglevel=INFO --concurrency=2 >"${MEDALBOARD_VAR_DIR:-var}/worker.log" 2>&1 &
WORKER=$!
trap 'kill $WORKER 2>/dev/null || true' EXIT INT TERM
echo "Celery worker started (pid $WORKER, log ${MEDALBOARD_VAR_DIR:-var}/worker.log)"
echo "Medalboard on http://127.0.0.1:${PORT:-8000}/"
$PY manage.py runserver "127.0.0.1:${PORT:-8000}"
