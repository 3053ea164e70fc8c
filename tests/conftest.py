"""The common cast: a partner with two sellers, a partner key, a seller key, a read-only
key; an API client; a settable clock."""

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from unittest import mock

import pytest
from django.apps import apps
from django.contrib.contenttypes.models import ContentType
from django.core.cache import cache
from django.db import DEFAULT_DB_ALIAS, connection
from rest_framework.test import APIClient

from airline import sql as airline_sql
from airline.api import clock as service_clock
from airline.api import readiness
from airline.fares import reference as fares_reference
from sellers import throttling
from sellers.models import ApiKey
from tests.gateways import card_gateway, stripe_server  # noqa: F401 (fixtures for every suite)
from tests.sellers.factories import ApiKeyFactory, PartnerFactory, SellerFactory


def pytest_report_header(config) -> str:
    """Which database this run is on, since DATABASE_URL can point it elsewhere
    (tests/e2e/test_sqlite_statements.py reads it)."""
    from django.db import connection

    return f"database: vendor={connection.vendor}"


# Run by the second, serial pytest call of `make test`, not by the parallel one
# (pytest-xdist, `-n 2`): the tests that hold an answer, a restart or a stall to a time
# bound (QUICK, "within a second", a CPU budget, a payment timeout), kill processes
# mid-request, or drive a browser, which another worker's load beside them on a 2-core
# machine would make miss it or flake. The other end-to-end tests (servers on their
# worker's own database and key space: tests/e2e/servers.py) run in parallel.
SERIAL = (
    "tests/browser/",
    "tests/e2e/test_cluster.py",
    "tests/e2e/test_hostile_bodies.py",
    "tests/e2e/test_index_restart.py",
    "tests/e2e/test_live_changes.py",
    "tests/e2e/test_payment_crash.py",
    "tests/e2e/test_proxy.py",
    "tests/e2e/test_redis_down.py",
    "tests/e2e/test_redis_sentinel.py",
    "tests/e2e/test_request_deadline.py",
    "tests/e2e/test_settled_retry.py",
    "tests/e2e/test_season_retime.py",
    "tests/e2e/test_seat_block.py",
    "tests/e2e/test_server_stop.py",
    "tests/e2e/test_two_nodes.py",
    "tests/network/test_current_index.py",
    "tests/network/test_index_rebuild.py",
    "tests/offers/test_live_index.py",
    "tests/orders/test_stripe.py",
    "tests/test_benchmarks.py",
)


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(config, items) -> None:
    """Marks the tests of SERIAL `serial`. And every `transaction=True` test also takes
    `serialized_rollback=True`: a transactional test without it ends by flushing the
    database and re-running post_migrate, which recreates the content types under new
    ids; the next test that restores the serialized database then collides with them
    (IntegrityError on (app_label, model)) and every transactional test after it errors
    at setup: which ones depends on the order pytest runs them in, so it is refused here
    rather than found by chance."""
    wrong = [
        item.nodeid
        for item in items
        if (mark := item.get_closest_marker("django_db"))
        and mark.kwargs.get("transaction")
        and not mark.kwargs.get("serialized_rollback")
    ]
    if wrong:
        raise pytest.UsageError(
            "django_db(transaction=True) without serialized_rollback=True: " + ", ".join(wrong)
        )
    for item in items:
        if item.nodeid.startswith(SERIAL):
            item.add_marker(pytest.mark.serial)


@pytest.fixture(autouse=True)
def _empty_caches() -> Iterator[None]:
    """Rate counters, cached offers and in-memory reference data must not leak from one
    test into the next."""
    yield
    cache.delete_pattern("*")  # only this worker's keys (tests/settings.py)
    fares_reference.forget()
    throttling.outage.recovered()  # a test that stopped Redis leaves the limits open


@dataclass
class SettableClock:
    at: datetime

    def __call__(self) -> datetime:
        return self.at

    def advance(self, **delta: float) -> None:
        self.at += timedelta(**delta)


@pytest.fixture
def admin_client(admin_client):
    """pytest-django's, with every content type read once, as in any process that has
    shown an admin page (Django keeps them; a flush by a transactional test forgets them):
    a page's query count then does not depend on which test ran before it."""
    ContentType.objects.get_for_models(*apps.get_models())
    return admin_client


