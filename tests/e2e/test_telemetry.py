"""Tracing and error reports of a real gunicorn (docs/operators/monitoring.md): one
card booking paid through Stripe's SDK (against the fake Stripe) exported over OTLP/HTTP
as one trace of its request, its SQL, its Redis calls and its gateway calls; nothing
of either loaded when neither is configured; a webhook delivery of the background worker
traced under its job's round; an unhandled error reported to a Sentry
endpoint without the card number the request carried."""

import json
import subprocess
import sys
from datetime import timedelta

import pytest
import requests

from tests.e2e.servers import REPO, gunicorn, manage, server_env_on_test_database
from tests.gateways import stripe_settings
from tests.offers.conftest import network, search_body  # noqa: F401 (the network fixture)
from tests.orders import conftest as orders
from tests.orders.conftest import CARD, book, booking_body
from tests.receivers import Span, otlp_receiver, sentry_receiver
from tests.sellers.factories import ApiKeyFactory, PartnerFactory, SellerFactory
from tests.webhooks import conftest as webhooks
from tests.webhooks.conftest import register

# The booking tests' bearer headers and priced offer, and the webhook tests' receiver.
auth, travel_day, priced = orders.auth, orders.travel_day, orders.priced
receiver, loopback_allowed = webhooks.receiver, webhooks.loopback_allowed

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True, serialized_rollback=True)]

PARTY = [{"type": "ADT"}]
CARD_NUMBER = CARD["cardNumber"]
SURNAME = "Lovelace"  # the payer's and the first passenger's (tests/orders/conftest.py)
TELEMETRY_VARIABLES = ("OTEL_", "TRACING_", "SENTRY_")


def quiet_env(**overrides: str) -> dict[str, str]:
    """A server's environment on the test database with no tracing or error reports
    configured, whatever this process's environment says, plus `overrides`."""
    env = {
        k: v
        for k, v in server_env_on_test_database().items()
        if not k.startswith(TELEMETRY_VARIABLES)
    }
    return {**env, **overrides}


def headers_of(url: str) -> dict[str, str]:
    partner = PartnerFactory()
    SellerFactory(partner=partner, is_default=True)
    key = ApiKeyFactory(partner=partner, agency_code="ACMEAGT")
    token = requests.post(url + "/auth/token", headers={"x-api-key": key.raw}, timeout=10)
    return {"Authorization": f"Bearer {token.json()['access_token']}"}


def priced_offer(url: str, headers: dict[str, str], day) -> dict:
    found = requests.post(
        url + "/json/v1/offers",
        json=search_body(("PVD", "CHS", day + timedelta(days=8)), passengers=PARTY),
        headers=headers,
        timeout=30,
    ).json()["data"]["offers"]
    offer = found[0]
    answer = requests.post(
        url + "/json/v1/offers/price",
        json={
            "selections": [
                {
                    "offerId": offer["offerId"],
                    "offerItemIds": [offer["offerItems"][0]["offerItemId"]],
                }
            ],
            "passengers": PARTY,
        },
        headers=headers,
        timeout=30,
    )
    assert answer.status_code == 201, answer.text
    return answer.json()["data"]


def ancestors(span: Span, spans: list[Span]) -> list[str]:
    by_id = {s.span_id: s for s in spans}
    chain = []
    while span.parent_id in by_id:
        span = by_id[span.parent_id]
        chain.append(span.span_id)
    return chain


def test_a_card_booking_is_one_trace_of_its_request_sql_and_gateway_calls(
    tmp_path,
    network,  # noqa: F811
    stripe_server,
):
    stripe_env = {name: str(value) for name, value in stripe_settings(stripe_server).items()}
    with otlp_receiver() as collector:
        env = quiet_env(
            **stripe_env,
            OTEL_EXPORTER_OTLP_ENDPOINT=collector.url,
            OTEL_SERVICE_NAME="airline-under-test",
            OTEL_BSP_SCHEDULE_DELAY="100",  # ms between exports, so the test need not wait
        )
        with gunicorn(env, tmp_path / "server.log") as server:
            headers = headers_of(server.url)
            priced = priced_offer(server.url, headers, network)
            booked = requests.post(
                server.url + "/json/v1/orders",
                json=booking_body(priced, payment=CARD),
                headers={**headers, "x-request-id": "trace-this-booking"},
                timeout=60,
            )
            assert booked.status_code == 201, booked.text
            listed = requests.get(
                server.url + "/json/v1/orders",
                params={"lastName": SURNAME},
                headers={**headers, "x-request-id": "trace-this-list"},
                timeout=30,
            )
            assert listed.status_code == 200, listed.text

            request = collector.wait_for_span(
                lambda s: s.attributes.get("airline.request_id") == "trace-this-booking",
                "span of the booking's request",
            )
            listing = collector.wait_for_span(
                lambda s: s.attributes.get("airline.request_id") == "trace-this-list",
                "span of the order list's request",
            )
            log = server.output()

    # The spans of a request end before it does, and are exported in the order they end.
    spans = collector.trace(request.trace_id)
    assert request.kind == "SPAN_KIND_SERVER"
    assert request.name == "POST json/<version:version>/orders"
    assert request.resource["service.name"] == "airline-under-test"
    assert request.resource["airline.process"] == "web"
    below = [s for s in spans if request.span_id in ancestors(s, spans)]
    sql = [s for s in below if s.attributes.get("db.system") == "postgresql"]
    statements = " ".join(str(s.attributes.get("db.statement")) for s in sql)
    assert "orders_order" in statements, statements
    assert "orders_paymentintent" in statements, statements
    assert [s for s in below if s.attributes.get("db.system") == "redis"]
    gateway = [
        s
        for s in below
        if s.kind == "SPAN_KIND_CLIENT"
        and str(s.attributes.get("http.url", s.attributes.get("url.full"))).startswith(
            stripe_server.url + "/v1/payment_intents"
        )
    ]
    assert gateway, [(s.name, s.attributes) for s in below]
    assert all(s.attributes.get("http.status_code", 200) == 200 for s in gateway)
    # The access log's line for the request names its trace.
    line = next(
        json.loads(line)
        for line in log.splitlines()
        if '"request_id":"trace-this-booking"' in line and '"msg":"request"' in line
    )
    assert line["trace_id"] == request.trace_id
    # Neither the card nor a traveller's name leaves in a span: no body, no statement's
    # parameters, no query string.
    assert "lastName" not in str(listing.attributes)
    assert SURNAME not in str(listing.attributes)
    exported = b"".join(collector._inbox.bodies)
    assert CARD_NUMBER.encode() not in exported
    assert SURNAME.encode() not in exported


