# Almanac's two front doors: `make run` (the main job on embedded defaults) and `make test`.
# Both bootstrap a virtual environment from the pinned lock file on first use.
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin
UV_VERSION := 0.13.9

.PHONY: install run test lint
install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml requirements.lock
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q uv==$(UV_VERSION)
	$(BIN)/uv pip install -q --python $(BIN)/python -r requirements.lock
	$(BIN)/uv pip install -q --python $(BIN)/python --no-deps -e .
	touch $@

run: install
	$(BIN)/almanac dev

lint: install
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/mypy timecontract ledger activities workflows almanac devtools worker.py

test: lint
	$(BIN)/python -m pytest
