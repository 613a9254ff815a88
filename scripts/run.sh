#!/usr/bin/env bash
# Runs the whole product on one machine with embedded defaults: SQLite, the filesystem Celery broker,
# the local execution backend. Imports the catalogue and demo content, then serves the site on
# 127.0.0.1:8000 with a local-backend runner (a Celery worker) beside it. Ctrl-C or SIGTERM stops
# everything it started within RUN_STOP_GRACE_S (default 10) seconds.
#
# MEDALBOARD_RUN_SKIP_CONTENT=1 skips the imports (an existing var/ already has them, or a test that
# only needs the processes); MEDALBOARD_PYTHON names another interpreter than .venv's;
# MEDALBOARD_RUNNER_NAME the runner's name (default local-<host>).
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBUG="${DEBUG:-true}"
export DJANGO_SETTINGS_MODULE="${DJANGO_SETTINGS_MODULE:-webapp.settings}"
# A personal site: every account made here may submit jobs to the local runner (off by default elsewhere).
export MEDALBOARD_NEW_USERS_CAN_SUBMIT_JOBS="${MEDALBOARD_NEW_USERS_CAN_SUBMIT_JOBS:-true}"
PY="${MEDALBOARD_PYTHON:-.venv/bin/python}"
GRACE="${RUN_STOP_GRACE_S:-10}"
mkdir -p "${MEDALBOARD_VAR_DIR:-var}"
$PY manage.py migrate --noinput -v0
import_content() {
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
}
[ "${MEDALBOARD_RUN_SKIP_CONTENT:-}" = 1 ] || import_content

# Each long-lived child runs in a session (and process group) of its own, so that stopping reaches
# everything it started (the runner's Celery worker and its pool, runserver's reloaded child), and a
# Ctrl-C in the terminal reaches them only through stop_all, in order. Python's os.setsid: no setsid(1)
# needed.
IN_OWN_GROUP=("$PY" -c 'import os, sys; os.setsid(); os.execvp(sys.argv[1], sys.argv[1:])')
RUNNER="" SERVER="" STOPPED=""
stop_all() {
  [ -z "$STOPPED" ] || return 0
  STOPPED=1
  # The runner stops its worker (Celery's warm shutdown: running tasks may finish); runserver's whole group.
  [ -z "$RUNNER" ] || kill -TERM "$RUNNER" 2>/dev/null || true
  [ -z "$SERVER" ] || kill -TERM -- "-$SERVER" 2>/dev/null || true
  local deadline=$((SECONDS + GRACE)) group
  for group in $RUNNER $SERVER; do
    while kill -0 -- "-$group" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.2; done
    kill -KILL -- "-$group" 2>/dev/null || true  # what is left after the grace period
  done
  # Agents run by the local backend have sessions of their own: stop those whose runner is gone.
  "$PY" -c 'from runner.backends.local import LocalBackend; LocalBackend().remove_stale()' || true
  echo "Stopped the site and the local runner."
}
trap 'stop_all' EXIT
trap 'stop_all; exit 130' INT
trap 'stop_all; exit 143' TERM

# One local-backend runner: a Celery worker for job tasks (jobs.cpu) and grading (celery), with the
# recovery sweep and a heartbeat. It runs agents as subprocesses: trusted agents only (see README).
"${IN_OWN_GROUP[@]}" "$PY" manage.py runner --backend local --name "${MEDALBOARD_RUNNER_NAME:-local-$(hostname)}" \
  --concurrency 2 --loglevel INFO >"${MEDALBOARD_VAR_DIR:-var}/worker.log" 2>&1 &
RUNNER=$!
echo "Local runner started (pid $RUNNER, log ${MEDALBOARD_VAR_DIR:-var}/worker.log)"
echo "Medalboard on http://127.0.0.1:${PORT:-8000}/"
"${IN_OWN_GROUP[@]}" "$PY" manage.py runserver "127.0.0.1:${PORT:-8000}" &
SERVER=$!
# `wait` returns as soon as a trapped signal arrives (a foreground child would delay the trap until it exited).
wait "$SERVER"
