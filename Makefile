# make run  — install, migrate, generate and import the demo challenges, serve on 127.0.0.1:8000
# make test — install (with test tools), run the whole test suite, ruff and the import
#   contracts (import-linter: the apps in layers, no cycles)
# make test-stack — gunicorn, a Celery worker and beat on the PostgreSQL (127.0.0.1:5432) and
#   Redis (127.0.0.1:6379) of this machine, in a fresh database: end-to-end tests over HTTP,
#   browser journeys (Debian's /usr/bin/chromium), faults and load, and web and workers on
#   separate hosts (network namespaces: root and iproute2's `ip`) with S3 (tests/stack)
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
DEMO := datasets/demo/generated
ADDRESS ?= 127.0.0.1:8000

EXT_SUFFIX := $(shell $(PYTHON) -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
NATIVE := scoring/_native$(EXT_SUFFIX)

.PHONY: install install-test run demo test test-stack lint compose-check clean schema

install: $(VENV)/.installed $(NATIVE)

install-test: $(VENV)/.installed-test $(NATIVE)

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Stamp files: pip runs again only when a requirements file changes.
$(VENV)/.installed: requirements.txt | $(BIN)/python
	$(BIN)/python -m pip install --disable-pip-version-check -r requirements.txt
	touch $@

# The example plug-in (plugins/floorlog) is installed as a copy: a change to it reinstalls.
$(VENV)/.installed-test: requirements-test.txt $(VENV)/.installed $(wildcard plugins/floorlog/pyproject.toml plugins/floorlog/src/*/*.py)
	$(BIN)/python -m pip install --disable-pip-version-check -r requirements-test.txt
	$(BIN)/python -m pip install --disable-pip-version-check --force-reinstall --no-deps ./plugins/floorlog
	touch $@

# The scoring package's C parser and kernels (scoring/_build.py: one cc call, no
# setuptools). Without a C compiler scoring still works, on numpy alone and slower:
# the build then warns here, `manage.py check` warns too, and the test suite fails.
$(NATIVE): scoring/_native.c scoring/_build.py | $(BIN)/python
	$(BIN)/python -m scoring._build || echo "warning: scoring's C extension was not built; scoring falls back to numpy (slower)" >&2

$(DEMO)/.stamp: $(wildcard datasets/demo/*.py) | $(VENV)/.installed
	$(BIN)/python -m datasets.demo.generate $(DEMO)
	touch $@

demo: install $(DEMO)/.stamp
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py import_challenge $(DEMO)/epuc
	$(BIN)/python manage.py import_challenge $(DEMO)/covshift
	$(BIN)/python manage.py import_challenge $(DEMO)/probing
	$(BIN)/python manage.py import_challenge $(DEMO)/cifar10c
	# teamwork's dates follow the day: written again, so it is in its validation phase.
	$(BIN)/python -m datasets.demo.generate $(DEMO) --only teamwork
	$(BIN)/python manage.py import_challenge $(DEMO)/teamwork
	$(BIN)/python manage.py load_demo_submissions epuc covshift probing cifar10c teamwork

run: demo
	$(BIN)/python manage.py runserver $(ADDRESS)

test: install-test
	$(BIN)/python -m pytest
	$(BIN)/ruff check .
	$(BIN)/lint-imports --no-cache

# Without pytest-django (the tests talk to the stack's own database) and without
# tests/conftest.py, which keeps tests/stack out of `make test`.
test-stack: install-test
	$(BIN)/python -m pytest -p no:django --confcutdir=tests/stack \
		-W "ignore:Unknown config option:pytest.PytestConfigWarning" tests/stack

lint: install-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# docker-compose.yml checked by Docker Compose itself (syntax, variables, references),
# where the client has the compose plugin; no Docker engine is needed.
compose-check:
	@if docker compose version >/dev/null 2>&1; then \
		SECRET_KEY=compose-check S3_SECRET_KEY=compose-check ALLOWED_HOSTS=localhost \
			docker compose config -q && echo "docker-compose.yml: valid"; \
	else \
		echo "compose-check: Docker Compose is absent here (docker compose version failed); nothing checked"; \
	fi

# docs/openapi.yaml: the API's OpenAPI schema, as /api/v1/schema/ serves it (after an API
# change; tests/test_api_schema.py fails while the file and the served schema differ).
schema: install
	$(BIN)/python manage.py spectacular --file docs/openapi.yaml --validate --fail-on-warn

clean:
	rm -rf $(DEMO) var staticfiles scoring/_pow10.h scoring/_native*.so
