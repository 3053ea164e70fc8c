"""What each endpoint answers while Redis or PostgreSQL is down: the claims of README
"Readiness and liveness", checked rather than guessed. Redis down: the cache pointed at
a closed port. PostgreSQL down: every query fails as a lost connection does."""

import pytest
from django.db import OperationalError, connection
from django.test import override_settings

from sellers import authcache
from tests.offers.conftest import search_body
from tests.orders import conftest as orders
from tests.orders.conftest import book, booking_body

pytestmark = pytest.mark.django_db

network, auth, travel_day, priced = orders.network, orders.auth, orders.travel_day, orders.priced
TOKEN = "scrape-me-0123456789"


def database_down(execute, sql, params, many, context):
    raise OperationalError("could not connect to server")


@pytest.fixture
def redis_down(settings):
    closed = {"default": {**settings.CACHES["default"], "LOCATION": "redis://127.0.0.1:1/0"}}
    with override_settings(CACHES=closed):
        yield


@pytest.fixture
def order_id(api, auth, priced):
    return book(api, auth, booking_body(priced)).json()["data"]["order"]["orderId"]


def answers(api, auth, partner_key, order_id, day) -> dict[str, tuple[int, str | None]]:
    """(status, ERR code) of one call to each kind of endpoint."""
    calls = {
        "health": api.get("/health"),
        "token": api.post("/auth/token", HTTP_X_API_KEY=partner_key.raw),
        "sellers": api.get("/auth/sellers", HTTP_X_API_KEY=partner_key.raw),
        "search": api.post(
            "/json/v1/offers", search_body(("PVD", "CHS", day)), format="json", **auth
        ),
        "retrieve": api.get(f"/json/v1/orders/{order_id}", **auth),
        "list": api.get("/json/v1/orders", **auth),
        "ndc": api.post("/ndc/v1/AirShopping", b"<x/>", content_type="application/xml", **auth),
    }
    return {name: (r.status_code, _code(r)) for name, r in calls.items()}


def _code(response) -> str | None:
    if response["Content-Type"].startswith("application/xml"):
        return response.content.split(b"<cns:Code>")[1].split(b"<")[0].decode()
    body = response.json()
    return (body.get("error") or {}).get("code") if isinstance(body, dict) else None


def test_with_redis_down_only_what_needs_its_data_fails(
    api, auth, partner_key, order_id, travel_day, redis_down
):
    """Keys are in the database and rate limits open: tokens, orders and NDC's parse
    work; a search, whose offers only Redis can hold, is 503 ERR-9002."""
    assert answers(api, auth, partner_key, order_id, travel_day) == {
        "health": (200, None),
        "token": (200, None),
        "sellers": (200, None),
        "search": (503, "ERR-9002"),
        "retrieve": (200, None),
        "list": (200, None),
        "ndc": (422, "ERR-1005"),
    }


def test_health_reports_redis_up(api, without_readiness_checks):
    body = api.get("/health").json()

    assert (body["degraded"], body["dependencies"]) == (False, {"redis": "up"})


def test_health_reports_redis_down_in_its_own_field_and_stays_200(
    api, redis_down, without_readiness_checks
):
    down = api.get("/health")

    assert down.status_code == 200
    assert down.json()["status"] == "ok"
    assert down.json()["degraded"] is True
    assert down.json()["dependencies"] == {"redis": "down"}


@override_settings(REDIS_ENABLED=False)
def test_health_without_redis_names_no_dependency(api, without_readiness_checks):
    body = api.get("/health").json()

    assert (body["degraded"], body["dependencies"]) == (False, {})


def test_with_postgresql_down_health_stays_ok_and_every_api_call_is_8002(
    api, auth, partner_key, order_id, travel_day
):
    authcache.forget()  # no token resolved in the last 30 s (sellers/authcache.py)

    with connection.execute_wrapper(database_down):
        got = answers(api, auth, partner_key, order_id, travel_day)

    assert got == {
        "health": (200, None),
        "token": (503, "ERR-8002"),
        "sellers": (503, "ERR-8002"),
        "search": (503, "ERR-8002"),
        "retrieve": (503, "ERR-8002"),
        "list": (503, "ERR-8002"),
        "ndc": (503, "ERR-8002"),
    }


def test_with_postgresql_down_a_token_seen_lately_gets_past_authentication(
    api, auth, partner_key, order_id, travel_day
):
    """A token this process resolved in the last 30 s is still known: orders and search
    (whose flight data lives in the database) answer ERR-9000 with Retry-After."""
    api.get("/json/v1/whoami", **auth)

    with connection.execute_wrapper(database_down):
        got = answers(api, auth, partner_key, order_id, travel_day)

    assert got["health"] == (200, None)
    assert got["token"] == (503, "ERR-8002")
    assert got["retrieve"] == (503, "ERR-9000")
    assert got["list"] == (503, "ERR-9000")
    assert got["search"] == (503, "ERR-9000")


@override_settings(METRICS_ENABLED=True, METRICS_TOKEN=TOKEN)
def test_metrics_keep_answering_with_either_down(api, redis_down):
    scrape = {"HTTP_AUTHORIZATION": f"Bearer {TOKEN}"}
    assert api.get("/metrics", **scrape).status_code == 200

    with connection.execute_wrapper(database_down):
        assert api.get("/metrics", **scrape).status_code == 200


def test_the_pages_for_people_need_neither_to_render(api, redis_down):
    with connection.execute_wrapper(database_down):
        assert api.get("/").status_code == 200
