"""Two app nodes (two gunicorn masters, two workers each, on different ports) on one
PostgreSQL and one Redis behave as one (issue 18 items 7 and 8; README "More than one
node"): a schedule loaded with `manage.py load_schedule` and an aircraft type edited in
the back office reach every worker of both within seconds, searches keep answering from
the old index while the new one is built (never stalling more than a bound, by the
nodes' own clocks), and a node with a different SECRET_KEY is refused. A key revoked is
refused by both at once, one key's rate limit is one budget across both, fifty bookings
racing through both for fewer seats never oversell, and while a node is restarted under
load the other loses no request, the restarted one saying only 503 `loading` until ready,
at once from the first connection it accepts."""

import json
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from datetime import datetime, timedelta
from datetime import time as clock_time
from itertools import cycle, pairwise
from urllib.parse import urlsplit

import pytest
import requests

from airline.api import clock
from airline.fares.services import fares_ensure_demo
from airline.network.demo_fleet import DEMO_FLEET
from airline.network.demo_schedule import distance_km
from airline.network.inventory import inventory_sell
from airline.network.models import AircraftType, LegInventory
from airline.network.services import fleet_ensure
from sellers.models import Partner
from sellers.services import api_key_revoke
from tests.e2e.servers import (
    REPO,
    free_port,
    gunicorn,
    manage,
    server_env_on_test_database,
    server_seconds,
    wait_until_ready,
)
from tests.network.ssim_builder import Leg, ssim_file
from tests.offers.conftest import first_day, search_body
from tests.orders.conftest import booking_body
from tests.sellers.factories import ApiKeyFactory, PartnerFactory, SellerFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True, serialized_rollback=True)]

BOTH = {"MX101", "MX103"}
PROMISED_SECONDS = 15  # README: POLL_SECONDS plus a patch, with a lot of room for a busy CI
SLOWEST_SEARCH_SECONDS = 1.0  # a search that waited for a build would take the build's time
# Issue 18: no search stalls more than 200 ms during a reload, by the node's own clock
# (its access-log line). The background build shares the GIL with its worker's searches;
# with the cyclic collector paused during the build (a full collection walked the new
# index in one 50-100 ms hold) the slowest measured under 0.06 s on a busy 2-core
# machine. A search that waited for the build itself would take 1-5 s.
SLOWEST_SEARCH_SERVER_SECONDS = 0.2
STALE_SECONDS = 1.0  # issue 24: a change served by every worker within 1 s of its commit
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
        "LOG_LEVEL": "INFO",  # the access log, whose durations the stall bound reads
        **overrides,
    }


def request_starts(logs, request_id_prefix):
    """When each node began each request whose x-request-id starts with the prefix (epoch
    seconds, by its access-log line's time less the request's duration)."""
    starts = {}
    for log in logs:
        for line in log.read_text().splitlines():
            if f'"request_id":"{request_id_prefix}' not in line:
                continue
            fields = json.loads(line)
            ended = datetime.fromisoformat(fields["ts"]).timestamp()
            starts[fields["request_id"]] = ended - fields["duration_ms"] / 1000
    return starts


def bearer(node, raw_key):
    token = requests.post(node.url + "/auth/token", headers={"x-api-key": raw_key}, timeout=5)
    return {"Authorization": f"Bearer {token.json()['access_token']}"}


def searched(node, headers, day, request_id="search"):
    """(flight numbers, carrier aircraft codes, seconds) of one PVD-CHS search."""
    body = search_body(("PVD", "CHS", day))
    started = time.monotonic()
    response = requests.post(
        node.url + "/json/v1/offers",
        json=body,
        headers={**headers, "x-request-id": request_id},
        timeout=10,
    )
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


