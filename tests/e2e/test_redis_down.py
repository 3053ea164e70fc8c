"""A real Redis killed under requests to a real gunicorn (docs/operators/production.md "When Redis
is down"): what does not need Redis's data keeps working, the rate limits open with
their metric and log line, what needs it answers 503 ERR-9002 with Retry-After in JSON
and NDC, /health stays 200 and says `degraded`; Redis started again, all is normal."""

import threading
import time
from datetime import timedelta

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from tests.e2e.servers import RedisServer, gunicorn, server_env_on_test_database, wait_until_ready
from tests.ndc.conftest import air_shopping
from tests.offers.conftest import network, search_body  # noqa: F401 (the network fixture)
from tests.orders.conftest import booking_body
from tests.sellers.factories import ApiKeyFactory, PartnerFactory, SellerFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True, serialized_rollback=True)]

LIMIT = 20  # requests a minute: the outage sends more than two windows' worth
METRICS_TOKEN = "scrape-0123456789-redis-down"


@pytest.fixture
def redis_server(tmp_path):
    server = RedisServer(tmp_path / "redis.log")
    server.start()
    yield server
    server.stop_if_running()


def opened(url: str) -> float:
    """airline_rate_limit_redis_down_total{fallback="open"} as the node reports it."""
    text = requests.get(
        url + "/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"}, timeout=10
    ).text
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if (
                sample.name == "airline_rate_limit_redis_down_total"
                and sample.labels.get("fallback") == "open"
            ):
                return sample.value
    return 0.0


class Retrieves(threading.Thread):
    """A client reading one order in a loop: the requests Redis is killed under."""

    def __init__(self, url: str, headers: dict[str, str]) -> None:
        super().__init__(daemon=True)
        self.url, self.headers = url, headers
        self.stop = threading.Event()
        self.statuses: list[int] = []

    def run(self) -> None:
        while not self.stop.is_set():
            self.statuses.append(
                requests.get(self.url, headers=self.headers, timeout=10).status_code
            )


