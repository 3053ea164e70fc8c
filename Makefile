# Two commands on a fresh clone: `make run` and `make test` (README.md).
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8000
WORKERS ?= 2

# Tests run on the local PostgreSQL and Redis unless told otherwise.
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/airline
TEST_REDIS_URL ?= redis://127.0.0.1:6379/1

PROXY_PORT ?= 8080
NGINX ?= $(shell command -v nginx || echo /usr/sbin/nginx)

.PHONY: openapi error-table run proxy cluster cluster-stop cluster-start cluster-destroy test-cluster serve setup test fuzz lint check bench clean

$(VENV)/bin/activate:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(VENV)/.base: $(VENV)/bin/activate requirements/base.txt
	$(PY) -m pip install --quiet -r requirements/base.txt
	touch $@

$(VENV)/.dev: $(VENV)/.base requirements/dev.txt
	$(PY) -m pip install --quiet -r requirements/dev.txt
	touch $@

# The OpenAPI breaking-change check's tool (tests/api/test_openapi_compat.py): Atlassian's
# openapi-diff from npm, at the version tools/openapi-diff/package-lock.json pins (Node 20).
OPENAPI_DIFF := tools/openapi-diff/node_modules/.bin/openapi-diff
$(OPENAPI_DIFF): tools/openapi-diff/package.json tools/openapi-diff/package-lock.json
	npm ci --prefix tools/openapi-diff --no-audit --no-fund --loglevel=error
	touch $@

## openapi: write the served /json/v1 description to docs/api/openapi-v1.json, the published
## document partners generate clients from (after an additive change: docs/changelog.md)
openapi: $(VENV)/.base
	AIRLINE_ENV=test DATABASE_URL= $(PY) manage.py publish_openapi

## error-table: write docs/partners/errors.md, the partners' error table, from the one error
## registry (airline/api/errors.py); tests/docs/test_error_table.py fails until it is rerun
error-table: $(VENV)/.base
	$(PY) scripts/error_table.py

## run: install, migrate, seed the demo airline, print a demo key, serve on :8000 + the worker
run: export AIRLINE_ENV ?= development
run: $(VENV)/.base
	$(PY) manage.py migrate --noinput
	$(PY) manage.py collectstatic --noinput --verbosity 0
	$(PY) manage.py seed_demo
	@key=$$($(PY) manage.py create_api_key --partner DEMO --agency DEMOAGT --name "make run demo key" | tail -n 1); \
	echo; echo "Demo partner API key: $$key"; \
	echo "Try:  curl -s -X POST -H 'x-api-key: $$key' http://$(HOST):$(PORT)/auth/token"; \
	echo "Docs: http://$(HOST):$(PORT)/json/v1/schema/swagger-ui"; echo
	@# The background worker (hold expiry, payment reconciliation) beside gunicorn, in one
	@# shell that stops both when either ends or it is stopped (Ctrl-C, kill).
	$(PY) manage.py run_worker & worker=$$!; \
	$(VENV)/bin/gunicorn airline.wsgi --bind $(HOST):$(PORT) --workers $(WORKERS) \
		--error-logfile - --log-level warning & server=$$!; \
	trap 'kill $$worker $$server 2>/dev/null; wait' EXIT INT TERM; \
	wait -n $$worker $$server

## proxy: the production process layout on one machine: nginx (deploy/nginx/airline.conf)
## on $(HOST):$(PROXY_PORT) in front of gunicorn's sync workers on 127.0.0.1:$(PORT), and
## the worker. Sync workers need the buffering proxy: a slow client would hold one each.
proxy: export AIRLINE_ENV ?= development
proxy: export BEHIND_PROXY = 1
proxy: $(VENV)/.base
	@test -x "$(NGINX)" || { echo "make proxy needs nginx (apt-get install nginx)"; exit 1; }
	$(PY) manage.py migrate --noinput
	$(PY) manage.py collectstatic --noinput --verbosity 0
	mkdir -p var/nginx
	$(PY) deploy/nginx/render.py --listen $(HOST):$(PROXY_PORT) --upstream 127.0.0.1:$(PORT) \
		--standalone var/nginx > var/nginx/nginx.conf
	"$(NGINX)" -t -q -p var/nginx -c nginx.conf -e stderr
	@echo "Serving on http://$(HOST):$(PROXY_PORT) (nginx) -> 127.0.0.1:$(PORT) (gunicorn)"
	$(PY) manage.py run_worker & worker=$$!; \
	$(VENV)/bin/gunicorn airline.wsgi --bind 127.0.0.1:$(PORT) --workers $(WORKERS) \
		--error-logfile - --log-level warning & server=$$!; \
	"$(NGINX)" -p var/nginx -c nginx.conf -e stderr -g 'daemon off;' & proxy=$$!; \
	trap 'kill $$worker $$server $$proxy 2>/dev/null; wait' EXIT INT TERM; \
	wait -n $$worker $$server $$proxy

## cluster: the production topology on this machine (docs/operators/cluster.md "Cluster"), every
## process under a supervisord of its own: HAProxy on 127.0.0.1:$(PORT) in front of $(NODES)
## gunicorn nodes and, by Patroni's REST API, of the PgBouncer beside each PostgreSQL member;
## Patroni on three etcd members keeping a primary and its synchronous standby (var/cluster/);
## Redis and the worker; pgBackRest archiving the WAL, a full backup after seeding
## (scripts/cluster backup, restore --time T). Installs what is missing (Debian's packages with the dpkg lock
## waited for, Patroni from requirements/cluster.txt into var/patroni/). A cluster already
## in var/cluster is left as it is: cluster-start starts it again.
## cluster-stop stops every process keeping the data; cluster-destroy (asks) deletes it.
NODES ?= 2
cluster: $(VENV)/.base
	CLUSTER_PORT=$(PORT) CLUSTER_NODES=$(NODES) CLUSTER_WORKERS=$(WORKERS) scripts/cluster up

