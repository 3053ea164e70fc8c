"""No request waits on a schedule index build, on the full demo schedule (issue 24 item 5;
README "Process layout"): a node's master builds the index before it forks, so a worker
killed and replaced, or a whole node restarted, answers at once. While one client searches
and another probes /health in a loop, a worker is SIGKILLed and then the node is restarted
on its port: every /health answer through the restart comes within HEALTH_SECONDS, and
while workers are recycled far more often than in production within
RECYCLED_HEALTH_SECONDS (503 `loading` or 200, never a timeout; a refused connection
while the node is down is the load balancer's cue too), and every search either answers
within SEARCH_SERVER_SECONDS by the node's own clock or is a fast 503 ERR-9000."""

import os
import signal
import threading
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
    gunicorn,
    server_env_on_test_database,
    server_seconds,
    wait_until_ready,
    worker_pids,
)
from tests.offers.conftest import search_body
from tests.sellers.factories import ApiKeyFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True, serialized_rollback=True)]

HEALTH_SECONDS = 0.1  # issue 24: /health within 100 ms throughout a restart
# Every probe, while workers are killed and recycled every 10-20 requests (far more often
# than production's 20,000): a sync worker's probe can wait behind a search while the
# other worker is replaced; never near a balancer's probe timeout (1-2 s).
RECYCLED_HEALTH_SECONDS = 0.25
SEARCH_SERVER_SECONDS = 0.2  # issue 24: no search slower than 200 ms server-side
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


class Probes:
    """A client searching and another probing /health, in loops, until stopped."""

    def __init__(self, url: str, headers: dict[str, str], day) -> None:
        self.url, self.headers, self.day = url, headers, day
        self.stop = threading.Event()
        self.health: list[tuple[object, float]] = []  # (status or error name, seconds)
        self.searches: list[tuple[str, object, float]] = []  # (request id, status, seconds)
        self.dropped: list[str] = []  # why each refused or reset connection failed
        self._threads = [
            threading.Thread(target=self._probe_health),
            threading.Thread(target=self._search),
        ]

    def __enter__(self) -> "Probes":
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        for thread in self._threads:
            thread.join(timeout=30)

    def _probe_health(self) -> None:
        while not self.stop.is_set():
            started = time.monotonic()
            try:
                response = requests.get(self.url + "/health", timeout=2)
                outcome = (response.status_code, response.json()["status"])
            except requests.Timeout:
                outcome = "timeout"
            except requests.ConnectionError as exc:
                # Refused while no master listens; reset for a probe the killed worker or
                # the stopping master had accepted. Either is "down" to a load balancer.
                outcome = "refused"
                self.dropped.append(str(exc))
            self.health.append((outcome, time.monotonic() - started))
            self.stop.wait(0.02)  # a load balancer's probe interval, shortened

    def _search(self) -> None:
        while not self.stop.is_set():
            request_id = f"restart-search-{len(self.searches)}"
            started = time.monotonic()
            try:
                response = requests.post(
                    self.url + "/json/v1/offers",
                    json=search_body(("PVD", "CHS", self.day)),
                    headers={**self.headers, "x-request-id": request_id},
                    timeout=10,
                )
                body = response.json()
                outcome = (response.status_code, (body.get("error") or {}).get("code"))
            except requests.Timeout:
                outcome = "timeout"
            except requests.ConnectionError as exc:
                outcome = "refused"
                self.dropped.append(str(exc))
            self.searches.append((request_id, outcome, time.monotonic() - started))
            if outcome == "refused":
                self.stop.wait(0.01)  # the node is down: do not spin


def test_a_killed_worker_and_a_restarted_node_never_make_a_request_wait_for_a_build(tmp_path):
    call_command("seed_demo", stdout=StringIO())  # the full demo schedule, committed
    assert FlightLeg.objects.count() > FULL_SCHEDULE_LEGS
    raw = ApiKeyFactory(partner=Partner.objects.get(code="DEMO"), requests_per_minute=10**8).raw
    day = datetime.now(tz=UTC).date() + timedelta(days=10)
    env = env_of_node()
    logs = [tmp_path / "node.log", tmp_path / "node-again.log"]

    with ExitStack() as running:
        node = running.enter_context(gunicorn(env, logs[0], workers=2, args=RECYCLING))
        assert wait_until_ready(node).status_code == 200
        token = requests.post(node.url + "/auth/token", headers={"x-api-key": raw}, timeout=5)
        headers = {"Authorization": f"Bearer {token.json()['access_token']}"}
        with Probes(node.url, headers, day) as probes:
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
    assert {o for o, _ in answered} <= {(200, "ok"), (503, "loading")}, probes.health
    # Down ones too: a refused or reset connection must be as quick as an answer. Through
    # the restart the slowest was 0.018-0.033 s on a quiet machine once a stopping node
    # refused new connections at once and a starting one forked its workers together
    # (airline/gunicorn_worker.py, gunicorn.conf.py when_ready); 0.057-0.103 s before.
    restart = probes.health[restart_from:]
    slowest_restart = max(t for _, t in restart)
    print(
        f"slowest /health while recycling {max(t for _, t in probes.health[:restart_from]):.3f} s,"
        f" through the restart {slowest_restart:.3f} s (target {HEALTH_SECONDS} s:"
        f" {'met' if slowest_restart < HEALTH_SECONDS else 'missed'})"
    )
    assert slowest_restart < HEALTH_SECONDS, restart
    assert max(t for _, t in probes.health) < RECYCLED_HEALTH_SECONDS, probes.health
    assert answered[-1][0] == (200, "ok")
    assert any(o == "refused" for o, _ in probes.health)  # the node was down meanwhile
    for request_id, outcome, took in searched:
        assert outcome in ((201, None), (503, "ERR-9000")), probes.searches
        if outcome == (201, None):
            assert seconds[request_id] < SEARCH_SERVER_SECONDS, (request_id, seconds[request_id])
        else:
            assert took < SEARCH_SERVER_SECONDS, (request_id, took)
    assert sum(o == (201, None) for _, o, _ in searched) >= 45
    recycled = sum(log.read_text().count("Autorestarting worker") for log in logs)
    assert recycled > 0  # replacements forked from the master served too


def wait_for(check, timeout: float = 60) -> None:
    """Poll `check` until true (processes starting, clients counting), else fail."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)  # polling other processes, not timing behaviour
