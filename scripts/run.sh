#!/usr/bin/env bash
# Runs the whole product on one machine with embedded defaults: SQLite, the filesystem Celery broker,
# the local execution backend. Imports the catalogue and demo content, then serves the site on
# 127.0.0.1:8000 with two local-backend runners beside it: the loopback runner, a client of the site
# over 127.0.0.1 through the runner API (`manage.py runner --site URL`, as a machine elsewhere runs it,
# with a token made here and never printed), which takes every job task; and a Celery worker, the
# site's own worker (grading, research baselines and evals, sweeps), which takes no job. Ctrl-C or SIGTERM
# stops everything it started within RUN_STOP_GRACE_S (default 10) seconds.
#
# MEDALBOARD_RUN_SKIP_CONTENT=1 skips the imports (an existing var/ already has them, or a test that
# only needs the processes); MEDALBOARD_PYTHON names another interpreter than .venv's;
# MEDALBOARD_RUNNER_NAME the loopback runner's name (default local-<host>; the Celery one adds -celery).
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBUG="${DEBUG:-true}"
export DJANGO_SETTINGS_MODULE="${DJANGO_SETTINGS_MODULE:-webapp.settings}"
# A personal site: every account made here may submit jobs to the local runner (off by default elsewhere).
export MEDALBOARD_NEW_USERS_CAN_SUBMIT_JOBS="${MEDALBOARD_NEW_USERS_CAN_SUBMIT_JOBS:-true}"
PY="${MEDALBOARD_PYTHON:-.venv/bin/python}"
GRACE="${RUN_STOP_GRACE_S:-10}"
VAR="${MEDALBOARD_VAR_DIR:-var}"
SITE="http://127.0.0.1:${PORT:-8000}"
NAME="${MEDALBOARD_RUNNER_NAME:-local-$(hostname)}"
mkdir -p "$VAR"
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
RUNNER="" LOOPBACK="" SERVER="" STOPPED=""
stop_all() {
  [ -z "$STOPPED" ] || return 0
  STOPPED=1
  # The Celery runner stops its worker (Celery's warm shutdown: running tasks may finish); the loopback
  # runner takes no new task (one it runs is stopped by the KILL below); runserver's whole group.
  [ -z "$RUNNER" ] || kill -TERM "$RUNNER" 2>/dev/null || true
  [ -z "$LOOPBACK" ] || kill -TERM "$LOOPBACK" 2>/dev/null || true
  [ -z "$SERVER" ] || kill -TERM -- "-$SERVER" 2>/dev/null || true
  local deadline=$((SECONDS + GRACE)) group
  for group in $RUNNER $LOOPBACK $SERVER; do
    while kill -0 -- "-$group" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.2; done
    kill -KILL -- "-$group" 2>/dev/null || true  # what is left after the grace period
  done
  # Agents run by the local backend have sessions of their own: stop those whose runner is gone (each
  # runner's, as its backend marks them: the Celery runner's for this database, the loopback's for its URL).
  "$PY" -c 'import sys
from runner.backends.local import LocalBackend
from runner.remote.serve import site_key
LocalBackend(runner_name=sys.argv[1] + "-celery").remove_stale()
LocalBackend(runner_name=sys.argv[1], site=site_key(sys.argv[2])).remove_stale()' "$NAME" "$SITE" || true
  echo "Stopped the site and the local runners."
}
trap 'stop_all' EXIT
trap 'stop_all; exit 130' INT
trap 'stop_all; exit 143' TERM

# The Celery runner: a Celery worker for grading (celery) and research starters' baselines and traces'
# scoring (jobs.cpu by default), with the recovery sweep and a heartbeat; no job task is ever sent to it
# (jobs run only on runners attached by URL and token: the loopback runner below).
"${IN_OWN_GROUP[@]}" "$PY" manage.py runner --backend local --name "$NAME-celery" \
  --concurrency 2 --loglevel INFO >"$VAR/worker.log" 2>&1 &
RUNNER=$!
echo "Celery runner $NAME-celery started (pid $RUNNER, log $VAR/worker.log)"
echo "Medalboard on $SITE/"
"${IN_OWN_GROUP[@]}" "$PY" manage.py runserver "127.0.0.1:${PORT:-8000}" &
SERVER=$!

# The loopback runner: `manage.py runner --site` on the local backend, a client of this site through the
# runner API, as a machine in another network would be (runner.remote.settings: no database, none of
# the site's secrets; those are also left out of its environment). Its token is made anew each start
# (the last one stops working), written to a 0600 file and handed over in its environment, never on a
# command line or in a log. It takes every job task. It starts
# once the site's port is open (started earlier, its first calls would meet a closed port and wait out
# the client's growing backoff), in the background: the site is not kept waiting for the token.
# One process group from the start (its token command and its wait included), which the stop reaches whole.
loopback_runner() {
  set -eu
  local py="$1" var="$2" name="$3" site="$4" port="$5"
  "$py" manage.py create_runner "$name" --token-file "$var/loopback-runner.token" >/dev/null
  until (: <"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do sleep 0.2; done
  # Exported, never an argument: a process's arguments are readable by every user, its environment not.
  MEDALBOARD_RUNNER_TOKEN="$(cat "$var/loopback-runner.token")"
  export MEDALBOARD_RUNNER_TOKEN
  exec env -u DATABASE_URL -u SECRET_KEY -u MEDALBOARD_SECRETS_KEY -u CELERY_BROKER_URL \
    DJANGO_SETTINGS_MODULE=runner.remote.settings MEDALBOARD_SITE_URL="$site" \
    NO_PROXY="127.0.0.1,localhost${NO_PROXY:+,$NO_PROXY}" MEDALBOARD_RUNNER_WORK_DIR="$var/loopback-runner" \
    "$py" manage.py runner --backend local --name "$name"
}
export -f loopback_runner
"${IN_OWN_GROUP[@]}" bash -c 'loopback_runner "$@"' loopback-runner "$PY" "$VAR" "$NAME" "$SITE" "${PORT:-8000}" \
  >"$VAR/loopback-runner.log" 2>&1 &
LOOPBACK=$!
echo "Loopback runner $NAME started (pid $LOOPBACK, log $VAR/loopback-runner.log)"
# `wait` returns as soon as a trapped signal arrives (a foreground child would delay the trap until it exited).
wait "$SERVER"
