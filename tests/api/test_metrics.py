"""GET /metrics (README "Monitoring"): off unless enabled, refused without the token or
from another network, and when answered, the families the README names, moved by the
requests, bookings and failures they count."""

import socket

import pytest
from django.db import OperationalError, connection
from django.test import override_settings
from prometheus_client.parser import text_string_to_metric_families

from airline.api import metrics
from orders.booking.holds import holds_expire
from orders.models import OrderEvent
from tests.conftest import bearer
from tests.orders import conftest as orders
from tests.orders.conftest import CARD, book, booking_body, price_offer
from tests.orders.test_credit_payment import CARD_FIELDS, credit, issue

pytestmark = pytest.mark.django_db

# The booking tests' network, bearer headers and priced offer.
network, auth, travel_day, priced = orders.network, orders.auth, orders.travel_day, orders.priced

TOKEN = "scrape-me-0123456789"
ENABLED = {
    "METRICS_ENABLED": True,
    "METRICS_TOKEN": TOKEN,
    "METRICS_ALLOWED_CIDRS": ["127.0.0.1/32", "10.1.0.0/16"],
}


@pytest.fixture
def metrics_on():
    with override_settings(**ENABLED):
        yield


def scrape(api, **extra):
    return api.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}", **extra)


def samples(api) -> dict[tuple, float]:
    """Every sample of a scrape: (name, sorted labels) -> value."""
    response = scrape(api)
    assert response.status_code == 200, response.content
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(response.content.decode())
        for s in family.samples
    }


def value(api, name: str, **labels) -> float:
    return samples(api).get((name, tuple(sorted(labels.items()))), 0.0)


class TestAccess:
    def test_it_is_an_unknown_path_unless_enabled(self, api):
        unknown = api.get("/no-such-page")

        response = scrape(api)

        assert response.status_code == 404 == unknown.status_code
        assert response["Content-Type"] == unknown["Content-Type"] == "application/json"
        assert response.json()["error"]["code"] == "ERR-1000"

    def test_it_refuses_a_request_without_the_token(self, api, metrics_on):
        response = api.get("/metrics")

        assert response.status_code == 401
        assert response["Content-Type"].startswith("text/plain")
        assert response["WWW-Authenticate"] == 'Bearer realm="metrics"'
        assert b"airline_" not in response.content

    def test_it_refuses_a_wrong_token(self, api, metrics_on):
        response = api.get("/metrics", **bearer("scrape-me-0123456788"))

        assert response.status_code == 401
        assert response["Content-Type"].startswith("text/plain")

    def test_it_refuses_the_right_token_from_another_network(self, api, metrics_on):
        response = scrape(api, REMOTE_ADDR="192.0.2.7")

        assert response.status_code == 403
        assert response["Content-Type"].startswith("text/plain")
        assert b"airline_" not in response.content

    def test_it_reads_the_client_address_not_a_forwarded_header(self, api, metrics_on):
        response = scrape(api, REMOTE_ADDR="192.0.2.7", HTTP_X_FORWARDED_FOR="127.0.0.1")

        assert response.status_code == 403

    def test_it_answers_any_allowed_network(self, api, metrics_on):
        assert scrape(api, REMOTE_ADDR="10.1.200.3").status_code == 200

    def test_it_answers_the_families_as_prometheus_text(self, api, metrics_on):
        response = scrape(api)

        assert response.status_code == 200
        assert response["Content-Type"].startswith("text/plain; version=")
        assert response["Cache-Control"] == "no-store"
        names = {f.name for f in text_string_to_metric_families(response.content.decode())}
        assert {
            "airline_http_requests",
            "airline_http_request_duration_seconds",
            "airline_bookings_created",
            "airline_holds_expired",
            "airline_storage_errors",
            "airline_holds_due_to_expire",
            "airline_payments_due_to_reconcile",
            "airline_webhook_deliveries_pending",
            "airline_webhook_deliveries_pending_disabled",
            "airline_schedule_bookings_untold",
        } <= names

    def test_it_takes_only_get(self, api, metrics_on):
        response = api.post("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")

        assert response.status_code == 405
        assert response["Allow"] == "GET, HEAD"
        assert response["Content-Type"].startswith("text/plain")

    def test_it_will_not_start_enabled_without_a_token(self, monkeypatch):
        import importlib

        from django.core.exceptions import ImproperlyConfigured

        import airline.settings

        monkeypatch.setenv("METRICS_ENABLED", "1")
        monkeypatch.delenv("METRICS_TOKEN", raising=False)
        with pytest.raises(ImproperlyConfigured, match="METRICS_TOKEN"):
            importlib.reload(airline.settings)
        monkeypatch.delenv("METRICS_ENABLED")
        importlib.reload(airline.settings)