def until_every_worker_shows(nodes, headers, day, shows, tag="search"):
    """Search both nodes in turn until each answered `shows` eight times running (each
    node has two workers, each with its own index): every answer, and its latency. Each
    search's request id is `tag`-n, to find its line in the node's access log."""
    answers, running = [], dict.fromkeys([n.url for n in nodes], 0)
    deadline = time.monotonic() + PROMISED_SECONDS
    for node in cycle(nodes):
        if min(running.values()) >= 8 or time.monotonic() > deadline:
            return answers
        answer = searched(node, headers, day, f"{tag}-{len(answers)}")
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
        committed_by = time.time()  # the command returned: its load had committed
        reloaded = until_every_worker_shows(
            nodes, headers, day, lambda r: r[0] == BOTH, tag="reload"
        )
        for node in cycle(nodes):  # and on, past the stale window, which it checks
            if time.time() > committed_by + STALE_SECONDS + 0.5:
                break
            answer = searched(node, headers, day, f"reload-{len(reloaded)}")
            reloaded.append((node.url, *answer))

        kind = AircraftType.objects.get(iata_code="E75")
        kind.carrier_code = "E7Q"
        kind.save()  # as the back office saves it
        edited = until_every_worker_shows(
            nodes, headers, day, lambda r: r[1] == {"E7Q"}, tag="edit"
        )
    reload_seconds = server_seconds([a.log, b.log], "reload-")
    edit_seconds = server_seconds([a.log, b.log], "edit-")

    assert {url for url, *_ in warm} == {a.url, b.url}
    # Both nodes serve the new schedule within the promised time...
    assert all(n == BOTH for _, n, _, _ in reloaded[-16:]), reloaded
    # ... and until they do (their pollers patch the index within about POLL_SECONDS of the
    # commit, so a node's first answer may already be the new one), from the old index,
    # never waiting for a build.
    assert {frozenset(n) for _, n, _, _ in reloaded} <= {frozenset({"MX101"}), frozenset(BOTH)}
    assert max(took for *_, took in reloaded) < SLOWEST_SEARCH_SECONDS
    # Issue 24: every worker of both nodes serves a change within STALE_SECONDS of its
    # commit: each search the nodes began later than that shows the new schedule.
    began = request_starts([a.log, b.log], "reload-")
    late = [
        n
        for i, (_, n, _, _) in enumerate(reloaded)
        if began[f"reload-{i}"] > committed_by + STALE_SECONDS
    ]
    assert late, "no search began after the stale window"
    assert all(n == BOTH for n in late), (reloaded, began, committed_by)
    # No search stalled behind the rebuild, by the nodes' own clocks.
    assert len(reload_seconds) == len(reloaded), reload_seconds
    assert max(reload_seconds.values()) <= SLOWEST_SEARCH_SERVER_SECONDS, reload_seconds
    # The aircraft type edit, with no schedule load, reaches every worker too.
    assert all(codes == {"E7Q"} for _, _, codes, _ in edited[-16:]), edited
    assert max(took for *_, took in edited) < SLOWEST_SEARCH_SECONDS
    assert len(edit_seconds) == len(edited), edit_seconds
    assert max(edit_seconds.values()) <= SLOWEST_SEARCH_SERVER_SECONDS, edit_seconds
    print(
        f"server time of searches during the reload: max {max(reload_seconds.values()):.3f} s"
        f" over {len(reload_seconds)}; during the fleet edit: max"
        f" {max(edit_seconds.values()):.3f} s over {len(edit_seconds)}"
    )


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


RATE = 12  # requests a minute for the rate-limited key
RATE_REQUESTS = 40  # more than the budget, sent through both nodes at once
BOOKINGS = 50
TWO = [{"type": "ADT"}, {"type": "ADT"}]
SEATS_LEFT = 7  # room for three parties of two, not four: one seat must stay unsold
HEALTH_AT_ONCE_SECONDS = 0.5  # a load balancer's probe would time out well above this


