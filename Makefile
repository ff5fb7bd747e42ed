# Two commands do everything on a fresh machine (see README.md):
#   make demo   -- the offline demo
#   make test   -- lint (ruff, mypy), then the test suite in parallel and random order (what .ci/run calls)
# While developing, `make test-quick` skips the lint and the slow and browser tests; `make lint` runs the lint alone.
# The virtual environment is created on first use and refreshed when pyproject.toml changes.

VENV  ?= .venv
PY    := $(VENV)/bin/python
STAMP := $(VENV)/.installed
export UV_COMPILE_BYTECODE := 1

.PHONY: demo lint test test-quick bench

$(STAMP): pyproject.toml
	@echo "cogeval: setting up $(VENV) (first run, or pyproject.toml changed): a few minutes, once"
	@test -x $(PY) || { echo "cogeval: 1/3 creating the virtual environment"; python3 -m venv $(VENV); }
	@echo "cogeval: 2/3 installing uv, the fast installer"
	@$(PY) -m pip install --quiet --disable-pip-version-check uv
	@echo "cogeval: 3/3 installing cogeval and its test tools (uv shows its progress)"
	@$(VENV)/bin/uv pip install --python $(PY) -e '.[dev]' \
	  || $(PY) -m pip install --disable-pip-version-check --progress-bar on -e '.[dev]'
	@touch $(STAMP)
	@echo "cogeval: ready"

demo: $(STAMP)
	$(VENV)/bin/cogeval demo

lint: $(STAMP)
	$(VENV)/bin/ruff check cogeval tests
	$(VENV)/bin/mypy

test: lint
	$(PY) -m pytest -n auto --dist loadgroup

test-quick: $(STAMP)
	$(PY) -m pytest -q -m "not slow and not browser"

bench: $(STAMP)
	for b in benchmarks/bench_*.py; do $(PY) $$b || exit 1; done
