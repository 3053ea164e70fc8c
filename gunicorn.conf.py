"""gunicorn settings (read from the working directory by default)."""

import os

from gunicorn.http import wsgi as gunicorn_wsgi

# The service's own JSON line per request (airline/api/middleware.py) is its request log:
# it names the route and path, never the query string or headers, which carry surnames
# (OrderList ?lastName=), tokens and keys. gunicorn's access log is off; whoever turns it
# on (--access-logfile) gets this format, which leaves out the query string (%(q)s, and
# %(r)s, the whole request line) and the Referer (%(f)s, which may carry another query).
accesslog = None
access_log_format = '%(h)s %(t)s "%(m)s %(U)s %(H)s" %(s)s %(B)s %(M)sms "%(a)s"'

# The master loads the application (airline/wsgi.py) before it binds the port and forks:
# a node accepts no connection before a worker can answer it, and /health answers 503
# `loading` at once while the workers build their schedule indexes. Code
# changes therefore need a restart of the master, not a HUP.
preload_app = True

# gunicorn's sync worker, which on SIGTERM stops listening at once instead of when its
# request in hand is done: a stopping node refuses new connections rather than queueing
# them to be reset (airline/gunicorn_worker.py).
#
# Sync rather than gthread, and one worker per core (the Makefile's and the cluster's
# WORKERS=2 on two cores), measured by `python -m benchmarks.workers`
# (docs/contributors/benchmarks.md, "Worker class and count"): the booking funnel at 8
# clients against sync at one and two per core and gthread with 2 or 4 threads, in one
# run (docs/benchmarks/figures/workers.md). One sync worker per core finishes the most
# funnels a second at the least CPU per funnel; each worker or thread more adds CPU per
# funnel (more processes contending for two cores) and none finishes more funnels,
# threads least and with the slowest holds. The
# workers are inside requests about 80% of the time (the request log's server times
# over the phase); the rest is gunicorn's own work per connection and the cores the
# database and the clients take. What the clients wait beyond the server time is their
# place in the queue for a worker, which more workers lengthen rather than shorten on
# two cores. Threads would also cost the request deadline (airline/api/middleware.py),
# which interrupts a request by a signal that only a sync worker's main thread
# receives. Slow clients are nginx's to absorb, not a thread's (deploy/nginx/airline.conf
# buffers both ways).
worker_class = "airline.gunicorn_worker.RefusingSyncWorker"

# How long a worker may spend on one request before gunicorn kills it (the client then
# gets nothing, or the proxy's 502, which the proxies answer as ERR-9000): a guard against
# a stuck worker, never a bound of the service's own; the service answers its own 503
# first (RequestDeadlineMiddleware, REQUEST_DEADLINE_SECONDS). Every wait of a request is
# bounded by the service itself, so this must exceed the longest request those bounds
# allow, or it fires on a request that would have been answered (a card charged, then the
# worker killed):
# - calls to the payment gateway, each bounded by STRIPE_TIMEOUT_SECONDS (10 s): the
#   charge (create, confirm), its capture at ticketing (STRIPE_CAPTURE=manual) and, when
#   the write fails after the charge, giving it back (look up, then void or refund):
#   GATEWAY_CALLS_IN_A_ROW of them at most, 50 s;
# - row-lock waits, each bounded by LOCK_WAIT_TIMEOUT_MS (2 s, then 503 ERR-9000): a
#   change paid by card waits for its order's row twice, its legs and a seat map:
#   LOCK_WAITS_IN_A_ROW, 8 s;
# - the database work itself (well under a second) and a margin: 75 s in all.
# on_starting warns when the settings allow longer. Above it: the proxy's read timeout
# (deploy/nginx/airline.conf), PAYMENT_INTENT_GRACE_SECONDS and IDEMPOTENCY_LEASE_SECONDS
# (a request still running must not be taken for dead).
GATEWAY_CALLS_IN_A_ROW, LOCK_WAITS_IN_A_ROW = 5, 4
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "75"))
# A stopping node (SIGTERM) lets the request in hand run as long as any may, rather than
# kill it after gunicorn's default 30 s, halfway through a card booking. Whatever stops
# the master (systemd's TimeoutStopSec, 90 s by default) must give it longer.
graceful_timeout = int(os.environ.get("GUNICORN_GRACEFUL_TIMEOUT", str(timeout)))

# A worker is replaced after about this many requests (the jitter keeps a node's workers
# from restarting together): whatever a long-lived process accumulates is returned. The
# new worker is forked from the master with its schedule index (airline/wsgi.py) and
# catches up through the change log as it starts (post_worker_init), so it answers at
# once. 0 turns recycling off.
max_requests = int(os.environ.get("GUNICORN_MAX_REQUESTS", "20000"))
max_requests_jitter = int(os.environ.get("GUNICORN_MAX_REQUESTS_JITTER", "2000"))


