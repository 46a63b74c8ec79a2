# Two commands on a fresh machine: `make run` (the main job) and `make test`.
# Both create .venv and install negagraph into it the first time.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: run test lint bench clean browser

# setup.py builds the C parts (solver/_native.c, solver/chance/_sweep.c,
# solver/tiers/_lookup.c, solver/games/_connect_four.c, db/_sqlite_bulk.c) in place.
$(STAMP): pyproject.toml setup.py solver/_native.c solver/chance/_sweep.c solver/tiers/_lookup.c solver/games/_connect_four.c solver/int64_buffer.h db/_sqlite_bulk.c
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

# Solves connect-four 4x4 into the SQLite default (negagraph.db; run again: nothing left
# to do), then shows what the database holds and the best moves from the start.
run: $(STAMP)
	$(BIN)/negagraph solve connect-four -p width=4 -p height=4 --full
	$(BIN)/negagraph status
	$(BIN)/negagraph query connect-four -p width=4 -p height=4 ..../..../..../....

# The suite runs on every core (pytest-xdist: a worker process a core, each taking
# tests as it frees up). It starts `negagraph` some 400 times: the byte code of our own
# packages is compiled once first, as pip does for installed packages, since where
# PYTHONDONTWRITEBYTECODE is set every start compiled them anew (0.2 s of its 0.9).
# `.venv/bin/pytest tests/api` runs a part of the suite, in one process.
test: $(STAMP) browser
	$(BIN)/python -m compileall -q solver db api migrations bench
	$(BIN)/pytest -n auto --dist worksteal

# The explorer's tests (tests/explorer) drive Debian's headless Chromium; install it when
# missing (they fail, never skip, without it).
browser:
	command -v chromium >/dev/null && command -v chromedriver >/dev/null || \
		(apt-get update && apt-get install -y chromium chromium-driver)

# Style and types: ruff's lint rules and formatting, mypy --strict and pyright (both
# configured in pyproject.toml, over the packages and the tests).
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/pyright

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache .mypy_cache solver/*.so \
		solver/chance/*.so solver/tiers/*.so solver/games/*.so db/*.so
