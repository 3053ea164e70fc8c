"""Two app nodes (two gunicorn masters, two workers each, on different ports) on one
PostgreSQL and one Redis behave as one (issue 18 item 7; README "More than one node"):
a schedule loaded with `manage.py load_schedule` and an aircraft type edited in the back
office reach every worker of both within seconds, searches keep answering from the old
index while the new one is built, and a node with a different SECRET_KEY is refused."""

import subprocess
import sys
import time
from datetime import time as clock_time
from datetime import timedelta
from itertools import cycle, pairwise

import pytest
import requests

from airline.fares.services import fares_ensure_demo
from airline.network.demo_fleet import DEMO_FLEET
from airline.network.demo_schedule import distance_km
from airline.network.models import AircraftType
from airline.network.services import fleet_ensure
from sellers.models import Partner
from tests.e2e.servers import (
    REPO,
    free_port,
    gunicorn,
    manage,
    server_env_on_test_database,
    wait_until_ready,
)
from tests.network.ssim_builder import Leg, ssim_file
from tests.offers.conftest import first_day, search_body
from tests.sellers.factories import ApiKeyFactory, PartnerFactory, SellerFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True, serialized_rollback=True)]

BOTH = {"MX101", "MX103"}
PROMISED_SECONDS = 15  # README: VERSION_CHECK_SECONDS plus a build, with room for a busy CI
SLOWEST_SEARCH_SECONDS = 1.0  # a search that waited for a build would take the build's time
# Other flights, so that a build is not instant (about 6,000 dated legs).
FILLER = ["BOS", "JFK", "ATL", "MIA", "PHL", "DCA", "RDU", "ORF", "TPA", "CLT"]


def schedule(tmp_path, *pvd_chs: int):
    """PVD-CHS flown daily by the flights numbered `pvd_chs`, plus filler flights between
    other stations (winter only: their UTC offsets stay -5)."""
    start = first_day()
    end = start + timedelta(days=100)
    legs = [
        Leg(number, "PVD", "CHS", clock_time(7 + n, 0), clock_time(9 + n, 5), start, end)
        for n, number in enumerate(pvd_chs)
    ]
    pairs = [(o, d) for o, d in pairwise(FILLER * 7) if o != d][:60]
    for n, (origin, destination) in enumerate(pairs):
        departs, arrives = clock_time(6 + n % 12, 0), clock_time(7 + n % 12, 30)
        legs.append(Leg(1000 + n, origin, destination, departs, arrives, start, end))
    path = tmp_path / f"schedule-{'-'.join(map(str, pvd_chs))}.ssim"
    path.write_text(ssim_file(legs))
    return path


def env_of_node(**overrides):
    """A node as production runs one: indexes rebuilt off the request path."""
    return {
        **server_env_on_test_database(),
        "NETWORK_REBUILD_IN_BACKGROUND": "1",
        "NETWORK_WARM_ON_HEALTH_CHECK": "1",
        **overrides,
    }


def bearer(node, raw_key):
    token = requests.post(node.url + "/auth/token", headers={"x-api-key": raw_key}, timeout=5)
    return {"Authorization": f"Bearer {token.json()['access_token']}"}


def searched(node, headers, day):
    """(flight numbers, carrier aircraft codes, seconds) of one PVD-CHS search."""
    body = search_body(("PVD", "CHS", day))
    started = time.monotonic()
    response = requests.post(node.url + "/json/v1/offers", json=body, headers=headers, timeout=10)
    took = time.monotonic() - started
    assert response.status_code == 201, response.text
    flights = response.json()["data"]["offers"]
    numbers = {n for o in flights for n in o["offerItems"][0]["flight"]["flightNumbers"]}
    codes = {
        leg["carrierAircraftTypeCode"]
        for o in flights
        for segment in o["offerItems"][0]["flight"]["segments"]
        for leg in segment["legs"]
    }
    return numbers, codes, took


