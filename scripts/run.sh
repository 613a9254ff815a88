#!/usr/bin/env bash
# Runs the whole product on one machine with embedded defaults: SQLite, the filesystem Celery broker,
# the local execution backend. Imports the catalogue and demo content, then serves the site on
# 127.0.0.1:8000 with a local-backend runner (a Celery worker) beside it. Ctrl-C stops both.
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBUG="${DEBUG:-true}"
export DJANGO_SETTINGS_MODULE="${DJANGO_SETTINGS_MODULE:-webapp.settings}"
# A personal site: every account made here may submit jobs to the local runner (off by default elsewhere).
export MEDALBOARD_NEW_USERS_CAN_SUBMIT_JOBS="${MEDALBOARD_NEW_USERS_CAN_SUBMIT_JOBS:-true}"
PY=.venv/bin/python
mkdir -p "${MEDALBOARD_VAR_DIR:-var}"
$PY manage.py migrate --noinput -v0
$PY manage.py import_competitions
if $PY manage.py help seed_demo >/dev/null 2>&1; then $PY manage.py seed_demo; fi
if $PY manage.py help make_smoke_competitions >/dev/null 2>&1; then $PY manage.py make_smoke_competitions; fi
# Research tasks in MLAgentBench's layout from scikit-learn's data; tasks.json says whose metric is lower-is-better.
if $PY manage.py help import_research_tasks >/dev/null 2>&1; then
  RESEARCH="${MEDALBOARD_VAR_DIR:-var}/research"
  $PY manage.py make_research_tasks "$RESEARCH"
  LOWER=$($PY -c 'import json, sys; print(" ".join("--lower-is-better=" + t["id"] for t in
    json.load(open(sys.argv[1]))["tasks"] if t["lower_is_better"]))' "$RESEARCH/tasks.json")
  # shellcheck disable=SC2086 # one word per flag
  $PY manage.py import_research_tasks "$RESEARCH" $LOWER
fi
# One local-backend runner: a Celery worker for job tasks (jobs.cpu) and grading (celery), with the
# recovery sweep and a heartbeat. It runs agents as subprocesses: trusted agents only (see README).
$PY manage.py runner --backend local --name "local-$(hostname)" --concurrency 2 --loglevel INFO \
  >"${MEDALBOARD_VAR_DIR:-var}/worker.log" 2>&1 &
WORKER=$!
trap 'kill $WORKER 2>/dev/null || true' EXIT INT TERM
echo "Local runner started (pid $WORKER, log ${MEDALBOARD_VAR_DIR:-var}/worker.log)"
echo "Medalboard on http://127.0.0.1:${PORT:-8000}/"
$PY manage.py runserver "127.0.0.1:${PORT:-8000}"
