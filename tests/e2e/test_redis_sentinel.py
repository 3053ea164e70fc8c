"""The service on Redis behind Sentinel (REDIS_SENTINELS): a real master, its replica and
a sentinel, a real gunicorn. The master SIGKILLed: the sentinel promotes the replica, the
service follows it, every answer meanwhile is a clean 503, and the offers stored before
the kill (replicated) are still there to price and book."""

import time
from datetime import timedelta

import pytest
import redis
import requests

from tests.e2e.servers import (
    RedisServer,
    free_port,
    gunicorn,
    server_env_on_test_database,
    wait_until_ready,
)
from tests.offers.conftest import network, search_body  # noqa: F401 (the network fixture)
from tests.orders.conftest import booking_body
from tests.sellers.factories import ApiKeyFactory, PartnerFactory, SellerFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True, serialized_rollback=True)]

MASTER_NAME = "airline-test"
FAILOVER_SECONDS = 30  # the most a promotion may take here before the test gives up


def until(check, what: str, seconds: float = FAILOVER_SECONDS):
    """Poll `check` until it returns something true (another process's state)."""
    deadline = time.monotonic() + seconds
    while not (found := check()):
        assert time.monotonic() < deadline, what
        time.sleep(0.1)  # polling other processes, not timing behaviour
    return found


@pytest.fixture
def sentinel_setup(tmp_path):
    master = RedisServer(tmp_path / "master.log")
    master.start()
    replica = RedisServer(tmp_path / "replica.log", "--replicaof", "127.0.0.1", str(master.port))
    replica.start()
    until(
        lambda: redis.Redis(port=replica.port).info("replication")["master_link_status"] == "up",
        "the replica did not sync",
    )
    config = tmp_path / "sentinel.conf"  # the sentinel rewrites it: a file of its own
    config.write_text(
        f"sentinel monitor {MASTER_NAME} 127.0.0.1 {master.port} 1\n"
        f"sentinel down-after-milliseconds {MASTER_NAME} 500\n"
        f"sentinel failover-timeout {MASTER_NAME} 5000\n"
    )
    sentinel = RedisServer(tmp_path / "sentinel.log", str(config), "--sentinel", port=free_port())
    sentinel.start()
    until(
        lambda: redis.Redis(port=sentinel.port).sentinel_slaves(MASTER_NAME),
        "the sentinel did not find the replica",
    )
    yield master, replica, sentinel
    for server in (sentinel, replica, master):
        server.stop_if_running()


def test_a_sentinel_failover_loses_no_offer(tmp_path, network, sentinel_setup):  # noqa: F811
    master, replica, sentinel = sentinel_setup
    partner = PartnerFactory()
    SellerFactory(partner=partner, is_default=True)
    issued = ApiKeyFactory(partner=partner, requests_per_minute=100_000)
    env = server_env_on_test_database()
    del env["REDIS_URL"]
    env.update(
        REDIS_SENTINELS=f"127.0.0.1:{sentinel.port}",
        REDIS_SENTINEL_MASTER=MASTER_NAME,
        REDIS_SENTINEL_DB="0",
    )
    day = network + timedelta(days=5)

    with gunicorn(env, tmp_path / "server.log", workers=2) as server:
        assert wait_until_ready(server).status_code == 200
        token = requests.post(
            server.url + "/auth/token", headers={"x-api-key": issued.raw}, timeout=10
        ).json()["access_token"]
        auth = {"Authorization": f"Bearer {token}"}
        offers = requests.post(
            server.url + "/json/v1/offers",
            json=search_body(("PVD", "CHS", day), passengers=[{"type": "ADT"}]),
            headers=auth,
            timeout=30,
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

        def price() -> requests.Response:
            return requests.post(
                server.url + "/json/v1/offers/price", json=selection, headers=auth, timeout=30
            )

        priced = price()
        assert priced.status_code == 201, priced.text
        stored_in_master = redis.Redis(port=master.port).dbsize()
        assert redis.Redis(port=master.port).wait(1, 5000) == 1  # on the replica too
        health_before = requests.get(server.url + "/health", timeout=5).json()

        master.kill()
        answers = []

        def repriced() -> requests.Response | None:
            response = price()
            answers.append(response)
            return response if response.status_code == 201 else None

        until(repriced, "pricing did not come back after the failover")
        booked = requests.post(
            server.url + "/json/v1/orders",
            json=booking_body(priced.json()["data"]),
            headers=auth,
            timeout=30,
        )
        health_after = requests.get(server.url + "/health", timeout=5).json()

    promoted = redis.Redis(port=sentinel.port).sentinel_get_master_addr_by_name(MASTER_NAME)
    assert promoted == (b"127.0.0.1", replica.port)
    assert stored_in_master > 0
    assert health_before["dependencies"] == {"redis": "up"}
    for failed in answers[:-1]:  # while no master answered: clean 503s, never a 500
        assert failed.status_code == 503, failed.text
        assert failed.json()["error"]["code"] == "ERR-9002"
        assert failed.headers["Retry-After"] == "5"
    # The search's offer and the priced offer were both on the replica: none was lost.
    assert answers[-1].status_code == 201
    assert booked.status_code == 201, booked.text
    assert health_after["dependencies"] == {"redis": "up"}
