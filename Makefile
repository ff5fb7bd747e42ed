# Two commands do everything on a fresh machine (see README.md):
#   make demo   -- the offline demo; installs cogeval and its runtime dependencies only (`pip install -e .`)
#   make test   -- lint (ruff, mypy), then the test suite in parallel and random order (what .ci/run calls);
#                  installs the development environment pinned in requirements-dev.lock (the `dev` extra)
# While developing, `make test-quick` runs the fast tests in parallel (no lint, no slow or browser tests),
# `make lint` runs the lint alone, and `make lock` pins requirements-dev.lock again after pyproject.toml changes.
# One virtual environment, .venv, created on first use. Two stamps in it say what was installed: the runtime
# stamp (refreshed when pyproject.toml changes) and the dev stamp (when pyproject.toml or the lock changes).

VENV    ?= .venv
PY      := $(VENV)/bin/python
UV      := $(VENV)/bin/uv
RUNTIME := $(VENV)/.installed-runtime
DEV     := $(VENV)/.installed-dev
LOCK    := requirements-dev.lock
PIP     := $(PY) -m pip install --disable-pip-version-check --progress-bar on

.PHONY: demo lint test test-quick bench lock

$(UV):
	@echo "cogeval: creating $(VENV) and installing uv, the fast installer (one 20 MB package)"
	@test -x $(PY) || python3 -m venv $(VENV)
	@$(PIP) uv

$(RUNTIME): pyproject.toml | $(UV)
	@echo "cogeval: installing cogeval and its runtime dependencies only (64 packages, 470 MB in $(VENV));"
	@echo "         \`make test\` adds the development tools later (about 200 packages, 1.7 GB in all)"
	@$(UV) pip install --python $(PY) -e . || $(PIP) -e .
	@touch $@
	@echo "cogeval: ready"

# The dev install compiles the bytecode once (uv shows no progress for that part): test processes start
# fast even where PYTHONDONTWRITEBYTECODE is set. The demo skips it: its install stays short.
$(DEV): pyproject.toml $(LOCK) | $(UV)
	@echo "cogeval: installing the development environment pinned in $(LOCK) (about 200 packages, 1.7 GB in $(VENV):"
	@echo "         pytest, ruff, mypy, JupyterLab, Playwright, Inspect AI...), then compiling its bytecode"
	@echo "         (about half a minute without output); a few minutes, once"
	@$(UV) pip sync --python $(PY) --compile-bytecode $(LOCK) || $(PIP) -r $(LOCK)
	@$(UV) pip install --python $(PY) --no-deps -e . || $(PIP) --no-deps -e .
	@touch $@ $(RUNTIME)
	@echo "cogeval: ready"

demo: $(RUNTIME)
	$(VENV)/bin/cogeval demo

lint: $(DEV)
	$(VENV)/bin/ruff check cogeval tests
	$(VENV)/bin/mypy

test: lint
	$(PY) -m pytest -n auto --dist loadgroup

# test-quick leaves out what takes long without failing often: the tests marked slow or browser, the scale
# reports, and the suites that start a fresh Python process per test (CI runs them all, in `make test`).
QUICK_SKIP := tests/browser tests/present/test_report_scale.py tests/test_readme.py tests/test_console_width.py \
              tests/data/test_fresh_process_readers.py tests/data/test_record_build_order.py \
              tests/importers/test_fresh_process_importers.py tests/execution/test_run_sync_interrupts.py \
              tests/evaluate/test_progress_streams.py

test-quick: $(DEV)
	$(PY) -m pytest -q -n auto -m "not slow and not browser" $(addprefix --ignore=,$(QUICK_SKIP))

bench: $(DEV)
	for b in benchmarks/bench_*.py; do $(PY) $$b || exit 1; done

# Pins the `dev` extra (and the runtime dependencies) for every platform, from Python 3.11 up, with hashes.
lock: | $(UV)
	$(UV) pip compile pyproject.toml --extra dev --generate-hashes --universal --python-version 3.11 -o $(LOCK)
