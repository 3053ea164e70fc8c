"""Prometheus metrics (docs/operators/monitoring.md): what the service counts, and GET /metrics.

Counted where it happens, in the process it happens in:
- every request, by route pattern (never the raw path: ids and locators would make a
  series each), method and status, with its latency (airline.api.middleware);
- bookings created, by channel and payment kind, and holds expired, when the
  transaction that wrote them commits (from the order events: orders/reading/metrics.py);
- the database and Redis failures the service answers ERR-9000, ERR-8002 or ERR-9002
  (airline.api.exceptions), and the requests whose rate limit Redis could not count
  (sellers/throttling.py).
Read from the database at each scrape, being state rather than events: the background
worker's queues (holds and payment intents past due) and the webhook backlog, each
registered by the app that owns it (queue_register); the last nightly books audit's
disagreements (gauge_register); and whether this node reaches PostgreSQL and Redis
(DependencyCollector), checked at each scrape within a bound.

gunicorn runs several worker processes, each with its own memory. With METRICS_ENABLED,
prometheus_client's multiprocess mode keeps each process's values in a file of its own
under PROMETHEUS_MULTIPROC_DIR (settings.py sets it before prometheus_client is first
imported) and a scrape adds them up, so any worker answers for the whole node, the
background worker included when it runs on the same host. A counter in Redis would be
shared by every node, but it would stop counting exactly when Redis is down, the failure
these metrics must show.
"""

import contextvars
import hmac
import ipaddress
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import redis.exceptions
from django.conf import settings
from django.db import DatabaseError, DataError, connections
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import GaugeMetricFamily

from airline.api import clock
from airline.api.errors import ApiError
from airline.api.responses import not_found

logger = logging.getLogger("airline.metrics")