class TestRequests:
    def test_a_request_counts_under_its_route_pattern_and_status(self, api, metrics_on):
        route = {"route": "json/<version:version>/orders/<str:orderId>", "method": "GET"}
        before = samples(api)

        api.get("/json/v1/orders/ABC123")  # no credentials: 401
        api.get("/json/v2/orders/XYZ789")

        after = samples(api)
        count = ("airline_http_requests_total", tuple(sorted({**route, "status": "401"}.items())))
        latency = ("airline_http_request_duration_seconds_count", tuple(sorted(route.items())))
        assert after[count] - before.get(count, 0) == 2
        assert after[latency] - before.get(latency, 0) == 2
        # The raw paths are never labels.
        assert not any("ABC123" in str(key) for key in after)

    def test_unrouted_paths_share_one_label(self, api, metrics_on):
        labels = {"route": "unmatched", "method": "GET", "status": "404"}
        before = value(api, "airline_http_requests_total", **labels)

        api.get("/wp-login.php")
        api.get("/random/1234")

        assert value(api, "airline_http_requests_total", **labels) - before == 2

    def test_an_invented_method_is_one_label(self, api, metrics_on):
        api.generic("BREW", "/health")

        assert any(
            name == "airline_http_requests_total" and ("method", "other") in labels
            for name, labels in samples(api)
        )

    def test_ndc_messages_are_told_apart(self, api, metrics_on):
        api.post("/ndc/v1/AirShopping", b"<x/>", content_type="application/xml")
        api.post("/ndc/v1/NoSuchMessage", b"<x/>", content_type="application/xml")

        routes = {dict(labels).get("route") for name, labels in samples(api)}
        assert "ndc/<version:version>/<str:endpoint>:AirShopping" in routes
        assert "ndc/<version:version>/<str:endpoint>:unknown" in routes


class TestBookings:
    def test_a_hold_and_a_card_booking_count_by_channel_and_payment(
        self, api, auth, priced, travel_day, metrics_on, django_capture_on_commit_callbacks
    ):
        hold = {"channel": "JSON", "payment": "Hold"}
        card = {"channel": "JSON", "payment": "CreditCard"}
        before = samples(api)

        with django_capture_on_commit_callbacks(execute=True):
            assert book(api, auth, booking_body(priced)).status_code == 201
        paid_offer = price_offer(api, auth, travel_day)
        with django_capture_on_commit_callbacks(execute=True):
            assert book(api, auth, booking_body(paid_offer, payment=CARD)).status_code == 201

        after = samples(api)
        for labels in (hold, card):
            key = ("airline_bookings_created_total", tuple(sorted(labels.items())))
            assert after[key] - before.get(key, 0) == 1, labels

    def test_a_booking_an_airline_credit_pays_counts_as_airline_credit(
        self,
        api,
        auth,
        priced,
        travel_day,
        default_seller,
        metrics_on,
        django_capture_on_commit_callbacks,
    ):
        # In full, then a smaller credit with a card for the rest: both AirlineCredit,
        # read from the `paid` event's paidWith, not from the payments read back.
        credited = {"channel": "JSON", "payment": "AirlineCredit"}
        before = value(api, "airline_bookings_created_total", **credited)
        whole = issue(default_seller, "5000.00")
        with django_capture_on_commit_callbacks(execute=True):
            response = book(api, auth, booking_body(priced, payment=credit(whole.code)))
        assert response.status_code == 201, response.content
        part = issue(default_seller, "10.00")
        paid_offer = price_offer(api, auth, travel_day)
        with django_capture_on_commit_callbacks(execute=True):
            response = book(
                api, auth, booking_body(paid_offer, payment=credit(part.code, **CARD_FIELDS))
            )
        assert response.status_code == 201, response.content

        assert value(api, "airline_bookings_created_total", **credited) - before == 2
        paid = OrderEvent.objects.filter(kind=OrderEvent.Kind.PAID).order_by("pk")
        assert [event.detail["paidWith"] for event in paid] == [
            ["Credit"],
            ["Credit", "CreditCard"],
        ]

    def test_a_refused_card_is_no_booking(
        self, api, auth, priced, metrics_on, django_capture_on_commit_callbacks
    ):
        declined = {**CARD, "cardNumber": "4000000000000002"}
        before = value(api, "airline_bookings_created_total", channel="JSON", payment="CreditCard")

        with django_capture_on_commit_callbacks(execute=True):
            response = book(api, auth, booking_body(priced, payment=declined))

        assert response.status_code == 400, response.content
        after = value(api, "airline_bookings_created_total", channel="JSON", payment="CreditCard")
        assert after == before

    def test_a_lapsed_hold_is_due_then_expired(
        self, api, auth, priced, clock, metrics_on, django_capture_on_commit_callbacks
    ):
        with django_capture_on_commit_callbacks(execute=True):
            book(api, auth, booking_body(priced))
        assert value(api, "airline_holds_due_to_expire") == 0
        expired = value(api, "airline_holds_expired_total")

        clock.advance(hours=25)
        assert value(api, "airline_holds_due_to_expire") == 1
        with django_capture_on_commit_callbacks(execute=True):
            assert holds_expire(now=clock.at) == 1

        assert value(api, "airline_holds_due_to_expire") == 0
        assert value(api, "airline_holds_expired_total") - expired == 1


