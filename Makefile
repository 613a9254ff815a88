# The two commands: `make run` (site + worker on embedded defaults, with demo content) and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test install lint bench

# The read-only data is ../shared; a clone of a local checkout (git clone /work/main /tmp/x) reads the
# shared/ beside the checkout it came from, unless MEDALBOARD_SHARED_DIR says otherwise.
ifeq ($(wildcard ../shared)$(MEDALBOARD_SHARED_DIR),)
ORIGIN_SHARED := $(shell d=$$(git config --get remote.origin.url 2>/dev/null | sed 's|^file://||'); [ -n "$$d" ] && cd "$$(dirname "$$d")/shared" 2>/dev/null && pwd)
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

test: $(STAMP)
	$(BIN)/pytest $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .

bench: $(STAMP)
	for b in benchmarks/*.py; do DEBUG=true $(BIN)/python $$b || exit 1; done
