"""Delivery that keeps up with its load (issue 17's 50 events/s): the worker runs rounds
back to back while there is work, not one a second, without starving its other jobs;
and connections to an endpoint are kept open between deliveries."""

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from airline.worker import Job, run_forever
from tests.orders.test_worker import FakeTime
from tests.webhooks.conftest import Received, verifies
from webhooks import delivery
from webhooks.addresses import Target
from webhooks.delivery import webhooks_deliver_due
from webhooks.models import WebhookDelivery
from webhooks.services import endpoint_ping, endpoint_register

pytestmark = pytest.mark.usefixtures("loopback_allowed")


@pytest.fixture(autouse=True)
def _no_kept_connections() -> Iterator[None]:
    yield
    delivery.sessions_close()


def pings(seller, url, count, now):
    registered = endpoint_register(seller=seller, url=url, events=[], now=now)
    for _ in range(count):
        endpoint_ping(seller=seller, webhook_id=registered.endpoint.webhook_id, now=now)
    return registered


def test_a_backlog_larger_than_a_round_goes_out_in_one_run(
    db, default_seller, receiver, clock, settings
):
    settings.WEBHOOK_PER_ENDPOINT = 4
    pings(default_seller, receiver.url, 10, clock.at)

    assert webhooks_deliver_due() == {"delivered": 10, "retrying": 0, "failed": 0}

    assert len(receiver.delivered()) == 10
    assert set(WebhookDelivery.objects.values_list("status", flat=True)) == {"DELIVERED"}


def test_the_budget_ends_a_run_after_the_round_under_way(
    db, default_seller, receiver, clock, settings
):
    settings.WEBHOOK_PER_ENDPOINT = 4
    pings(default_seller, receiver.url, 10, clock.at)

    assert webhooks_deliver_due(budget=0) == {"delivered": 4, "retrying": 0, "failed": 0}
    assert webhooks_deliver_due(budget=0)["delivered"] == 4


def test_failures_end_a_run_they_are_not_due_again_until_their_backoff(
    db, default_seller, receiver, clock
):
    receiver.statuses = [500, 500]
    pings(default_seller, receiver.url, 2, clock.at)

    assert webhooks_deliver_due() == {"delivered": 0, "retrying": 2, "failed": 0}
    assert len(receiver.received) == 2


def test_a_busy_job_runs_again_at_once_and_the_others_still_get_their_turn(db):
    fake, stop, ran = FakeTime(), threading.Event(), []
    busy_rounds = iter(range(10))

    def deliver():
        ran.append(("deliver", fake.now - 1000))
        fake.now += 0.5  # a round takes half a second
        return {"delivered": 1} if next(busy_rounds, None) is not None else {}

    def sweep():
        ran.append(("sweep", fake.now - 1000))
        if fake.now - 1000 >= 6:
            stop.set()
        return {}

    run_forever(
        [Job("deliver", 1, deliver, again_while_busy=True), Job("sweep", 2, sweep)],
        stop=stop,
        clock=fake.clock,
        sleep=fake.sleep,
    )

    delivered_at = [t for name, t in ran if name == "deliver"]
    # Ten busy rounds and the idle one that ends them, back to back; then its interval.
    assert delivered_at[:11] == [0.5 * n for n in range(11)]
    assert delivered_at[11] == 6.5  # the idle round's 0.5 s, the sweep's turn, then 1 s
    # The sweep is due at 2.5 and runs after the round under way, amid the busy ones.
    assert [t for name, t in ran if name == "sweep"][:3] == [0.5, 3.0, 5.5]


@pytest.fixture
def keep_alive_receiver() -> Iterator[dict]:
    """An HTTP/1.1 receiver that keeps connections open and notes each request's client
    port (one port: one connection)."""
    seen: dict = {"ports": [], "requests": []}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            seen["ports"].append(self.client_address[1])
            seen["requests"].append((dict(self.headers.items()), body))
            self.send_response(204)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    seen["url"] = f"http://127.0.0.1:{server.server_port}/hooks"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield seen
    server.shutdown()
    server.server_close()


def test_deliveries_to_an_endpoint_reuse_one_connection(
    db, default_seller, keep_alive_receiver, clock, settings
):
    settings.WEBHOOK_THREADS = 1  # one send at a time: one connection is enough
    registered = pings(default_seller, keep_alive_receiver["url"], 6, clock.at)

    assert webhooks_deliver_due()["delivered"] == 6
    for _ in range(2):
        webhook_id = registered.endpoint.webhook_id
        endpoint_ping(seller=default_seller, webhook_id=webhook_id, now=clock.at)
    assert webhooks_deliver_due()["delivered"] == 2  # a later run too

    assert len(keep_alive_receiver["ports"]) == 8
    assert len(set(keep_alive_receiver["ports"])) == 1
    for headers, body in keep_alive_receiver["requests"]:
        assert verifies(registered.secret, Received(headers, body, 204))


def test_a_host_resolving_elsewhere_gets_a_connection_of_its_own():
    before = Target("https://hooks.example/x", "https", "hooks.example", 443, "93.184.216.34")
    after = Target("https://hooks.example/x", "https", "hooks.example", 443, "93.184.216.35")

    assert delivery._session(before) is delivery._session(before)
    assert delivery._session(after) is not delivery._session(before)