def _without_server_header(default_headers):
    """gunicorn writes `Server: gunicorn` on every answer and has no setting to leave it
    out: it tells a scanner which server and which of its bugs to try.
    Its header list is filtered here; tests/e2e/test_server_headers.py fails loudly
    should a gunicorn upgrade move the header elsewhere."""

    def headers(self):
        return [h for h in default_headers(self) if not h.lower().startswith("server:")]

    return headers


gunicorn_wsgi.Response.default_headers = _without_server_header(
    gunicorn_wsgi.Response.default_headers
)


def on_starting(server):
    """Before any worker starts: the metrics directory exists and holds no files of
    processes that are gone (airline/api/metrics.py). Loading the settings sets
    PROMETHEUS_MULTIPROC_DIR for the workers when METRICS_ENABLED.

    Then this node's SECRET_KEY is checked against the other live nodes' (airline/nodes.py):
    a different one stops it here, before it answers anything."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "airline.settings")
    from django.conf import settings

    longest = (
        GATEWAY_CALLS_IN_A_ROW * settings.STRIPE_TIMEOUT_SECONDS
        + LOCK_WAITS_IN_A_ROW * settings.LOCK_WAIT_TIMEOUT_MS / 1000
    )
    if server.cfg.timeout and server.cfg.timeout <= longest:
        server.log.warning(
            "gunicorn's timeout (%s s) is not above the longest request the settings allow "
            "(%.0f s: gunicorn.conf.py); raise GUNICORN_TIMEOUT",
            server.cfg.timeout,
            longest,
        )

    if settings.METRICS_ENABLED:
        from airline.api.metrics import multiprocess_dir_prepare

        multiprocess_dir_prepare()

    import redis

    from airline.nodes import SecretKeyMismatch, secret_key_claim

    try:
        secret_key_claim()
    except SecretKeyMismatch as exc:
        server.log.error("Refusing to start: %s", exc)
        raise SystemExit(f"Refusing to start: {exc}") from None
    except redis.RedisError as exc:
        # Redis is down: start anyway (every API call says so, ERR-8002); the workers'
        # heartbeat checks the key once Redis is back.
        server.log.warning("SECRET_KEY not checked against other nodes: %s", exc)


def when_ready(server):
    """The port is bound: from now on fork each missing worker at once. gunicorn's arbiter
    sleeps a random 0-100 ms after every fork (`Arbiter.spawn_workers`), so a starting
    node had a single worker for up to 100 ms, and a /health probe that arrived behind the
    first search waited for it (/health must answer within 100 ms through a restart). There
    is no start-up stampede to spread: the workers share the master's index. Should a
    gunicorn upgrade rename what this replaces, the node refuses to start rather than
    quietly keep the sleep."""
    if not callable(getattr(server, "spawn_workers", None)) or not hasattr(server, "WORKERS"):
        raise RuntimeError("gunicorn's Arbiter has no spawn_workers/WORKERS: see when_ready")

    def spawn_workers():
        for _ in range(server.num_workers - len(server.WORKERS)):
            server.spawn_worker()

    server.spawn_workers = spawn_workers


def post_fork(server, worker):
    """This worker's tracer provider (airline/telemetry.py), when tracing is configured:
    its BatchSpanProcessor exports from a thread, which a fork does not carry over, so it
    is made here in the child; the master only instrumented the libraries."""
    from airline.telemetry import tracing_start

    tracing_start(role="web")


def worker_exit(server, worker):
    """Export the spans this worker still holds before it goes (max_requests, a stop)."""
    from airline.telemetry import tracing_stop

    tracing_stop()


def post_worker_init(worker):
    """Start this worker's schedule poller; keep this node's SECRET_KEY fingerprint alive,
    and /health at 503 should another live node's differ.

    A worker forked after a schedule load (a restart after a timeout, max_requests
    recycling, a crash) inherits its master's index, built before that load. The
    poller's first poll, made as the thread starts, compares that index's version with
    the database's and patches the difference in from the change log (or builds the
    index, if the master had none), so /health turns ok without waiting for a first
    request to ask (SPEC.md §4.3). It runs in the poller's thread, on its own
    connection: this hook returns at once and /health answers from the first request,
    whatever the database or a build takes. A price, booking or reshop that arrives
    before the patch is in waits a moment for it, or is refused 503 ERR-9000 with
    Retry-After; it is never answered from the inherited schedule (airline/network/
    itineraries.py, network_index(current=True)). Searches answer from it meanwhile:
    what they offer is priced again."""
    from airline.api.readiness import register_readiness_check
    from airline.network.itineraries import follow_network_changes
    from airline.nodes import heartbeat_in_background, secret_key_agrees

    follow_network_changes()
    register_readiness_check("secret_key", secret_key_agrees)
    heartbeat_in_background()