class TestStorageErrors:
    def test_a_database_outage_counts_under_its_code(self, api, auth, priced, metrics_on):
        labels = {"backend": "database", "code": "ERR-9000"}
        order = book(api, auth, booking_body(priced)).json()["data"]["order"]
        before = value(api, "airline_storage_errors_total", **labels)

        def down(execute, sql, params, many, context):
            if "orders_order" in sql:
                raise OperationalError("could not connect to server")
            return execute(sql, params, many, context)

        with connection.execute_wrapper(down):
            response = api.get(f"/json/v1/orders/{order['orderId']}", **auth)

        assert response.json()["error"]["code"] == "ERR-9000"
        assert value(api, "airline_storage_errors_total", **labels) - before == 1

    def test_a_redis_outage_counts_under_its_code(self, api, auth, priced, metrics_on, settings):
        """The offer to book is Redis's: ERR-9002. The key is not, so no ERR-8002."""
        labels = {"backend": "redis", "code": "ERR-9002"}
        before = value(api, "airline_storage_errors_total", **labels)
        unreachable = {
            "default": {**settings.CACHES["default"], "LOCATION": "redis://127.0.0.1:1/0"}
        }

        with override_settings(CACHES=unreachable):
            response = book(api, auth, booking_body(priced))

        assert response.json()["error"]["code"] == "ERR-9002"
        assert value(api, "airline_storage_errors_total", **labels) - before == 1

    def test_the_queues_are_left_out_when_the_database_is_down(self, api, metrics_on):
        def down(execute, sql, params, many, context):
            raise OperationalError("could not connect to server")

        with connection.execute_wrapper(down):
            response = scrape(api)

        assert response.status_code == 200
        assert b"airline_http_requests_total" in response.content
        assert b"airline_holds_due_to_expire" not in response.content


@pytest.fixture
def silent_server():
    """A loopback port that accepts connections and never answers: a database or Redis
    hung rather than down."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        yield listener.getsockname()[1]


class TestDependencies:
    def test_the_database_and_redis_are_up_when_reached(self, api, metrics_on):
        scraped = samples(api)

        assert scraped[("airline_dependency_up", (("dependency", "database"),))] == 1
        assert scraped[("airline_dependency_up", (("dependency", "redis"),))] == 1

    def test_a_database_that_refuses_connections_is_down(self, api, metrics_on, monkeypatch):
        with socket.socket() as closed:
            closed.bind(("127.0.0.1", 0))
            port = closed.getsockname()[1]  # nothing listens once closed
        # The settings a new connection is made from (the open one is left as it is).
        monkeypatch.setitem(connection.settings_dict, "PORT", str(port))
        monkeypatch.setitem(connection.settings_dict, "HOST", "127.0.0.1")

        scraped = samples(api)

        assert scraped[("airline_dependency_up", (("dependency", "database"),))] == 0
        assert scraped[("airline_dependency_up", (("dependency", "redis"),))] == 1

    def test_a_hung_database_and_redis_are_down_within_the_bound(
        self, api, metrics_on, monkeypatch, settings, silent_server
    ):
        monkeypatch.setitem(connection.settings_dict, "PORT", str(silent_server))
        monkeypatch.setitem(connection.settings_dict, "HOST", "127.0.0.1")
        hung = {
            "default": {
                **settings.CACHES["default"],
                "LOCATION": f"redis://127.0.0.1:{silent_server}/0",
            }
        }

        with override_settings(CACHES=hung):
            scraped = samples(api)

        bound = metrics.DEPENDENCY_TIMEOUT_SECONDS + 0.5
        for dependency in ("database", "redis"):
            labels = (("dependency", dependency),)
            assert scraped[("airline_dependency_up", labels)] == 0
            assert scraped[("airline_dependency_check_seconds", labels)] <= bound

    def test_no_redis_gauge_without_redis(self, api, metrics_on, settings):
        settings.REDIS_URL = None

        scraped = samples(api)

        assert ("airline_dependency_up", (("dependency", "redis"),)) not in scraped
        assert scraped[("airline_dependency_up", (("dependency", "database"),))] == 1