def test_two_nodes_share_revocations_rate_limits_and_seats_and_survive_a_restart(tmp_path):
    partner = PartnerFactory()
    SellerFactory(partner=partner, is_default=True)
    partner = Partner.objects.get(pk=partner.pk)
    busy = ApiKeyFactory(partner=partner, requests_per_minute=10**8).raw
    doomed = ApiKeyFactory(partner=partner, requests_per_minute=10**8)
    fleet_ensure(DEMO_FLEET)
    fares_ensure_demo([("PVD", "CHS", distance_km("PVD", "CHS"))])
    env = env_of_node()
    manage(env, "load_schedule", str(schedule(tmp_path, 101)))
    created = manage(env, "create_api_key", "--partner", partner.code, "--rate", str(RATE))
    limited = created.strip().splitlines()[-1]  # the command prints the secret last
    day = first_day() + timedelta(days=5)

    with (
        gunicorn(env, tmp_path / "b.log", workers=2) as b,
        ExitStack() as a_running,
    ):
        a = a_running.enter_context(gunicorn(env, tmp_path / "a.log", workers=2))
        assert wait_until_ready(a).status_code == 200
        assert wait_until_ready(b).status_code == 200
        headers = bearer(a, busy)

        revocation = revoked_on_one_refused_on_the_other(a, b, doomed)
        windows = rate_limited_across_both(a, b, limited)
        bookings, inventory = bookings_racing_through_both(a, b, headers, day)
        restart = restarted_under_load(a, b, a_running, env, headers, day, tmp_path)

    # (a) The token worked on B before; revoked, B refuses it at once, as A does.
    before, after_on_b, after_on_a = revocation
    assert before == [200] * 4
    assert [r.status_code for r in after_on_b] == [401] * 4
    assert {r.json()["error"]["code"] for r in after_on_b} == {"ERR-8000"}
    assert after_on_a.status_code == 401

    # (b) One budget for the key, whichever node counts it: within each minute window
    # exactly the first RATE requests pass, the rest are 429 ERR-8003.
    for statuses in windows.values():
        total = sum(statuses.values())
        assert statuses[200] == min(RATE, total), windows
        assert statuses[429] == total - statuses[200], windows
    assert sum(s[429] for s in windows.values()) >= RATE_REQUESTS + 1 - 2 * RATE

    # (c) Fifty bookings for fewer seats: three parties of two fit, every other answer
    # is a clean "sold out", and what the inventory sold is what was booked.
    statuses = Counter(r.status_code for r in bookings)
    assert statuses[201] == SEATS_LEFT // 2, statuses
    assert {r.json()["error"]["code"] for r in bookings if r.status_code != 201} == {"ERR-4001"}
    rbd, rows_before, rows_after = inventory
    assert all(row.sold <= row.authorized for row in rows_after)
    sold_in_race = {row.rbd: row.sold - rows_before[row.rbd] for row in rows_after}
    assert sold_in_race[rbd] == 2 * statuses[201], sold_in_race

    # (d) B answered every request while A restarted; A said only 503 `loading` until ready.
    health, on_a, on_b = restart
    server = server_seconds([tmp_path / "a-again.log"], "health-")
    print(
        "restarted node's /health (status, client s, server s): "
        f"{[(s, round(t, 3), server.get(r)) for s, _, t, r in health]}"
    )
    print(f"searches during the restart: B {Counter(on_b)}, A {Counter(on_a)}")
    print(f"bookings: {statuses}, by node: {Counter(urlsplit(r.url).port for r in bookings)}")
    loading_at_once_then_ready(health)
    assert on_b, "B was not searched during the restart"
    assert set(on_b) == {201}, Counter(on_b)


def whoami(node, headers):
    return requests.get(node.url + "/json/v1/whoami", headers=headers, timeout=5)


def revoked_on_one_refused_on_the_other(a, b, issued):
    """A token from A, used on B (both of B's workers remember it), then the key revoked
    as the back office revokes it: B's answers after, and A's."""
    headers = bearer(a, issued.raw)
    before = [whoami(b, headers).status_code for _ in range(4)]
    api_key_revoke(key=issued.key, at=clock.now())
    after_on_b = [whoami(b, headers) for _ in range(4)]
    return before, after_on_b, whoami(a, headers)


def rate_limited_across_both(a, b, raw_key):
    """RATE_REQUESTS calls with one rate-limited key, alternating between the nodes and
    sent at once: the statuses by the minute window they were counted in (a run may
    straddle two)."""
    token = requests.post(a.url + "/auth/token", headers={"x-api-key": raw_key}, timeout=5)
    headers = {"Authorization": f"Bearer {token.json()['access_token']}"}
    nodes = [(a, b)[i % 2] for i in range(RATE_REQUESTS)]
    with ThreadPoolExecutor(max_workers=16) as pool:
        responses = [token, *pool.map(lambda node: whoami(node, headers), nodes)]
    windows = defaultdict(Counter)
    for response in responses:
        windows[response.headers["X-RateLimit-Reset"]][response.status_code] += 1
    refused = [r for r in responses if r.status_code == 429]
    assert {r.json()["error"]["code"] for r in refused} == {"ERR-8003"}
    return windows