def test_with_nothing_configured_neither_is_loaded(network):  # noqa: F811
    """The real entry points, as gunicorn runs them (airline/wsgi.py in the master, then
    gunicorn.conf.py's post_fork) with no OTEL_* or SENTRY_DSN: no tracer provider (the
    global one stays OpenTelemetry's proxy, which makes no span), no instrumentation,
    exporter or middleware of OpenTelemetry's, no export thread, no Sentry. (redis-py
    imports OpenTelemetry's API and metrics SDK itself when they are installed, for its
    own metrics, which stay off and cost nothing per command unless configured.)"""
    script = """
import json, runpy, sys, threading
import airline.wsgi
runpy.run_path("gunicorn.conf.py")["post_fork"](None, None)
from django.conf import settings
from opentelemetry import trace
print(json.dumps({
    "provider": type(trace.get_tracer_provider()).__name__,
    "modules": sorted(
        m for m in sys.modules
        if m.startswith(("opentelemetry.instrumentation", "opentelemetry.exporter",
                         "opentelemetry.sdk.trace", "sentry_sdk"))
    ),
    "middleware": [m for m in settings.MIDDLEWARE if "opentelemetry" in m],
    "threads": [t.name for t in threading.enumerate() if t is not threading.main_thread()],
}))
"""

    def run(env: dict[str, str]) -> dict:
        result = subprocess.run(
            [sys.executable, "-c", script],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout.splitlines()[-1])

    nothing = run(quiet_env())

    assert nothing == {
        "provider": "ProxyTracerProvider",
        "modules": [],
        "middleware": [],
        "threads": [],
    }
    # The same entry points with an endpoint named do load it all: the check can fail.
    configured = run(quiet_env(OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:9"))
    assert configured["provider"] == "TracerProvider"
    assert configured["middleware"]
    assert "opentelemetry.instrumentation.psycopg" in configured["modules"]
    assert configured["threads"]  # the batch span processor's


def test_an_unhandled_error_reaches_sentry_without_the_card_number(tmp_path, network):  # noqa: F811
    with sentry_receiver() as sentry:
        # The test URLs, whose crash probe raises with the request's body in its message,
        # as a careless error message would.
        env = quiet_env(SENTRY_DSN=sentry.dsn, DJANGO_SETTINGS_MODULE="tests.e2e.crash_settings")
        with gunicorn(env, tmp_path / "server.log") as server:
            headers = headers_of(server.url)
            crashed = requests.post(
                server.url + "/json/v1/probe/crash?lastName=" + SURNAME,
                json={"payment": CARD},
                headers={**headers, "x-request-id": "report-this-crash"},
                timeout=30,
            )
            assert crashed.status_code == 500
            assert crashed.json()["error"]["code"] == "ERR-9003"

            event = sentry.wait_for_event(
                lambda e: e.get("tags", {}).get("request_id") == "report-this-crash",
                "event of the crash",
            )

    (exception,) = event["exception"]["values"]
    assert exception["type"] == "RuntimeError"
    assert "[Filtered]" in exception["value"]
    assert event["request"]["method"] == "POST"
    assert event["request"]["url"].endswith("/json/v1/probe/crash")
    assert set(event["request"]) == {"method", "url", "headers"}  # no body, no query
    assert "Authorization" not in event["request"]["headers"]
    sent = b"".join(sentry.raw)
    assert CARD_NUMBER.encode() not in sent
    assert SURNAME.encode() not in sent
    assert headers["Authorization"].split()[1].encode() not in sent


def test_a_webhook_delivery_is_traced_under_its_job_round(
    api,
    auth,
    priced,
    receiver,
    loopback_allowed,
):
    register(api, auth, receiver.url)
    booked = book(api, auth, booking_body(priced))
    assert booked.status_code == 201, booked.content

    with otlp_receiver() as collector:
        env = quiet_env(OTEL_EXPORTER_OTLP_ENDPOINT=collector.url, WEBHOOK_ALLOW_LOOPBACK="1")
        manage(env, "run_worker", "--once")  # exports what it holds as it ends
        job = collector.wait_for_span(lambda s: s.name == "job deliver_webhooks", "span of the job")
        spans = collector.trace(job.trace_id)

    assert job.resource["airline.process"] == "worker"
    assert not job.parent_id
    below = [s for s in spans if job.span_id in ancestors(s, spans)]
    (call,) = [s for s in below if s.kind == "SPAN_KIND_CLIENT" and "http.method" in s.attributes]
    assert str(call.attributes.get("http.url")) == receiver.url
    assert [s for s in below if s.attributes.get("db.system") == "postgresql"]
    # The delivery carried the trace on to the seller (W3C trace context).
    (got,) = receiver.delivered()
    assert got.headers["traceparent"].split("-")[1] == job.trace_id