REQUESTS = Counter(
    "airline_http_requests",
    "HTTP requests answered, by route pattern, method and status",
    ["route", "method", "status"],
)
REQUEST_SECONDS = Histogram(
    "airline_http_request_duration_seconds",
    "Time to answer an HTTP request, by route pattern and method",
    ["route", "method"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
BOOKINGS_CREATED = Counter(
    "airline_bookings_created",
    "Bookings created, by channel (JSON, NDC, IMPORT) and payment kind",
    ["channel", "payment"],
)
HOLDS_EXPIRED = Counter("airline_holds_expired", "Unpaid holds cancelled at their time limit")
STORAGE_ERRORS = Counter(
    "airline_storage_errors",
    "Requests failed because the database or Redis could not be reached, by backend and "
    "the error code answered",
    ["backend", "code"],
)
RATE_LIMIT_REDIS_DOWN = Counter(
    "airline_rate_limit_redis_down",
    "Requests whose rate limit could not be counted in Redis, by what was done instead: "
    "open (admitted uncounted) or database (counted in the database)",
    ["fallback"],
)

# Anything else a client sends as a method is one label, not a series per spelling.
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
UNMATCHED = "unmatched"  # no URL pattern: static files, unknown non-API paths


def request_observe(request: HttpRequest, status: int, seconds: float) -> None:
    """One answered request (called by the request-log middleware)."""
    route = route_of(request)
    method = request.method if request.method in METHODS else "other"
    children = _request_children.get((route, method, status))
    if children is None:
        children = (
            REQUESTS.labels(route, method, str(status)),
            REQUEST_SECONDS.labels(route, method),
        )
        _request_children[(route, method, status)] = children
    children[0].inc()
    children[1].observe(seconds)


# The request metrics' children by (route, method, status): a bounded set (routes are
# patterns, methods the METHODS and "other"), looked up once per process rather than
# through prometheus_client's label validation and lock on every request.
_request_children: dict[tuple[str, str, int], tuple[Any, Any]] = {}


# URL names whose one pattern answers several messages, each with the label of the one
# it answered: registered by the app that owns the pattern, in its AppConfig.ready (ndc:
# its endpoint name), so that the kernel never imports the apps built on it.
_ROUTE_LABELS: dict[str, Callable[[Any], str]] = {}


def route_label_register(url_name: str, label: Callable[[Any], str]) -> None:
    """Requests that URL pattern `url_name` answered are counted under
    `label(resolver_match)`, which must have a bounded set of values."""
    _ROUTE_LABELS[url_name] = label


def route_of(request: HttpRequest) -> str:
    """The URL pattern that answered: a bounded set of values. NDC has one pattern for
    all its messages, so a known endpoint name is added to it (route_label_register)."""
    match = getattr(request, "resolver_match", None)
    if match is None:
        return UNMATCHED
    label = _ROUTE_LABELS.get(match.url_name)
    return label(match) if label is not None else match.route


def storage_error_observe(err: ApiError) -> None:
    """Count `err` if the database or Redis being unreachable caused it: the exception
    handler's ApiError carries that failure as its cause."""
    cause = err.__cause__
    if isinstance(cause, DatabaseError) and not isinstance(cause, DataError):
        STORAGE_ERRORS.labels("database", err.code).inc()
    elif isinstance(cause, redis.exceptions.ConnectionError | redis.exceptions.TimeoutError):
        STORAGE_ERRORS.labels("redis", err.code).inc()


# --- Bookings and holds ---------------------------------------------------------------
# Counted by the orders app from the events every write records (orders/reading/metrics.py), so
# no service has to know about metrics; BOOKINGS_CREATED and HOLDS_EXPIRED above.


# --- Queues, read at each scrape --------------------------------------------------------


@dataclass(frozen=True)
class Queue:
    """A backlog gauge: `rows(now)` is the queryset whose count it shows."""

    name: str
    text: str
    rows: Callable[[datetime], Any]


# Registered by the apps that own the queues, in their AppConfig.ready (orders: holds and
# payment intents; webhooks: deliveries), so that the kernel never imports them.
_QUEUES: list[Queue] = []


def queue_register(name: str, text: str, rows: Callable[[datetime], Any]) -> None:
    """Show the count of `rows(now)` as the gauge `name` at every scrape."""
    if all(q.name != name for q in _QUEUES):
        _QUEUES.append(Queue(name, text, rows))


@dataclass(frozen=True)
class StateGauge:
    """A gauge of state kept in the database: `value(now)` is what it shows (None: left
    out of the scrape, e.g. before the first run of a nightly job)."""

    name: str
    text: str
    value: Callable[[datetime], float | None]


_GAUGES: list[StateGauge] = []


def gauge_register(name: str, text: str, value: Callable[[datetime], float | None]) -> None:
    """Show `value(now)` as the gauge `name` at every scrape."""
    if all(g.name != name for g in _GAUGES):
        _GAUGES.append(StateGauge(name, text, value))


class QueueCollector:
    """The background worker's backlog and the other state gauges, from the database:
    the same for every node (take the max across instances, not the sum). Left out of a
    scrape when the database cannot be reached; `airline_storage_errors_total` and the
    request metrics show that."""

    def collect(self):
        now = clock.now()
        try:
            counts = [(q.name, q.text, q.rows(now).count()) for q in _QUEUES]
            counts += [(g.name, g.text, g.value(now)) for g in _GAUGES]
        except DatabaseError:
            logger.warning("queue depths left out of the scrape: the database is unreachable")
            return
        for name, text, count in counts:
            if count is not None:
                yield GaugeMetricFamily(name, text, value=count)


# --- Dependencies, reached at each scrape ---------------------------------------------

# How long a scrape waits for each dependency to answer before calling it down: well
# inside a scraper's timeout (Prometheus's default is 10 s), both checked together.
DEPENDENCY_TIMEOUT_SECONDS = 2


def database_reachable() -> None:
    """A new connection to the primary (as the app's own would be made, libpq's
    connect_timeout bounding it) answers `SELECT 1`; raises if not. A new one, because
    the process's own may be idle and healthy while no new one can be had."""
    wrapper = connections["default"]
    params = wrapper.get_connection_params()
    if wrapper.vendor == "postgresql":
        params["connect_timeout"] = DEPENDENCY_TIMEOUT_SECONDS
        params["options"] = (
            f"{params.get('options', '')} -c statement_timeout={DEPENDENCY_TIMEOUT_SECONDS * 1000}"
        ).strip()
    raw = wrapper.get_new_connection(params)
    try:
        raw.cursor().execute("SELECT 1")
    finally:
        raw.close()


def redis_reachable() -> None:
    """Redis, through the cache's own client (its address, Sentinel or not, and its
    socket timeouts), answers PING; raises if not."""
    from django_redis import get_redis_connection

    get_redis_connection("default").ping()


def _dependencies() -> dict[str, Callable[[], None]]:
    checks = {"database": database_reachable}
    if settings.REDIS_URL or settings.REDIS_SENTINELS:  # else the cache is in the database
        checks["redis"] = redis_reachable
    return checks


class DependencyCollector:
    """`airline_dependency_up{dependency}`: 1 when this node reached it at this scrape,
    0 when it failed or did not answer within DEPENDENCY_TIMEOUT_SECONDS; and how long
    that took. Each check runs in a thread of its own, so one that hangs past its own
    timeouts costs the scrape no more than the bound (the thread ends with them)."""

    def collect(self):
        results: dict[str, tuple[int, float]] = {}
        threads = []
        for name, check in _dependencies().items():
            # In a copy of the scrape's context: traced, the checks belong to its trace.
            thread = threading.Thread(
                target=contextvars.copy_context().run,
                args=(self._check, name, check, results),
                daemon=True,
                name=f"up-{name}",
            )
            thread.start()
            threads.append((name, thread))
        deadline = time.monotonic() + DEPENDENCY_TIMEOUT_SECONDS + 0.5
        up = GaugeMetricFamily(
            "airline_dependency_up",
            "1 when this node reached the dependency at this scrape, 0 when not",
            labels=["dependency"],
        )
        seconds = GaugeMetricFamily(
            "airline_dependency_check_seconds",
            "How long this scrape's check of the dependency took (up to the timeout)",
            labels=["dependency"],
        )
        for name, thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
            value, took = results.get(name, (0, float(DEPENDENCY_TIMEOUT_SECONDS)))
            up.add_metric([name], value)
            seconds.add_metric([name], took)
        yield up
        yield seconds

    @staticmethod
    def _check(name: str, check: Callable[[], None], results: dict) -> None:
        started = time.monotonic()
        try:
            check()
        except Exception as exc:  # any failure to reach it is "down", and logged
            logger.warning(
                "dependency unreachable at scrape",
                extra={"fields": {"dependency": name, "error": type(exc).__name__}},
            )
            results[name] = (0, time.monotonic() - started)
        else:
            results[name] = (1, time.monotonic() - started)


# --- The multiprocess directory ------------------------------------------------------


def multiprocess_dir() -> Path | None:
    value = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    return Path(value) if value else None


def multiprocess_dir_prepare() -> None:
    """At a gunicorn master's start: the directory exists, and the files of processes
    that are gone are removed, so a scrape reads only as many files as processes have run
    since (counters then restart, which Prometheus's rate() takes as a reset). Files of
    processes still running (the background worker, started first by `make run`) stay."""
    directory = multiprocess_dir()
    if directory is None:
        return
    directory.mkdir(parents=True, exist_ok=True)
    for path in directory.glob("*.db"):
        pid = path.stem.rsplit("_", 1)[-1]
        if not (pid.isdigit() and _running(int(pid))):
            path.unlink(missing_ok=True)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive
    return True


# --- GET /metrics ---------------------------------------------------------------------


@csrf_exempt
def metrics_view(request: HttpRequest) -> HttpResponse:
    """GET /metrics: 404 like any unknown path unless METRICS_ENABLED; then only from
    METRICS_ALLOWED_CIDRS (403) and with `Authorization: Bearer <METRICS_TOKEN>` (401).
    Every answer is plain text, for a scraper, never a page."""
    if not settings.METRICS_ENABLED:
        return not_found(request)
    if not _from_allowed_network(request):
        return _plain("Forbidden: this address may not read metrics\n", 403)
    if not _has_token(request):
        response = _plain("Unauthorized: send Authorization: Bearer <METRICS_TOKEN>\n", 401)
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    if request.method not in ("GET", "HEAD"):
        response = _plain(f"Method {request.method} not allowed; use GET\n", 405)
        response["Allow"] = "GET, HEAD"
        return response
    return _plain(generate_latest(_registry()), 200, content_type=CONTENT_TYPE_LATEST)


def _registry() -> CollectorRegistry:
    directory = multiprocess_dir()
    if directory is None:  # one process (tests, runserver): its own values
        registry = CollectorRegistry()
        registry.register(_DefaultRegistry())
    else:
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry, path=str(directory))
    registry.register(QueueCollector())
    registry.register(DependencyCollector())
    return registry


class _DefaultRegistry:
    """prometheus_client's default registry (this process's metrics) as one collector."""

    def collect(self):
        return REGISTRY.collect()


def _from_allowed_network(request: HttpRequest) -> bool:
    # REMOTE_ADDR, never X-Forwarded-For, which any client can write: scrape the node
    # itself, not through the load balancer.
    try:
        address = ipaddress.ip_address(request.META.get("REMOTE_ADDR", ""))
    except ValueError:
        return False
    return any(
        address in ipaddress.ip_network(cidr, strict=False)
        for cidr in settings.METRICS_ALLOWED_CIDRS
    )


def _has_token(request: HttpRequest) -> bool:
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    expected = settings.METRICS_TOKEN or ""
    return (
        scheme.lower() == "bearer"
        and bool(expected)
        and hmac.compare_digest(token.strip().encode(), expected.encode())
    )


def _plain(body: str | bytes, status: int, content_type: str = "text/plain; charset=utf-8"):
    response = HttpResponse(body, status=status, content_type=content_type)
    response["Cache-Control"] = "no-store"
    return response