@pytest.fixture
def clock() -> Iterator[SettableClock]:
    """The service clock, stopped at the start of the current real minute (so tokens it
    signs are valid for PyJWT, which checks them against real time) until advanced."""
    stopped = SettableClock(datetime.now(tz=UTC).replace(second=0, microsecond=0))
    previous = service_clock.set_source(stopped)
    yield stopped
    service_clock.set_source(previous)


@pytest.fixture
def without_readiness_checks() -> Iterator[None]:
    """/health as the kernel alone answers it, whatever checks the apps register."""
    saved = readiness.registered_checks()
    for name in saved:
        readiness.unregister_readiness_check(name)
    yield
    for name, check in saved.items():
        readiness.register_readiness_check(name, check)


@pytest.fixture
def api() -> APIClient:
    return APIClient()


@pytest.fixture
def partner(db):
    return PartnerFactory(code="ACME", name="Acme Travel")


@pytest.fixture
def default_seller(partner):
    return SellerFactory(partner=partner, code="ACME1", is_default=True)


@pytest.fixture
def other_seller(partner):
    return SellerFactory(partner=partner, code="ACME2")


@pytest.fixture
def partner_key(partner, default_seller, other_seller):
    return ApiKeyFactory(partner=partner, agency_code="ACMEAGT")


@pytest.fixture
def seller_key(partner, default_seller, other_seller):
    return ApiKeyFactory(partner=partner, seller=other_seller)


@pytest.fixture
def read_only_key(partner, default_seller):
    return ApiKeyFactory(partner=partner, access_level=ApiKey.Access.READ, agency_code="ACMEAGT")


@pytest.fixture
def stranger_seller(db):
    """A seller of another partner: out of reach of every key above."""
    return SellerFactory(code="OTHER1", is_default=True)


def token_for(api: APIClient, raw_key: str, seller_id=None) -> str:
    body = {} if seller_id is None else {"sellerId": str(seller_id)}
    response = api.post("/auth/token", body, format="json", HTTP_X_API_KEY=raw_key)
    assert response.status_code == 200, response.content
    return response.json()["access_token"]


def bearer(token: str) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {token}"}


UNCHECKED = object()


def error_of(response, status: int, code: str, path: object = UNCHECKED) -> dict:
    """The error of a JSON envelope, asserted: the HTTP status, no data, the code, and the
    path when given (None: the error names no field). The NDC one: tests/ndc/conftest.py
    ndc_error_of."""
    assert response.status_code == status, response.content
    body = response.json()
    assert body["data"] is None, body
    error = body["error"]
    assert error["code"] == code, error
    if path is not UNCHECKED:
        assert error.get("path") == path, error
    return error


@contextmanager
def statements_sent() -> Iterator[list[str]]:
    """The SQL of each statement the default connection sends in the block, as written
    (prepared statements included), by an execute wrapper: not CaptureQueriesContext,
    whose debug cursor renders every statement with its values, which no worker does."""
    sent: list[str] = []

    def record(execute, sql, params, many, context):
        sent.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        yield sent


@contextmanager
def round_trips_sent() -> Iterator[list[list[str]]]:
    """The SQL of the statements the default connection sends in the block, by round
    trip: one a statement, but for those sent together in one pipeline
    (airline.sql.statements_pipelined), which share one."""
    trips: list[list[str]] = []
    pipelining = [False]
    pipelined = airline_sql.statements_pipelined

    @contextmanager
    def recorded_pipeline(using: str = DEFAULT_DB_ALIAS) -> Iterator[None]:
        if using != DEFAULT_DB_ALIAS:
            with pipelined(using):
                yield
            return
        trips.append([])
        pipelining[0] = True
        try:
            with pipelined(using):
                yield
        finally:
            pipelining[0] = False

    def record(execute, sql, params, many, context):
        if pipelining[0]:
            trips[-1].append(sql)
        else:
            trips.append([sql])
        return execute(sql, params, many, context)

    with (
        mock.patch.object(airline_sql, "statements_pipelined", recorded_pipeline),
        connection.execute_wrapper(record),
    ):
        yield trips
    trips[:] = [trip for trip in trips if trip]  # a pipeline of no statement sends none