def bookings_racing_through_both(a, b, headers, day):
    """BOOKINGS priced offers for two adults on MX101, the class they price in sold down
    to SEATS_LEFT, then all booked at once, alternating between the nodes: the
    responses, and the leg's inventory rows before and after the race."""
    found = requests.post(
        a.url + "/json/v1/offers",
        json=search_body(("PVD", "CHS", day), passengers=TWO),
        headers=headers,
        timeout=10,
    ).json()["data"]["offers"]
    offer = next(o for o in found if o["offerItems"][0]["flight"]["flightNumbers"] == ["MX101"])
    item = offer["offerItems"][0]["offerItemId"]
    selection = {"offerId": offer["offerId"], "offerItemIds": [item]}

    def price(node):
        response = requests.post(
            node.url + "/json/v1/offers/price",
            json={"selections": [selection], "passengers": TWO},
            headers=headers,
            timeout=10,
        )
        assert response.status_code == 201, response.text
        return response.json()["data"]

    nodes = [(a, b)[i % 2] for i in range(BOOKINGS)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        priced = list(pool.map(price, nodes))
    rbd = priced[0]["journeys"][0]["segments"][0]["rbd"]
    assert {p["journeys"][0]["segments"][0]["rbd"] for p in priced} == {rbd}
    row = LegInventory.objects.get(leg__flight_number=101, leg__flight_date=day, rbd=rbd)
    inventory_sell(leg_ids=[row.leg_id], rbd=rbd, seats=row.authorized - row.sold - SEATS_LEFT)
    rows_before = {r.rbd: r.sold for r in LegInventory.objects.filter(leg_id=row.leg_id)}

    start = threading.Barrier(BOOKINGS)

    def book(node_and_priced):
        node, offer = node_and_priced
        start.wait(timeout=30)
        return requests.post(
            node.url + "/json/v1/orders", json=booking_body(offer), headers=headers, timeout=60
        )

    with ThreadPoolExecutor(max_workers=BOOKINGS) as pool:
        responses = list(pool.map(book, zip(nodes, priced, strict=True)))
    rows_after = list(LegInventory.objects.filter(leg_id=row.leg_id))
    return responses, (rbd, rows_before, rows_after)


def restarted_under_load(a, b, a_running, env, headers, day, tmp_path):
    """Searches sent in a loop to each node while A is stopped (gracefully, SIGTERM) and
    started again on its port: A's /health polled from its first answer until 200
    (status, body, seconds each), and every outcome of the searches on A and on B."""
    stop = threading.Event()

    def keep_searching(node):
        outcomes = []
        while not stop.is_set():
            try:
                response = requests.post(
                    node.url + "/json/v1/offers",
                    json=search_body(("PVD", "CHS", day)),
                    headers=headers,
                    timeout=10,
                )
                outcomes.append(response.status_code)
            except requests.RequestException as exc:
                outcomes.append(type(exc).__name__)
                time.sleep(0.01)  # A is down: do not spin on refused connections
        return outcomes

    with ThreadPoolExecutor(max_workers=3) as pool:
        on_a, on_b = pool.submit(keep_searching, a), pool.submit(keep_searching, b)
        try:
            a_running.close()  # A stops while both are searched
            # Polled from before A starts again, so that its very first answer is seen.
            health = pool.submit(health_until_ready, a.url)
            with gunicorn(env, tmp_path / "a-again.log", workers=2, port=urlsplit(a.url).port):
                health = health.result()
        finally:
            stop.set()
        return health, on_a.result(), on_b.result()


def health_until_ready(url, timeout=90):
    """(status, body, client seconds, request id) of each /health answer at `url`, from
    the first one (the node may not be listening yet) until the first 200. A node that
    accepts a connection before a worker can answer it holds the request: the client
    waits (its seconds say how long) rather than giving up."""
    answers = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        request_id = f"health-{len(answers)}"
        started = time.monotonic()
        try:
            response = requests.get(
                url + "/health", headers={"x-request-id": request_id}, timeout=60
            )
        except requests.ConnectionError:
            time.sleep(0.01)  # not listening yet
            continue
        took = time.monotonic() - started
        answers.append((response.status_code, response.json(), took, request_id))
        if response.status_code == 200:
            break
        time.sleep(0.01)  # polling a warming node, not timing behaviour
    return answers


def test_a_starting_node_answers_health_at_once(tmp_path):
    """What a load balancer sees of a node starting: from the first connection it
    accepts, /health answers within HEALTH_AT_ONCE_SECONDS, 503 `loading` until ready."""
    fleet_ensure(DEMO_FLEET)
    env = env_of_node()
    manage(env, "load_schedule", str(schedule(tmp_path, 101)))
    url = f"http://127.0.0.1:{free_port()}"

    with ThreadPoolExecutor(max_workers=1) as pool:
        polled = pool.submit(health_until_ready, url)  # from before the node listens
        with gunicorn(env, tmp_path / "a.log", workers=2, port=urlsplit(url).port):
            health = polled.result()

    print(
        f"starting node's /health (status, client s): {[(s, round(t, 3)) for s, _, t, _ in health]}"
    )
    loading_at_once_then_ready(health)


def loading_at_once_then_ready(health):
    """What a load balancer's probe saw of a node starting (health_until_ready): 503
    `loading` until a 200, every answer within HEALTH_AT_ONCE_SECONDS of the request."""
    assert health[-1][0] == 200
    assert all(s == 503 and body == {"status": "loading"} for s, body, *_ in health[:-1]), health
    assert max(t for _, _, t, _ in health) < HEALTH_AT_ONCE_SECONDS, health
