"""No request waits on a schedule index build, on the full demo schedule (issue 24 item 5;
README "Process layout"): a node's master builds the index before it forks, so a worker
killed and replaced, or a whole node restarted, answers at once. While one client searches
and another probes /health in a loop, a worker is SIGKILLed and then the node is restarted
on its port: every /health probe answers (503 `loading` or 200, never a timeout; a refused
connection while the node is down is the load balancer's cue too) and every search either
answers or is a 503 ERR-9000, each in well under the time an index build takes on this
machine in this run (NOT_A_BUILD of it, measured here), so none waited for one.

How fast they are against issue 24's targets (/health within 100 ms through a restart,
no search over 200 ms server-side) is a figure, not an assertion: `python -m
benchmarks.schedule` measures the same restart with the same probes (tests.e2e.servers
.Probes). A wall-clock bound here failed CI once at 126 ms on a busy machine."""

import os
import signal
import time
from collections import Counter
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta
from io import StringIO
from urllib.parse import urlsplit

import pytest
import requests
from django.core.management import call_command

from airline.network.models import FlightLeg
from sellers.models import Partner
from tests.e2e.servers import (
    Probes,
    gunicorn,
    index_build_seconds,
    server_env_on_test_database,
    server_seconds,
    wait_until_ready,
    worker_pids,
)
from tests.offers.conftest import search_body
from tests.sellers.factories import ApiKeyFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True, serialized_rollback=True)]

# Of this run's own full index build: a request that waited for a build takes about the
# build's time (2 s on a quiet machine, 10-16 s on a busy one); the slowest /health and
# search through a restart measured 0.02-0.13 s, a twentieth of it at most.
NOT_A_BUILD = 0.5
# Workers recycled every RECYCLE_AFTER to 2 x RECYCLE_AFTER requests (the probes make ~50 a
# second), so replacements forked from the master serve throughout, as max_requests makes
# them in production. With jitter, as in production (gunicorn.conf.py): without it both
# workers reached their limit together and, for the moment of their replacement, the node
# had no worker at all (a probe then waited 0.10 s on a quiet machine).
RECYCLE_AFTER = 10
RECYCLING = ("--max-requests", str(RECYCLE_AFTER), "--max-requests-jitter", str(RECYCLE_AFTER))
FULL_SCHEDULE_LEGS = 50_000  # the demo schedule has 58,410; a smaller one builds too fast


def env_of_node() -> dict[str, str]:
    """A node as production runs one: nothing built in a request."""
    return {
        **server_env_on_test_database(),
        "NETWORK_REBUILD_IN_BACKGROUND": "1",
        "NETWORK_WARM_ON_HEALTH_CHECK": "1",
        "LOG_LEVEL": "INFO",  # the access log, whose durations the search bound reads
    }


def test_a_killed_worker_and_a_restarted_node_never_make_a_request_wait_for_a_build(tmp_path):
    call_command("seed_demo", stdout=StringIO())  # the full demo schedule, committed
    assert FlightLeg.objects.count() > FULL_SCHEDULE_LEGS
    bound = NOT_A_BUILD * index_build_seconds()
    raw = ApiKeyFactory(partner=Partner.objects.get(code="DEMO"), requests_per_minute=10**8).raw
    day = datetime.now(tz=UTC).date() + timedelta(days=10)
    env = env_of_node()
    logs = [tmp_path / "node.log", tmp_path / "node-again.log"]

    with ExitStack() as running:
        node = running.enter_context(gunicorn(env, logs[0], workers=2, args=RECYCLING))
        assert wait_until_ready(node).status_code == 200
        token = requests.post(node.url + "/auth/token", headers={"x-api-key": raw}, timeout=5)
        headers = {"Authorization": f"Bearer {token.json()['access_token']}"}
        with Probes(node.url, headers, search_body(("PVD", "CHS", day))) as probes:
            wait_for(lambda: len(probes.searches) >= 5)
            # (1) A worker killed: gunicorn's master forks a replacement, with its index.
            [victim, *_] = worker_pids(node.pid)
            os.kill(victim, signal.SIGKILL)
            wait_for(lambda: victim not in worker_pids(node.pid))
            wait_for(lambda: len(worker_pids(node.pid)) == 2)
            after_kill = len(probes.searches)
            wait_for(lambda: len(probes.searches) >= after_kill + 20)
            # (2) The node restarted on its port (SIGTERM, then a new master).
            restart_from = len(probes.health)
            running.close()
            port = urlsplit(node.url).port
            with gunicorn(env, logs[1], workers=2, port=port) as again:
                assert wait_until_ready(again).status_code == 200
                restarted = len(probes.searches)
                wait_for(lambda: len(probes.searches) >= restarted + 20)

    seconds = server_seconds(logs, "restart-search-")
    answered = [(o, t) for o, t in probes.health if o != "refused"]
    searched = [(r, o, t) for r, o, t in probes.searches if o != "refused"]
    print(
        f"/health: {len(probes.health)} probes, {len(answered)} answered, slowest "
        f"{max(t for _, t in answered):.3f} s; searches: {len(searched)} answered, slowest "
        f"server-side {max(seconds.get(r, 0) for r, _, _ in searched):.3f} s"
    )
    print(f"connections refused or reset: {Counter(d[:80] for d in probes.dropped)}")
    print(
        f"slowest /health while recycling {max(t for _, t in probes.health[:restart_from]):.3f} s,"
        f" through the restart {max(t for _, t in probes.health[restart_from:]):.3f} s;"
        f" a request that waited for a build would take about {bound / NOT_A_BUILD:.2f} s"
    )
    assert {o for o, _ in answered} <= {(200, "ok"), (503, "loading")}, probes.health
    # Down ones too: a refused or reset connection must be as quick as an answer.
    assert max(t for _, t in probes.health) < bound, probes.health
    assert answered[-1][0] == (200, "ok")
    assert any(o == "refused" for o, _ in probes.health)  # the node was down meanwhile
    for request_id, outcome, took in searched:
        assert outcome in ((201, None), (503, "ERR-9000")), probes.searches
        if outcome == (201, None):
            assert seconds[request_id] < bound, (request_id, seconds[request_id])
        else:
            assert took < bound, (request_id, took)
    assert sum(o == (201, None) for _, o, _ in searched) >= 45
    recycled = sum(log.read_text().count("Autorestarting worker") for log in logs)
    assert recycled > 0  # replacements forked from the master served too


def wait_for(check, timeout: float = 60) -> None:
    """Poll `check` until true (processes starting, clients counting), else fail."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)  # polling other processes, not timing behaviour
