# Almanac's two front doors: `make run` (the main job on embedded defaults) and `make test`.
# Both bootstrap a virtual environment from the pinned lock file on first use.
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin
UV_VERSION := 0.13.9

.PHONY: install run test lint
install: $(VENV)/.installed

# The first install takes a minute or two: say what each step does, and let uv show its progress
# (packages resolved, downloaded, installed) for the big one. Bytecode is compiled once, as its own
# step: uv writes no .pyc by default, so every command would compile temporalio, pydantic and
# SQLAlchemy again until a run wrote them (never, under PYTHONDONTWRITEBYTECODE=1): 2.0 s for
# `almanac disable` instead of 0.7 s in a trial. It takes the better part of a minute and prints
# nothing (uv's --compile-bytecode is as quiet), hence the step line before it.
$(VENV)/.installed: pyproject.toml requirements.lock
	@echo "almanac: installing into $(VENV) from the lock file (first run only; a minute or two)"
	@echo "almanac: [1/5] creating the virtual environment with $(PYTHON)"
	$(PYTHON) -m venv $(VENV)
	@echo "almanac: [2/5] installing uv $(UV_VERSION)"
	$(BIN)/python -m pip install -q uv==$(UV_VERSION)
	@echo "almanac: [3/5] installing the pinned dependencies (requirements.lock)"
	$(BIN)/uv pip install --python $(BIN)/python -r requirements.lock
	@echo "almanac: [4/5] compiling the dependencies' bytecode, once (up to a minute, no output)"
	$(BIN)/python -m compileall -q -j 0 "$$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')"
	@echo "almanac: [5/5] installing almanac itself (editable)"
	$(BIN)/uv pip install -q --python $(BIN)/python --no-deps -e .
	touch $@
	@echo "almanac: installed; the command line is $(BIN)/almanac"

run: install
	$(BIN)/almanac dev

lint: install
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/mypy lifecycle timecontract ledger activities workflows almanac worker.py

test: lint
	$(BIN)/python -m pytest