def test_redis_killed_stops_only_what_needs_its_data(tmp_path, network, redis_server):  # noqa: F811
    partner = PartnerFactory()
    SellerFactory(partner=partner, is_default=True)
    issued = ApiKeyFactory(partner=partner, requests_per_minute=LIMIT, agency_code="AGT1")
    env = {
        **server_env_on_test_database(),
        "REDIS_URL": f"redis://127.0.0.1:{redis_server.port}/0",
        "METRICS_ENABLED": "1",
        "METRICS_TOKEN": METRICS_TOKEN,
        "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "metrics"),
    }
    day = network + timedelta(days=5)
    search = search_body(("PVD", "CHS", day), passengers=[{"type": "ADT"}])

    with gunicorn(env, tmp_path / "server.log", workers=2) as server:
        assert wait_until_ready(server).status_code == 200
        token = requests.post(
            server.url + "/auth/token", headers={"x-api-key": issued.raw}, timeout=10
        ).json()["access_token"]
        auth = {"Authorization": f"Bearer {token}"}
        offers = requests.post(
            server.url + "/json/v1/offers", json=search, headers=auth, timeout=30
        ).json()["data"]["offers"]
        selection = {
            "selections": [
                {
                    "offerId": offers[0]["offerId"],
                    "offerItemIds": [offers[0]["offerItems"][0]["offerItemId"]],
                }
            ],
            "passengers": [{"type": "ADT"}],
        }
        priced = requests.post(
            server.url + "/json/v1/offers/price", json=selection, headers=auth, timeout=30
        )
        booked = requests.post(
            server.url + "/json/v1/orders",
            json=booking_body(priced.json()["data"]),
            headers=auth,
            timeout=30,
        )
        assert booked.status_code == 201, booked.text
        order_url = server.url + f"/json/v1/orders/{booked.json()['data']['order']['orderId']}"
        assert requests.get(server.url + "/health", timeout=5).json()["dependencies"] == {
            "redis": "up"
        }
        opened_before = opened(server.url)

        reader = Retrieves(order_url, auth)
        reader.start()
        while len(reader.statuses) < 3:
            time.sleep(0.01)  # waiting for the reader's first answers, not timing behaviour
        redis_server.kill()
        killed_at = len(reader.statuses)
        while len(reader.statuses) < killed_at + 5:
            time.sleep(0.01)
        reader.stop.set()
        reader.join(timeout=30)

        # Redis down: keys, orders and the rate limits' fallback need none of its data.
        health = requests.get(server.url + "/health", timeout=5)
        new_token = requests.post(
            server.url + "/auth/token", headers={"x-api-key": issued.raw}, timeout=10
        )
        started = time.monotonic()
        over_the_limit = [
            requests.get(server.url + "/json/v1/whoami", headers=auth, timeout=10).status_code
            for _ in range(2 * LIMIT + 6)
        ]
        per_request = (time.monotonic() - started) / len(over_the_limit)
        listed = requests.get(server.url + "/json/v1/orders", headers=auth, timeout=10)
        searched = requests.post(
            server.url + "/json/v1/offers", json=search, headers=auth, timeout=30
        )
        repriced = requests.post(
            server.url + "/json/v1/offers/price", json=selection, headers=auth, timeout=30
        )
        ndc = requests.post(
            server.url + "/ndc/v1/AirShopping",
            data=air_shopping(("PVD", "CHS", day)),
            headers={**auth, "Content-Type": "application/xml"},
            timeout=30,
        )
        cancelled = requests.patch(
            order_url,
            json={"changes": [{"type": "CancelUnpaidOrder"}]},
            headers=auth,
            timeout=30,
        )
        opened_during = opened(server.url)

        # Redis back on the same port: all normal again.
        redis_server.start()
        deadline = time.monotonic() + 30
        while requests.get(server.url + "/health", timeout=5).json()["degraded"]:
            assert time.monotonic() < deadline, "health still degraded"
            time.sleep(0.1)  # polling a restarting dependency, not timing behaviour
        # Counting in Redis again, and the worker that found Redis gone saying so: the
        # requests may reach the other worker first, which never lost its counts.
        while (
            int(
                requests.get(server.url + "/json/v1/whoami", headers=auth, timeout=10).headers[
                    "X-RateLimit-Remaining"
                ]
            )
            == LIMIT
            or "rate limits counted in Redis again" not in server.output()
        ):
            assert time.monotonic() < deadline, "rate limits still open"
            time.sleep(0.1)  # each worker asks Redis again within a second
        searched_again = requests.post(
            server.url + "/json/v1/offers", json=search, headers=auth, timeout=30
        )
        log = server.output()

    assert set(reader.statuses) == {200}, reader.statuses
    assert health.status_code == 200
    assert health.json()["status"] == "ok"
    assert (health.json()["degraded"], health.json()["dependencies"]) == (True, {"redis": "down"})
    assert new_token.status_code == 200
    assert set(over_the_limit) == {200}  # more than two windows' allowance: the limit is open
    assert per_request < 0.5  # a refused connection, not a timeout of seconds
    assert opened_during - opened_before >= len(over_the_limit)
    assert "rate limits open: Redis unreachable" in log
    assert listed.status_code == 200
    assert listed.json()["data"]["orders"]
    assert cancelled.status_code == 200, cancelled.text
    assert cancelled.json()["data"]["order"]["statusCode"] == "CANCELLED"
    for refused in (searched, repriced):
        assert refused.status_code == 503, refused.text
        assert refused.json()["error"]["code"] == "ERR-9002"
        assert refused.headers["Retry-After"] == "5"
    assert ndc.status_code == 503, ndc.text
    assert b"ERR-9002" in ndc.content
    assert ndc.headers["Retry-After"] == "5"
    assert "rate limits counted in Redis again" in log
    assert searched_again.status_code == 201, searched_again.text
