"""What a hostile body costs the worker that reads it (issue 28 item 1): every body of the
bounded set (tests/hostile.py) sent to every JSON write endpoint of a real gunicorn
worker, the worker's own CPU time (from /proc) measured around each, and its answer.

Target: no request costs more than 50 ms of worker CPU per MiB of body. The set's
bodies are at most 1 MiB (the limit), so no request may cost more than 50 ms, whatever
its size: a small hostile body must not cost a large one's budget either. Each body is
sent REPEATS times and the mean taken, /proc counting in clock ticks (10 ms).

`make fuzz` runs this with `-s`, printing the table of figures.
"""

import statistics

import pytest
import requests

from tests.e2e.servers import (
    cpu_seconds,
    gunicorn,
    server_env_on_test_database,
    wait_until_ready,
    worker_pids,
)
from tests.hostile import hostile_bodies
from tests.offers.conftest import network  # noqa: F401 (the network fixture)
from tests.sellers.factories import ApiKeyFactory, PartnerFactory, SellerFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True, serialized_rollback=True)]

MIB = 1024 * 1024
BUDGET_SECONDS = 0.050  # per request: the budget of a 1 MiB body (issue 28 "Targets")
REPEATS = 5
MAX_ANSWER_BYTES = 16 * 1024  # what an error may echo: 20 fields and a count
ENDPOINTS = [
    ("POST", "/json/v1/offers"),
    ("POST", "/json/v1/offers/price"),
    ("POST", "/json/v1/orders"),
    ("PATCH", "/json/v1/orders/ABC123"),
    ("POST", "/json/v1/webhooks"),
]


def test_no_hostile_body_costs_more_than_its_budget(tmp_path, network):  # noqa: F811
    partner = PartnerFactory()
    SellerFactory(partner=partner, is_default=True)
    issued = ApiKeyFactory(partner=partner, requests_per_minute=10**8)
    env = {**server_env_on_test_database(), "GUNICORN_MAX_REQUESTS": "0"}

    rows = []
    with gunicorn(env, tmp_path / "server.log", workers=1) as server:
        assert wait_until_ready(server).status_code == 200
        [worker] = worker_pids(server.pid)
        token = requests.post(
            server.url + "/auth/token", headers={"x-api-key": issued.raw}, timeout=10
        ).json()["access_token"]
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        with requests.Session() as client:
            for name, body in hostile_bodies():
                for method, path in ENDPOINTS:
                    costs = []
                    for _ in range(REPEATS):
                        before = cpu_seconds(worker)
                        answer = client.request(
                            method, server.url + path, data=body, headers=headers, timeout=30
                        )
                        costs.append(cpu_seconds(worker) - before)
                        assert answer.status_code in (404, 422), (name, path, answer.text[:300])
                        assert answer.headers["Content-Type"] == "application/json"
                        assert len(answer.content) <= MAX_ANSWER_BYTES, (name, path)
                    error = answer.json()["error"]
                    rows.append((name, len(body), method, path, statistics.mean(costs), error))

    print(f"\n{'body':20} {'KiB':>6} {'endpoint':32} {'CPU ms':>7} {'ms/MiB':>8}  answer")
    for name, size, method, path, cost, error in rows:
        print(
            f"{name:20} {size / 1024:6.0f} {method + ' ' + path:32} {cost * 1000:7.1f} "
            f"{cost * 1000 / (size / MIB):8.1f}  {error['code']} {error['description'][:60]}"
        )
    assert all(cost <= BUDGET_SECONDS for *_, cost, _ in rows), [
        (name, path, round(cost * 1000)) for name, _, _, path, cost, _ in rows if cost > 0.05
    ]
    # The probe's bodies: refused for their size of object, nothing echoed per property.
    keys = [error for name, *_, error in rows if name in ("keys-top", "keys-nested")]
    assert all("at most 1,000 properties" in e["description"] for e in keys)