cluster-stop:
	scripts/cluster stop

cluster-start:
	scripts/cluster start

cluster-destroy:
	scripts/cluster destroy

## test-cluster: tests/e2e/test_cluster.py (marker cluster; `make test` runs it after the
## suite): a cluster of its own on free ports and the fault matrix under card bookings (a
## node, a pooler, an etcd member, the synchronous standby, the primary killed; stop and
## start), HAProxy's own errors, reads on the standby. Skipped without the packages
## (scripts/cluster install), except under CI
test-cluster: export AIRLINE_ENV = test
test-cluster: export DATABASE_URL ?= $(TEST_DATABASE_URL)
test-cluster: export REDIS_URL ?= $(TEST_REDIS_URL)
test-cluster: $(VENV)/.dev
	$(VENV)/bin/pytest -m cluster tests/e2e/test_cluster.py

## test: lint, check migrations and the import layers, run the whole suite on PostgreSQL +
## Redis (+ embedded smoke): in parallel, then the serial tests, the cluster tests among
## them (skipped when haproxy and pgbouncer are not installed, except under CI)
test: export AIRLINE_ENV = test
test: export DATABASE_URL ?= $(TEST_DATABASE_URL)
test: export REDIS_URL ?= $(TEST_REDIS_URL)
test: $(VENV)/.dev $(OPENAPI_DIFF)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet  # the manual: any warning fails
	DATABASE_URL= $(PY) manage.py makemigrations --check --dry-run  # models vs migrations; no server needed
	$(VENV)/bin/lint-imports  # the layers: no import from a lower layer to a higher one
	@# Two runs: most tests in two pytest-xdist workers, each on a test database (_gw0,
	@# _gw1) and a Redis key space of its own; then the `serial` ones (tests/conftest.py
	@# SERIAL: servers, the browser, time bounds; and the cluster's, tests/e2e/test_cluster.py)
	@# alone, with both cores to themselves.
	@# The second runs whatever the first said; either failing (an empty selection too:
	@# pytest's exit code 5) fails the target. Each prints its 20 slowest tests.
	status=0; \
	$(VENV)/bin/pytest -n 2 -m 'not serial and not cluster' --durations=20 || status=$$?; \
	$(VENV)/bin/pytest -m 'serial or cluster' --durations=20 || status=$$?; \
	exit $$status

## fuzz: the contract test at nightly size: schemathesis, 1000 examples per operation; then
## the bounded hostile-body set (tests/hostile.py), printing each body's worker CPU per request
fuzz: export AIRLINE_ENV = test
fuzz: export DATABASE_URL ?= $(TEST_DATABASE_URL)
fuzz: export REDIS_URL ?= $(TEST_REDIS_URL)
fuzz: $(VENV)/.dev
	FUZZ_EXAMPLES=$${FUZZ_EXAMPLES:-1000} $(VENV)/bin/pytest tests/e2e/test_contract.py
	$(VENV)/bin/pytest -s -p no:logging tests/e2e/test_hostile_bodies.py

## bench: performance figures beside same-run references (a scratch database airline_bench);
## holds per second against the same holds' SQL replayed by pgbench -f (benchmarks/replay.py);
## create offers and create order on two nodes against one (benchmarks/nodes.py); schedule
## preview, apply and the stale window after a load on the full schedule (benchmarks/schedule.py);
## card bookings on the Stripe gateway against the fake Stripe server beside the test gateway
## (benchmarks/payments.py); every back-office page's p95 at airline size (benchmarks/admin.py);
## create order on hold through HAProxy + PgBouncer against direct, and the seconds and
## bookings a primary's failure costs (benchmarks/cluster.py); each framework shortcut on and off
## (benchmarks/shortcuts.py); gunicorn's sync workers against gthread, one and two per core
## (benchmarks/workers.py); OrderList, retrieve, the bookings list and audit scans at 100k and
## 1M orders seeded by COPY (benchmarks/growth.py); each hot request's CPU by step under
## cProfile (benchmarks/profile.py). Each drops its scratch database and Redis keys at the
## end (BENCH_KEEP=1 keeps them) and writes its figures to
## docs/benchmarks/figures/<module>.md, which the manual's Benchmarks page includes.
bench: $(VENV)/.dev
	@command -v pgbench >/dev/null || { echo "make bench needs pgbench (PostgreSQL client tools)"; exit 1; }
	$(PY) -m benchmarks.network
	$(PY) -m benchmarks.shopping
	$(PY) -m benchmarks.orders
	$(PY) -m benchmarks.payments
	$(PY) -m benchmarks.servicing
	$(PY) -m benchmarks.webhooks
	$(PY) -m benchmarks.nodes
	$(PY) -m benchmarks.schedule
	$(PY) -m benchmarks.admin
	$(PY) -m benchmarks.cluster
	$(PY) -m benchmarks.shortcuts
	$(PY) -m benchmarks.workers
	$(PY) -m benchmarks.growth
	$(PY) -m benchmarks.profile

## docs: the manual in docs/ (MkDocs, Material theme) built to var/site/; --strict, as in CI
docs: $(VENV)/.dev
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

lint: $(VENV)/.dev
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

clean:
	rm -rf $(VENV) var