def until_every_worker_shows(nodes, headers, day, shows):
    """Search both nodes in turn until each answered `shows` eight times running (each
    node has two workers, each with its own index): every answer, and its latency."""
    answers, running = [], dict.fromkeys([n.url for n in nodes], 0)
    deadline = time.monotonic() + PROMISED_SECONDS
    for node in cycle(nodes):
        if min(running.values()) >= 8 or time.monotonic() > deadline:
            return answers
        answer = searched(node, headers, day)
        answers.append((node.url, *answer))
        running[node.url] = running[node.url] + 1 if shows(answer) else 0


def test_a_schedule_load_and_a_fleet_edit_reach_both_nodes_without_stalling_searches(tmp_path):
    partner = PartnerFactory()
    SellerFactory(partner=partner, is_default=True)
    raw = ApiKeyFactory(partner=Partner.objects.get(pk=partner.pk), requests_per_minute=10**8).raw
    fleet_ensure(DEMO_FLEET)
    fares_ensure_demo([("PVD", "CHS", distance_km("PVD", "CHS"))])
    env = env_of_node()
    manage(env, "load_schedule", str(schedule(tmp_path, 101)))
    day = first_day() + timedelta(days=5)

    with (
        gunicorn(env, tmp_path / "a.log", workers=2) as a,
        gunicorn(env, tmp_path / "b.log", workers=2) as b,
    ):
        assert wait_until_ready(a).status_code == 200
        assert wait_until_ready(b).status_code == 200
        headers = bearer(a, raw)  # a token from one node is good on the other
        nodes = (a, b)
        warm = until_every_worker_shows(nodes, headers, day, lambda r: r[0] == {"MX101"})

        manage(env, "load_schedule", str(schedule(tmp_path, 101, 103)))  # adds MX103
        reloaded = until_every_worker_shows(nodes, headers, day, lambda r: r[0] == BOTH)

        kind = AircraftType.objects.get(iata_code="E75")
        kind.carrier_code = "E7Q"
        kind.save()  # as the back office saves it
        edited = until_every_worker_shows(nodes, headers, day, lambda r: r[1] == {"E7Q"})

    assert {url for url, *_ in warm} == {a.url, b.url}
    # Both nodes serve the new schedule within the promised time...
    assert all(n == BOTH for _, n, _, _ in reloaded[-16:]), reloaded
    # ... and until they do, from the old index, never waiting for a build.
    assert {frozenset(n) for _, n, _, _ in reloaded} == {frozenset({"MX101"}), frozenset(BOTH)}
    first_answers = {url: n for url, n, *_ in reversed(reloaded)}  # each node's first
    assert first_answers == {a.url: {"MX101"}, b.url: {"MX101"}}
    assert max(took for *_, took in reloaded) < SLOWEST_SEARCH_SECONDS
    # The aircraft type edit, with no schedule load, reaches every worker too.
    assert all(codes == {"E7Q"} for _, _, codes, _ in edited[-16:]), edited
    assert max(took for *_, took in edited) < SLOWEST_SEARCH_SECONDS


def test_a_node_with_another_secret_key_refuses_to_start(tmp_path):
    with gunicorn(env_of_node(), tmp_path / "a.log") as a:
        assert requests.get(a.url + "/health", timeout=5).status_code in (200, 503)
        bind = f"127.0.0.1:{free_port()}"
        other = subprocess.run(
            [sys.executable, "-m", "gunicorn", "airline.wsgi", "--bind", bind],
            cwd=REPO,
            env=env_of_node(SECRET_KEY="a-different-key-" + "x" * 40),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        still_up = requests.get(a.url + "/health", timeout=5)

    assert other.returncode != 0
    assert "Refusing to start" in other.stderr + other.stdout
    assert "different SECRET_KEY" in other.stderr + other.stdout
    assert still_up.status_code in (200, 503)  # the running node is untouched
