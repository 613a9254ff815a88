# The two commands: `make run` (site + worker on embedded defaults, with demo content) and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test install lint format types bench

# The read-only data is ../shared; a clone of a local checkout (git clone /work/main /tmp/x) reads the
# shared/ beside the checkout it came from, unless MEDALBOARD_SHARED_DIR says otherwise.
ifeq ($(wildcard ../shared)$(MEDALBOARD_SHARED_DIR),)
ORIGIN_SHARED := $(shell d=$$(git config --get remote.origin.url 2>/dev/null | sed 's|^file://||'); [ -n "$$d" ] && cd "$$d/../shared" 2>/dev/null && pwd)
ifneq ($(ORIGIN_SHARED),)
export MEDALBOARD_SHARED_DIR := $(ORIGIN_SHARED)
endif
endif

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	scripts/run.sh

# `make test` runs the suite (scripts/test.sh): the tests not marked `serial` on TEST_WORKERS parallel
# workers (pytest-xdist; each has its own test database, broker and folders: webapp/test_environment.py),
# beside them the tests marked `serial` (Docker's, and those sharing a machine-wide resource) one at a
# time, then those marked `alone` (they time themselves) one at a time with nothing beside them. TEST_WORKERS=0 runs everything in one process
# after another. The parallel part writes the files that hold serial tests (var/serial-files.txt,
# tests/conftest.py): the serial parts collect only those (no list, as after a crash: they collect everything).
TEST_WORKERS ?= $(shell n=$$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1); [ "$$n" -gt 8 ] && n=8; echo $$n)
export PYTEST_ARGS

# Bytecode is written even where PYTHONDONTWRITEBYTECODE is set (else the controller and every worker
# compile each module and rewrite each test module's asserts again), into var/pycache/ rather than
# beside the sources, so that no folder a test builds or copies gains a __pycache__/ (scripts/test.sh).
test: $(STAMP)
	@BIN=$(BIN) TEST_WORKERS=$(TEST_WORKERS) scripts/test.sh

# The checks CI runs before the tests (CONTRIBUTING.md): `make lint` (ruff's rules over every file, and
# the formatter over the Python files added since the formatting rule began) and `make types` (mypy over
# the packages in pyproject's [tool.mypy] files). `make format` formats those new files.
lint: $(STAMP)
	$(BIN)/ruff check .
	RUFF=$(BIN)/ruff scripts/format_new_files.sh --check

format: $(STAMP)
	RUFF=$(BIN)/ruff scripts/format_new_files.sh

types: $(STAMP)
	DEBUG=true $(BIN)/mypy

bench: $(STAMP)
	for b in benchmarks/*.py; do DEBUG=true $(BIN)/python $$b || exit 1; done
