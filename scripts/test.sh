#!/usr/bin/env bash
# `make test`: the whole suite, in three parts (README.md, "Tests").
#   1. every test not marked `serial`, on TEST_WORKERS pytest-xdist workers (each with its own database,
#      broker and folders: webapp/test_environment.py);
#   2. beside it, once its workers have collected, the other `serial` tests (every Docker test, and those
#      sharing a machine-wide resource), one at a time in a session of their own (its own database and folders
#      too): they mostly wait on containers, runners and time limits, not on the cores. Their output is kept
#      in var/test-serial.log and printed when part 1 ends;
#   3. after both, the tests marked `alone` (they time themselves, or start a parallel session of their own),
#      one at a time, on a machine the rest no longer loads.
# TEST_WORKERS=0 runs part 1 in one process, and then parts 2 and 3 after it, never beside it. PYTEST_ARGS is
# passed to every part, as the shell would parse it. Exit status: the first part's failure, else the
# others'; 5 (no test collected) only when no part had a test.
set -u
BIN="${BIN:-.venv/bin}"
WORKERS="${TEST_WORKERS:-2}"
eval "set -- ${PYTEST_ARGS:-}"
unset PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX="${PYTHONPYCACHEPREFIX:-$PWD/var/pycache}"
mkdir -p var
list=var/serial-files.txt  # written by part 1's collection (tests/conftest.py): the files holding serial tests
serial_log=var/test-serial.log
rm -f "$list" "$serial_log"

serial_part() {  # serial_part MARKERS [PYTEST ARGS]: the serial tests of the listed files (all, with no list)
  local markers=$1
  shift
  if [ -f "$list" ] && [ ! -s "$list" ]; then return 5; fi
  # shellcheck disable=SC2046 # one argument per listed file
  "$BIN/pytest" -m "$markers" "$@" $(cat "$list" 2>/dev/null)
}

[ "$WORKERS" != 0 ] && echo "The serial tests run beside the parallel part, one at a time; their output follows its own."
# worksteal: a worker that runs out of tests takes half of another's queue. With xdist's default (load), the
# last chunk sent to a worker (dozens of tests, the live-server ones of tests/web among them) ran on it alone
# while the other worker sat idle for minutes.
MEDALBOARD_SERIAL_FILES="$list" "$BIN/pytest" -n "$WORKERS" --dist worksteal -m "not serial" "$@" &
parallel=$!
beside=""
if [ "$WORKERS" != 0 ]; then
  while [ ! -f "$list" ] && kill -0 "$parallel" 2>/dev/null; do sleep 1; done
  (serial_part "serial and not alone" "$@" >"$serial_log" 2>&1) &
  beside=$!
fi
rc=0; wait "$parallel" || rc=$?
d=0
if [ -n "$beside" ]; then
  wait "$beside" || d=$?
  echo "---- the serial tests, run beside the parallel part ($serial_log) ----"
  cat "$serial_log"
else
  serial_part "serial and not alone" "$@" || d=$?
fi
s=0; serial_part "alone" "$@" || s=$?

status=5
for code in "$rc" "$d" "$s"; do
  if [ "$code" -ne 5 ] && { [ "$status" -eq 5 ] || [ "$status" -eq 0 ]; }; then status=$code; fi
done
exit "$status"
