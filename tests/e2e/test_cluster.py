"""The production topology on existing engines (scripts/cluster, docs/operators/cluster.md
"Cluster"): HAProxy in front of two gunicorn nodes and, by Patroni's REST API, in front
of the PgBouncer of whichever PostgreSQL member is the primary (writes) or a replica
within the lag bound (stale-ok reads); Patroni on etcd's three members managing a primary
and its synchronous standby; Redis and the worker; every process under supervisord. One
cluster (seeded with the demo airline) for the module; its tests run in any order
(pytest-randomly's), so each case of the database tier first waits for a primary with
its synchronous standby, and the load that books over and over keeps to a market of
its own (FLOW_MARKET).

Marked `cluster`, which pyproject's addopts leave out of the main pytest run; `make
test` runs them after it (`make test-cluster` alone), as
    .venv/bin/pytest -m cluster tests/e2e/test_cluster.py
Without haproxy, pgbouncer, redis-server, etcd, supervisord, the Prometheus exporters or
PostgreSQL's server binaries they skip, saying why; under CI (`CI` set, as `.ci/run`
does, which installs them) they fail instead."""

import itertools
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
import redis
import requests
from lxml import etree

from tests.e2e.servers import REPO, base_env, free_port
from tests.e2e.test_payment_crash import worker_pids
from tests.ndc.conftest import example
from tests.offers.conftest import search_body
from tests.orders.conftest import CARD, booking_body

pytestmark = [pytest.mark.e2e, pytest.mark.cluster]

CLIENTS = 8
UP_SECONDS = 1200  # seed_demo on a busy 2-core machine
REQUEST_TIMEOUT = 40  # a request that takes longer has hung (gunicorn's timeout is 30 s)
# What a request the failure caught may be answered: the store unavailable (ERR-9000),
# its authentication's store (ERR-8002: SPEC §4.7 lists it for create order), or the
# offer store, Redis (ERR-9002), each 503.
UNAVAILABLE = {(503, "ERR-9000"), (503, "ERR-8002"), (503, "ERR-9002")}
RECOVERY_SECONDS = 15  # bookings succeed again within this of the primary's death or a switch
# The market of the cases that book a few offers a day priced beforehand (card_bookings,
# priced_offers); and the market of the load that searches, prices and books over and
# over (booking_flow). The flow books thousands over a run, a score a day on every day:
# on the cases' market it would sell out the classes their offers were priced in, and
# their bookings would fail with ERR-4001.
MARKET = ("CHS", "PVD")
FLOW_MARKET = ("CHS", "BDL")
RETRY_AFTER_SECONDS = 1.0


@dataclass
class Cluster:
    env: dict[str, str]  # scripts/cluster's settings
    dir: Path
    url: str
    api_key: str
    first_day: date

    def script(self, *args: str, timeout: float = 120) -> str:
        result = subprocess.run(
            [str(REPO / "scripts" / "cluster"), *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        assert result.returncode == 0, result.stdout + result.stderr
        return result.stdout

    def manage_json(self, code: str) -> object:
        """Run `code` (which prints one JSON document last) in manage.py shell on the
        cluster's database, as the app finds it: through the poolers, at the primary."""
        app = dict(line.split("=", 1) for line in self.script("env").split())
        result = subprocess.run(
            [str(REPO / ".venv" / "bin" / "python"), "manage.py", "shell", "-c", code],
            cwd=REPO,
            env=base_env(**app),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout.strip().splitlines()[-1])

    def standby(self) -> str:
        """The number of the server that is the standby now (2 until a failover, then 1
        once the old primary has rejoined: the tests run in any order)."""
        standbys = [n for n, role in self.roles().items() if role == "replica"]
        assert standbys, "no standby is up"
        return standbys[0]

    def pid(self, name: str) -> int:
        """The pid of supervisord's program `name` (node1, pool2, patroni1, etcd3, ...)."""
        return int(self.script("pid", name).strip())

    def postmaster(self, member: str) -> int:
        """The pid of member `member`'s PostgreSQL."""
        return int((self.dir / f"pg{member}" / "postmaster.pid").read_text().split()[0])

    def roles(self) -> dict[str, str]:
        """Each member's role as its Patroni says: primary, replica, or down."""
        return {
            line.split()[0][2:]: line.split()[2]
            for line in self.script("status").splitlines()
            if line.startswith("pg")
        }

    def primary(self) -> str:
        """The member that is the primary now, or "" while none is."""
        return next((n for n, role in self.roles().items() if role == "primary"), "")

    def haproxy(self, command: str) -> str:
        """A command on HAProxy's admin socket, and its answer."""
        with socket.socket(socket.AF_UNIX) as sock:
            sock.settimeout(5)
            sock.connect(str(self.dir / "run" / "haproxy.sock"))
            sock.sendall(command.encode() + b"\n")
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
        return answer.decode()

    def haproxy_stat(self, server: str, column: int, backend: str = "nodes") -> str:
        """Column `column` of `show stat` for `server` of `backend` (4: sessions now,
        17: status)."""
        answer = self.haproxy("show stat")
        for line in answer.splitlines():
            fields = line.split(",")
            if len(fields) > 17 and fields[0] == backend and fields[1] == server:
                return fields[column]
        raise AssertionError(answer)

    def sentinel(self) -> redis.Redis:
        return redis.Redis(port=int(self.env["CLUSTER_SENTINEL1_PORT"]), socket_timeout=5)

    def redis_master_port(self) -> int:
        """The port of the Redis the Sentinels call the master now."""
        return int(self.sentinel().sentinel_get_master_addr_by_name("airline")[1])

    def redis_master(self) -> redis.Redis:
        return redis.Redis(port=self.redis_master_port(), socket_timeout=5)

    def member_api(self, member: str) -> str:
        return f"http://127.0.0.1:{self.env[f'CLUSTER_API{member}_PORT']}"

    def haproxy_state(self, server: str, backend: str = "nodes") -> str:
        """UP or DOWN, as HAProxy's stats socket says of `server` of `backend`."""
        return self.haproxy_stat(server, 17, backend).split()[0]


def _required() -> bool:
    return os.environ.get("CI", "").lower() not in ("", "0", "false", "no")


def _missing() -> list[str]:
    """What the cluster needs and this machine has not got."""
    missing = [
        name
        for name in (
            "haproxy",
            "pgbouncer",
            "redis-server",
            "etcd",
            "supervisord",
            "prometheus-redis-exporter",
            "prometheus-node-exporter",
        )
        if not shutil.which(name) and not (Path("/usr/sbin") / name).is_file()
    ]
    if not shutil.which("runuser"):
        missing.append("runuser")
    if not list(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl")):
        missing.append("the PostgreSQL server binaries")
    return missing


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    missing = _missing()
    if missing:
        # Outside CI these tests skip, saying why; under CI (`.ci/run` installs the
        # packages) they fail, as the browser and proxy tests do.
        reason = f"{', '.join(missing)} not found: scripts/cluster install"
        if _required():
            pytest.fail(f"{reason} (CI is set, so the cluster tests must run)", pytrace=False)
        pytest.skip(reason)
    # Under var/ as `make cluster`'s, not under pytest's private temporary directory:
    # PostgreSQL runs as its own user, which must reach its data directories.
    directory = REPO / "var" / f"cluster-test-{os.getpid()}"
    names = (
        "DB",
        "DB_READ",
        "PG1",
        "PG2",
        "API1",
        "API2",
        "POOL1",
        "POOL2",
        "ETCD1",
        "ETCD2",
        "ETCD3",
        "ETCD_PEER1",
        "ETCD_PEER2",
        "ETCD_PEER3",
        "REDIS",
        "REDIS2",
        "SENTINEL1",
        "SENTINEL2",
        "SENTINEL3",
        "STATS",
        "REDIS_EXPORTER",
        "NODE_EXPORTER",
        "NODE",
    )
    # Each a port of its own: the kernel may hand out a freed port again at once.
    ports: set[int] = set()
    while len(ports) < len(names) + 1:
        ports.add(free_port())
    port, *others = sorted(ports)
    env = base_env(
        CLUSTER_DIR=str(directory),
        CLUSTER_PORT=str(port),
        **{f"CLUSTER_{name}_PORT": str(p) for name, p in zip(names, others, strict=True)},
        CLUSTER_KEY_RATE=str(10**7),
        AIRLINE_ENV="development",
        # Each charge takes about as long as a real one, so that a failure lands inside
        # some booking's work.
        TEST_GATEWAY_LATENCY_MS="150",
        # Stale-ok reads (OrderList, retrieve, seat maps) on the standby.
        CLUSTER_READ_FROM_STANDBY="1",
        # Patroni's virtualenv shared with `make cluster`'s, not made per run.
        CLUSTER_PATRONI_VENV=str(REPO / "var" / "patroni"),
    )
    # Node 2's port is node 1's + 1: move on if that one is taken.
    while True:
        second = int(env["CLUSTER_NODE_PORT"]) + 1
        try:
            with socket.socket() as sock:
                sock.bind(("127.0.0.1", second))
            if second not in ports:
                break
        except OSError:
            pass
        candidate = free_port()
        if candidate not in ports:
            env["CLUSTER_NODE_PORT"] = str(candidate)
    started = subprocess.run(
        [str(REPO / "scripts" / "cluster"), "up"],
        env=env,
        capture_output=True,
        text=True,
        timeout=UP_SECONDS,
        check=False,
    )
    try:
        assert started.returncode == 0, started.stdout + started.stderr
        seeded = (directory / "log" / "seed.log").read_text()
        first_day = date.fromisoformat(seeded.split("schedule from ")[1].split()[0])
        yield Cluster(
            env=env,
            dir=directory,
            url=f"http://127.0.0.1:{port}",
            api_key=(directory / "api-key").read_text().strip(),
            first_day=first_day,
        )
    finally:
        subprocess.run(
            [str(REPO / "scripts" / "cluster"), "destroy", "--yes"],
            env=env,
            timeout=300,
            check=False,
        )
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture(scope="module")
def headers(cluster) -> dict[str, str]:
    token = requests.post(
        cluster.url + "/auth/token", headers={"x-api-key": cluster.api_key}, timeout=30
    )
    assert token.status_code == 200, token.text
    return {"Authorization": f"Bearer {token.json()['access_token']}"}


def search_and_price(
    cluster: Cluster, headers: dict, day: date, market: tuple[str, str] = MARKET
) -> requests.Response:
    """A search of `market` on `day`, its first offer priced for one adult: the answer
    to the price request, or to the search when that failed."""
    found = requests.post(
        cluster.url + "/json/v1/offers",
        json=search_body((*market, day)),
        headers=headers,
        timeout=REQUEST_TIMEOUT,
    )
    if found.status_code != 201:
        return found
    offer = found.json()["data"]["offers"][0]
    return requests.post(
        cluster.url + "/json/v1/offers/price",
        json={
            "selections": [
                {
                    "offerId": offer["offerId"],
                    "offerItemIds": [offer["offerItems"][0]["offerItemId"]],
                }
            ],
            "passengers": [{"type": "ADT"}],
        },
        headers=headers,
        timeout=REQUEST_TIMEOUT,
    )


def priced_offers(
    cluster: Cluster, headers: dict, count: int, first: int, days: int = 0
) -> list[dict]:
    """`count` priced one-way offers for one adult on the market, one a day from day
    `first` after the schedule's first (holds and card bookings need 24 h), over `days`
    days and round again when given."""
    offers = []
    for n in range(count):
        day = cluster.first_day + timedelta(days=first + (n % days if days else n))
        priced = search_and_price(cluster, headers, day)
        assert priced.status_code == 201, priced.text
        offers.append(priced.json()["data"])
    return offers


@dataclass
class Outcome:
    started: float
    ended: float
    status: int | str  # the HTTP status, or the exception's name
    code: str = ""  # the error code of an error
    order_id: str = ""


@dataclass
class Load:
    """CLIENTS clients sending `send` until stopped; every outcome, timed."""

    send: object  # () -> requests.Response, or None when there is nothing left to send
    outcomes: list[Outcome] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def client(self) -> None:
        while not self.stop.is_set():
            started = time.monotonic()
            try:
                response = self.send()
                if response is None:
                    return
                status, body = response.status_code, response
            except requests.RequestException as exc:
                status, body = type(exc).__name__, None
            outcome = Outcome(started, time.monotonic(), status)
            if body is not None and body.headers.get("Content-Type", "").startswith(
                "application/json"
            ):
                data = body.json()
                outcome.code = (data.get("error") or {}).get("code", "")
                outcome.order_id = ((data.get("data") or {}).get("order") or {}).get("orderId", "")
            with self.lock:
                self.outcomes.append(outcome)
            if status not in (200, 201):
                # A client backs off before retrying, as one would on a 503.
                self.stop.wait(RETRY_AFTER_SECONDS)

    def successes_since(self, moment: float) -> list[Outcome]:
        with self.lock:
            return [o for o in self.outcomes if o.started >= moment and o.status in (200, 201)]

    def wait_for_successes(self, count: int, since: float, timeout: float, what: str) -> float:
        """Wait until `count` requests started after `since` have succeeded; when they
        have not in time, the failure says what every request was answered instead."""
        try:
            return wait_for(lambda: len(self.successes_since(since)) >= count, timeout, what)
        except AssertionError as exc:
            with self.lock:
                answers = Counter((o.status, o.code) for o in self.outcomes)
            raise AssertionError(f"{exc}; the clients were answered {dict(answers)}") from None


def run_load(load: Load, during) -> None:
    """The clients running while `during()` does its damage and returns."""
    with ThreadPoolExecutor(CLIENTS) as pool:
        clients = [pool.submit(load.client) for _ in range(CLIENTS)]
        try:
            during()
        finally:
            load.stop.set()
            for client in clients:
                client.result(timeout=REQUEST_TIMEOUT + 10)


def wait_for(predicate, timeout: float, what: str) -> float:
    """Poll `predicate` until true; the monotonic time it became so."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"{what} not within {timeout} s"
        time.sleep(0.05)  # polling a process's state, not timing behaviour
    return time.monotonic()


def searches(cluster: Cluster, headers: dict) -> Load:
    day = cluster.first_day + timedelta(days=3)
    return Load(
        send=lambda: requests.post(
            cluster.url + "/json/v1/offers",
            json=search_body((*MARKET, day)),
            headers=headers,
            timeout=REQUEST_TIMEOUT,
        )
    )


def test_a_killed_node_is_routed_around_and_rejoins_when_healthy(cluster, headers):
    load = searches(cluster, headers)
    killed_at = restarted_at = 0.0

    def kill_and_restart():
        nonlocal killed_at, restarted_at
        wait_for(lambda: len(load.successes_since(0)) >= 20, 60, "searches under way")
        arbiter = cluster.pid("node1")
        workers = worker_pids(arbiter)
        killed_at = time.monotonic()
        for pid in (arbiter, *workers):
            os.kill(pid, signal.SIGKILL)
        out = wait_for(lambda: cluster.haproxy_state("node1") == "DOWN", 10, "node1 out")
        assert out - killed_at <= 2.5
        wait_for(lambda: len(load.successes_since(out)) >= 20, 60, "searches on node2")
        # supervisord starts it again, unasked.
        wait_for(lambda: cluster.pid("node1") not in (0, arbiter), 30, "node1 restarted")
        restarted_at = time.monotonic()
        # Back in rotation only once its own /health says 200 (it answers 503 loading
        # while its workers build the schedule index).
        wait_for(lambda: cluster.haproxy_state("node1") == "UP", 300, "node1 back")
        port = int(cluster.env["CLUSTER_NODE_PORT"])
        assert requests.get(f"http://127.0.0.1:{port}/health", timeout=10).status_code == 200
        back = time.monotonic()
        wait_for(lambda: len(load.successes_since(back)) >= 20, 60, "searches after")

    run_load(load, kill_and_restart)

    failed = [o for o in load.outcomes if o.status != 201]
    # Only requests in flight on node1 when it died may fail: at most one per client.
    assert len(failed) <= CLIENTS, failed
    assert all(killed_at <= o.ended <= killed_at + 3 for o in failed), failed
    assert not [o for o in failed if o.status == 500], failed


def ndc_retrieve(cluster: Cluster, headers: dict, order_id: str) -> requests.Response:
    document = example("OrderRetrieveRQ")
    document.find(".//{*}OrderID").text = order_id
    return requests.post(
        cluster.url + "/ndc/v1/OrderRetrieve",
        data=etree.tostring(document),
        headers={**headers, "Content-Type": "application/xml"},
        timeout=REQUEST_TIMEOUT,
    )


def test_haproxy_answers_requests_a_killed_node_had_in_the_api_format(cluster, headers):
    """A node killed with requests in flight: HAProxy answers them itself (502, turned
    503), and with no node up it answers every request (503): in each path's format,
    ERR-9000 as the app's own (deploy/haproxy/errors.py), never HTML."""
    node1 = [cluster.pid("node1"), *worker_pids(cluster.pid("node1"))]
    # Only node1 takes requests, and it stops answering: what reaches it stays in flight.
    cluster.haproxy("set server nodes/node2 state maint")
    for pid in node1:
        os.kill(pid, signal.SIGSTOP)
    try:
        with ThreadPoolExecutor(2) as pool:
            listing = pool.submit(
                requests.get, cluster.url + "/json/v1/orders", headers=headers, timeout=60
            )
            retrieve = pool.submit(ndc_retrieve, cluster, headers, "ABC123")
            for backend in ("api_json", "api_ndc"):
                wait_for(
                    lambda backend=backend: cluster.haproxy_stat("node1", 4, backend) == "1",
                    10,
                    f"a request in flight on node1 ({backend})",
                )
            for pid in node1:
                os.kill(pid, signal.SIGKILL)
            in_flight = [listing.result(), retrieve.result()]
        wait_for(lambda: cluster.haproxy_state("node1") == "DOWN", 10, "node1 out")
        # No node up now: HAProxy answers at once.
        nothing_up = [
            requests.get(cluster.url + "/json/v1/orders", headers=headers, timeout=10),
            requests.post(cluster.url + "/auth/token", headers={"x-api-key": "x"}, timeout=10),
            ndc_retrieve(cluster, headers, "ABC123"),
        ]
    finally:
        cluster.haproxy("set server nodes/node2 state ready")

    json_answers = [in_flight[0], nothing_up[0]]
    for answer in json_answers:
        assert answer.status_code == 503, answer.text
        assert answer.headers["Content-Type"] == "application/json"
        body = answer.json()
        assert body["data"] is None
        assert body["error"]["code"] == "ERR-9000"
        assert body["error"]["requestId"] == answer.headers["x-request-id"]
    auth = nothing_up[1]
    assert auth.status_code == 503
    assert auth.json()["error"]["code"] == "ERR-9000"
    assert auth.json()["errorKey"] == "ServiceUnavailable"
    for answer in (in_flight[1], nothing_up[2]):
        assert answer.status_code == 503, answer.text
        assert answer.headers["Content-Type"] == "application/xml; charset=utf-8"
        root = etree.fromstring(answer.content)
        assert etree.QName(root).localname == "IATA_OrderViewRS"
        assert root.findtext(".//{*}Error/{*}Code") == "ERR-9000"
        assert root.findtext(".//{*}TrxID") == answer.headers["x-request-id"]

    # node1 back (supervisord restarts it), for what follows.
    wait_for(lambda: cluster.haproxy_state("node1") == "UP", 300, "node1 back")


def test_reads_on_the_standby_show_a_client_its_own_booking_at_once(cluster, headers):
    """OrderList and retrieve read the standby (READ_FROM_STANDBY in the cluster), but a
    client that has just booked reads from the primary: its booking is in its very next
    list and retrieve, even while the standby replays nothing."""
    synchronous_pair(cluster)
    (priced,) = priced_offers(cluster, headers, 1, first=3)
    cache = cluster.redis_master()
    standby = cluster.standby()
    # A standby serves reads once its replay is within the lag bound (HAProxy asks
    # Patroni's /replica?lag=): one just back from a fault under load may be synchronous
    # (its WAL received) and still be replaying, and a pause then would keep it out.
    wait_for(
        lambda: cluster.haproxy_state(f"pg{standby}", backend="db_read") == "UP",
        180,
        "the standby serving stale-ok reads",
    )

    def forget_writes() -> None:  # the client's read-your-writes window over
        markers = list(cache.scan_iter(match="*wrote:seller:*"))
        if markers:
            cache.delete(*markers)

    # The standby receives and flushes the WAL (a synchronous commit still returns) but
    # applies none of it: a read there cannot see what is booked from now on.
    # Patroni resumes a paused replay on its next loop unless its management is paused
    # (maintenance mode: no failover meanwhile either).
    cluster.script("patronictl", "pause", "--wait")
    cluster.script("psql", standby, "SELECT pg_wal_replay_pause()")
    try:
        # The call only asks: replay stops at its next record, which on a busy machine
        # can come after the booking below has arrived and been applied.
        wait_for(
            lambda: (
                cluster.script("psql", standby, "SELECT pg_get_wal_replay_pause_state()").strip()
                == "paused"
            ),
            30,
            "the standby's replay paused",
        )
        created = requests.post(
            cluster.url + "/json/v1/orders",
            json=booking_body(priced),
            headers=headers,
            timeout=REQUEST_TIMEOUT,
        )
        assert created.status_code == 201, created.text
        order_id = created.json()["data"]["order"]["orderId"]

        def listed() -> list[str]:
            found = requests.get(
                cluster.url + "/json/v1/orders",
                # its day's: other cases book thousands of Lovelaces, on other days
                params={
                    "lastName": "Lovelace",
                    "departureDate": (cluster.first_day + timedelta(days=3)).isoformat(),
                },
                headers=headers,
                timeout=REQUEST_TIMEOUT,
            )
            assert found.status_code == 200, found.text
            return [o["orderId"] for o in found.json()["data"]["orders"]]

        def retrieved() -> int:
            return requests.get(
                cluster.url + f"/json/v1/orders/{order_id}", headers=headers, timeout=30
            ).status_code

        assert order_id in listed()
        assert retrieved() == 200
        assert ndc_retrieve(cluster, headers, order_id).status_code == 200

        # The client's marker gone (its window over): its reads are the standby's,
        # which has not applied the booking. On a loaded machine the standby can miss
        # HAProxy's check for a moment, and a read then goes to the primary (db_read's
        # backup servers): the stale read is what the standby answers once it is in.
        assert list(cache.scan_iter(match="*wrote:seller:*"))
        forget_writes()

        def standby_answers(predicate, what: str) -> None:
            try:
                wait_for(predicate, 60, what)
            except AssertionError as exc:
                markers = list(cache.scan_iter(match="*wrote:seller:*"))
                state = cluster.haproxy_state(f"pg{standby}", backend="db_read")
                raise AssertionError(
                    f"{exc}: db_read has pg{standby} {state}, the markers are {markers}"
                ) from None

        standby_answers(lambda: order_id not in listed(), "a list without the booking")
        standby_answers(lambda: retrieved() == 404, "a retrieve answered 404")
    finally:
        cluster.script("psql", standby, "SELECT pg_wal_replay_resume()")
        cluster.script("patronictl", "resume", "--wait")
    wait_for(lambda: order_id in listed(), 30, "the standby caught up")
    assert retrieved() == 200


def test_an_online_pooler_restart_fails_no_request(cluster, headers):
    """`scripts/cluster pool-restart N` under clients searching, pricing and booking by
    card, on the primary's PgBouncer and then the standby's (stale-ok reads go there):
    the new PgBouncer takes the old one's client and server connections over (-R), and
    no request fails."""
    synchronous_pair(cluster)
    load = booking_flow(cluster, headers)
    restarted = []

    def restart_both():
        for member in (cluster.primary(), cluster.standby()):
            before = cluster.pid(f"pool{member}")
            cluster.script("pool-restart", member)
            restarted.append(cluster.pid(f"pool{member}") not in (0, before))
            at = time.monotonic()
            load.wait_for_successes(8, at, 60, "bookings after")

    fault_under_bookings(load, restart_both)
    assert restarted == [True, True]
    assert [o for o in load.outcomes if o.status != 201] == []
    assert_kept(cluster, load)


def order_lists(cluster: Cluster, headers: dict) -> Load:
    return Load(
        send=lambda: requests.get(
            cluster.url + "/json/v1/orders", headers=headers, timeout=REQUEST_TIMEOUT
        )
    )


def test_a_killed_haproxy_is_restarted_by_supervisor(cluster, headers):
    """HAProxy SIGKILLed under order lists (each reads the database through it too):
    clients lose their connections for a moment, never get an HTML page or a 500, and
    supervisord has HAProxy back and answering within 5 s."""
    load = order_lists(cluster, headers)
    killed_at = 0.0

    def kill():
        nonlocal killed_at
        wait_for(lambda: len(load.successes_since(0)) >= 20, 60, "order lists under way")
        haproxy = cluster.pid("haproxy")
        killed_at = time.monotonic()
        os.kill(haproxy, signal.SIGKILL)
        wait_for(lambda: cluster.pid("haproxy") not in (0, haproxy), 10, "HAProxy restarted")
        back = time.monotonic()
        wait_for(lambda: len(load.successes_since(back)) >= 20, 60, "lists after")

    run_load(load, kill)
    back = min(o.ended for o in load.successes_since(killed_at + 0.1))
    assert back - killed_at <= 5, back - killed_at
    failed = [o for o in load.outcomes if o.status != 200]
    assert all(
        (o.status, o.code) in UNAVAILABLE or o.status in ("ConnectionError", "ChunkedEncodingError")
        for o in failed
    ), failed
    assert all(o.ended - killed_at < 10 for o in failed), failed


def book_priced(cluster: Cluster, headers: dict, offers: list[dict]) -> list[int]:
    """Each offer booked by card, in turn: the statuses."""
    return [
        requests.post(
            cluster.url + "/json/v1/orders",
            json=booking_body(priced, payment=CARD),
            headers=headers,
            timeout=REQUEST_TIMEOUT,
        ).status_code
        for priced in offers
    ]


def scrape(url: str, token: str = "") -> dict[str, float]:
    """A Prometheus text page as {'name{labels}': value}, comments left out."""
    answer = requests.get(
        url, headers={"Authorization": f"Bearer {token}"} if token else {}, timeout=10
    )
    assert answer.status_code == 200, answer.text
    samples = {}
    for line in answer.text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            samples[name] = float(value)
    return samples


def sample(samples: dict[str, float], name: str, **labels: str) -> float:
    """The one sample of `name` whose labels include `labels`."""
    wanted = [f'{key}="{value}"' for key, value in labels.items()]
    found = [
        value
        for key, value in samples.items()
        if key.split("{")[0] == name and all(label in key for label in wanted)
    ]
    assert len(found) == 1, (name, labels, [k for k in samples if k.startswith(name)])
    return found[0]


LAST_BACKUP = "pgbackrest_backup_last_completion_timestamp_seconds"


def exporter(cluster: Cluster, name: str) -> str:
    return f"http://127.0.0.1:{cluster.env[f'CLUSTER_{name}_EXPORTER_PORT']}/metrics"


def test_an_operator_reads_every_part_from_its_metrics(cluster, headers):
    """What docs/operators/monitoring.md "The engines' own metrics" tells an operator to scrape
    answers, and says what is true: each node's own /metrics (its dependencies up),
    HAProxy's (both nodes up, one primary behind the write port), each Patroni's (the
    roles), redis_exporter on a Sentinel (the master the Sentinels name), and
    node_exporter's textfile of pgBackRest's info (the last backup of each type, a new
    one seen as soon as it is taken)."""
    synchronous_pair(cluster)
    token = (cluster.dir / "metrics-token").read_text().strip()
    node = scrape(f"http://127.0.0.1:{cluster.env['CLUSTER_NODE_PORT']}/metrics", token)
    for dependency in ("database", "redis"):
        assert sample(node, "airline_dependency_up", dependency=dependency) == 1
    haproxy = scrape(f"http://127.0.0.1:{cluster.env['CLUSTER_STATS_PORT']}/metrics")
    assert sample(haproxy, "haproxy_backend_active_servers", proxy="db_write") == 1
    assert sample(haproxy, "haproxy_backend_active_servers", proxy="nodes") == 2
    primary, standby = cluster.primary(), cluster.standby()
    assert sample(scrape(cluster.member_api(primary) + "/metrics"), "patroni_primary") == 1
    assert sample(scrape(cluster.member_api(standby) + "/metrics"), "patroni_replica") == 1

    sentinel = scrape(exporter(cluster, "REDIS"))
    master = f"127.0.0.1:{cluster.redis_master_port()}"
    assert sample(sentinel, "redis_sentinel_master_status", master_address=master) == 1
    assert sample(sentinel, "redis_sentinel_master_ok_sentinels", master_name="airline") == 3

    backups = scrape(exporter(cluster, "NODE"))
    assert sample(backups, "pgbackrest_stanza_status", stanza="airline") == 0
    assert sample(backups, LAST_BACKUP, backup_type="full") > 0
    before = time.time()
    cluster.script("backup", "incr", timeout=600)
    backups = scrape(exporter(cluster, "NODE"))
    assert sample(backups, LAST_BACKUP, backup_type="incr") >= int(before)
    assert sample(backups, "pgbackrest_info_timestamp_seconds") >= int(before)


def redis_replicated(cluster: Cluster) -> None:
    """Wait until the Redis replica holds every write the master has made so far, as
    before each Redis fault: replication is asynchronous, and a replica still taking a
    full copy (a master restarted from its file gives it a new history) would lose, in a
    failover, what it had not been sent yet."""
    master = cluster.redis_master()
    written = master.info("replication")["master_repl_offset"]

    def caught_up() -> bool:
        info = master.info("replication")
        replicas = [v for k, v in info.items() if k.startswith("slave") and isinstance(v, dict)]
        return any(r["state"] == "online" and r["offset"] >= written for r in replicas)

    wait_for(caught_up, 60, "the Redis replica caught up")


def test_a_frozen_redis_master_is_replaced_by_its_replica(cluster, headers):
    """The Redis master's host hangs (SIGSTOP: it answers nothing, as a host lost to the
    network): two Sentinels agree it is down, one promotes the replica, and the app finds
    the new master through them. Bookings fail for at most 10 s, each failure a clean
    503; every offer priced before is still there to book (replicated); the old master,
    back, becomes the new one's replica."""
    synchronous_pair(cluster)
    kept = priced_offers(cluster, headers, 4, first=234)
    redis_replicated(cluster)
    load = booking_flow(cluster, headers)
    old = cluster.redis_master_port()
    program = "redis1" if old == int(cluster.env["CLUSTER_REDIS_PORT"]) else "redis2"
    frozen = cluster.pid(program)

    def freeze():
        os.kill(frozen, signal.SIGSTOP)
        wait_for(lambda: cluster.redis_master_port() != old, 30, "Sentinel's failover")

    try:
        faulted_at = fault_under_bookings(load, freeze)
    finally:
        os.kill(frozen, signal.SIGCONT)
    failed = [o for o in load.outcomes if o.status != 201]
    assert all((o.status, o.code) in UNAVAILABLE for o in failed), failed
    assert longest_pause(load, faulted_at) <= 10
    assert_kept(cluster, load)
    assert book_priced(cluster, headers, kept) == [201] * 4
    old_one = redis.Redis(port=old, socket_timeout=5)
    wait_for(lambda: old_one.info("replication")["role"] == "slave", 60, "the old master a replica")
    # What an operator's dashboard shows: the master the Sentinels name now.
    new = f"127.0.0.1:{cluster.redis_master_port()}"
    sentinel = scrape(exporter(cluster, "REDIS"))
    assert sample(sentinel, "redis_sentinel_master_status", master_address=new) == 1


def test_a_killed_redis_master_comes_back_with_what_it_held(cluster, headers):
    """The Redis master SIGKILLed: supervisord starts it again at once, and it reads its
    append-only file, so offers priced before it died are still there to book."""
    kept = priced_offers(cluster, headers, 4, first=244)
    port = cluster.redis_master_port()
    program = "redis1" if port == int(cluster.env["CLUSTER_REDIS_PORT"]) else "redis2"
    killed = cluster.pid(program)
    os.kill(killed, signal.SIGKILL)
    wait_for(lambda: cluster.pid(program) not in (0, killed), 30, "Redis restarted")
    master = redis.Redis(port=port, socket_timeout=5)
    wait_for(lambda: master.info("persistence")["loading"] == 0, 60, "the AOF read")
    statuses = []
    wait_for(
        lambda: statuses.append(book_priced(cluster, headers, kept[:1])[0]) or statuses[-1] == 201,
        30,
        "a booking again",
    )
    assert book_priced(cluster, headers, kept[1:]) == [201] * 3
    redis_replicated(cluster)  # the replica has a full copy again, for the next case


HEALTH_SECONDS = float(os.environ.get("CLUSTER_HEALTH_SECONDS", "300"))


def booking_flow(cluster: Cluster, headers: dict) -> Load:
    """CLIENTS clients each searching, pricing and booking by card, over and over, on
    FLOW_MARKET, on days spread over the schedule (no flight fills up)."""
    days = itertools.count()
    lock = threading.Lock()

    def book():
        with lock:
            day = cluster.first_day + timedelta(days=2 + next(days) % 320)
        priced = search_and_price(cluster, headers, day, FLOW_MARKET)
        if priced.status_code != 201:
            return priced  # the step that failed is the outcome
        return requests.post(
            cluster.url + "/json/v1/orders",
            json=booking_body(priced.json()["data"], payment=CARD),
            headers=headers,
            timeout=REQUEST_TIMEOUT,
        )

    return Load(send=book)


def test_health_checks_never_fail_under_booking_load(cluster, headers):
    """CLIENTS clients searching, pricing and booking for HEALTH_SECONDS (5 minutes; the
    environment's CLUSTER_HEALTH_SECONDS): HAProxy's health check of each node (its own
    3 s timeout, out after 2 failures in a row) never fails, as HAProxy's own log says."""
    log = cluster.dir / "log" / "haproxy.log"
    start = log.stat().st_size
    load = booking_flow(cluster, headers)
    run_load(load, lambda: time.sleep(HEALTH_SECONDS))  # the load's duration, not a wait
    checks = log.read_text()[start:]
    failures = [line for line in checks.splitlines() if "Health check for" in line]
    assert failures == [], failures
    assert len(load.successes_since(0)) >= HEALTH_SECONDS / 10
    assert {o.status for o in load.outcomes} == {201}, load.outcomes


def card_bookings(cluster: Cluster, headers: dict, first: int, count: int, days: int = 0) -> Load:
    """CLIENTS clients booking by card `count` offers priced beforehand, one a day from
    day `first` after the schedule's first (over `days` days, when given): each day's
    offers for one case only. A failed booking uses its offer up: a case with seconds of
    failures needs offers for them (8 clients, one try a second each)."""
    offers = iter(priced_offers(cluster, headers, count, first=first, days=days))
    offers_lock = threading.Lock()

    def book():
        with offers_lock:
            priced = next(offers, None)
        if priced is None:
            return None
        return requests.post(
            cluster.url + "/json/v1/orders",
            json=booking_body(priced, payment=CARD),
            headers=headers,
            timeout=REQUEST_TIMEOUT,
        )

    return Load(send=book)


def synchronous_pair(cluster: Cluster) -> None:
    """Wait until a primary and its synchronous standby are up, as before each fault."""

    def paired() -> bool:
        status = cluster.script("status")
        return " primary " in status and " replica " in status and status.count(" sync") == 1

    wait_for(paired, 180, "a primary with a synchronous standby")


def longest_pause(load: Load, since: float) -> float:
    """The longest time without a booking acknowledged, from `since` to the last."""
    ends = sorted(o.ended for o in load.successes_since(0) if o.ended >= since)
    moments = [since, *ends]
    return max(b - a for a, b in itertools.pairwise(moments))


def assert_kept(cluster: Cluster, load: Load) -> None:
    """Every answer a booking or 503 (never a 500, HTML, a hang or a dropped
    connection); every acknowledged booking on the primary, confirmed, with its
    payment; after reconcile no charge orphaned and every leg's sold count its segments'."""
    for outcome in load.outcomes:
        assert outcome.status == 201 or (outcome.status, outcome.code) in UNAVAILABLE, outcome
    booked = [o.order_id for o in load.outcomes if o.status == 201]
    assert booked, load.outcomes
    assert all(booked), load.outcomes
    found = cluster.manage_json(
        "import json; from orders.models import Order; "
        f"ids = {booked!r}; "
        "print(json.dumps({o.order_id: [o.status, str(o.paid), str(o.total), "
        "[str(p.amount) for p in o.payments.all()]] "
        "for o in Order.objects.filter(order_id__in=ids)}))"
    )
    assert sorted(found) == sorted(booked)
    for order_id, (status, paid, total, payments) in found.items():
        assert status == "CONFIRMED", order_id
        assert paid == total, order_id
        assert payments == [total], order_id

    # What the failure left pending, the reconciler settles: no charge orphaned, no seat
    # held by a booking that does not exist.
    settled = cluster.manage_json(
        "import json; from datetime import timedelta; from decimal import Decimal; "
        "from django.db.models import Sum; "
        "from orders.booking.reconcile import payments_reconcile; "
        "from orders.models import GatewayEntry, Order, Payment, PaymentIntent, Segment; "
        "from airline.network.models import LegInventory; "
        "payments_reconcile(grace=timedelta(0)); "
        "orphans = [c.reference for c in GatewayEntry.objects.filter(kind='CHARGE') "
        "if not Payment.objects.filter(gateway_reference=c.charge_reference).exists() "
        "and (GatewayEntry.objects.filter(kind='REFUND', reference=c.reference)"
        ".aggregate(t=Sum('amount'))['t'] or Decimal(0)) != c.amount]; "
        "legs = [leg for leg, sold in LegInventory.objects.filter(rank=0, sold__gt=0)"
        ".values_list('leg_id', 'sold') if sold != (Segment.objects.filter("
        "legs__flight_leg_id=leg, holds_inventory=True).aggregate(t=Sum('seats'))['t'] or 0)]; "
        "print(json.dumps({'pending': PaymentIntent.objects.filter(state='PENDING').count()"
        " + Order.objects.filter(status='PENDING').count(), "
        "'orphans': orphans, 'legs': legs}))"
    )
    assert settled == {"pending": 0, "orphans": [], "legs": []}


WAL_SEGMENT = 16 * 1024 * 1024  # PostgreSQL's default, which the cluster keeps
WAL_SEGMENTS_PER_ID = 0x100000000 // WAL_SEGMENT


def wal_file(timeline: int, lsn: int) -> str:
    """The name of the WAL segment file holding `lsn` on `timeline`."""
    segment = lsn // WAL_SEGMENT
    return f"{timeline:08X}{segment // WAL_SEGMENTS_PER_ID:08X}{segment % WAL_SEGMENTS_PER_ID:08X}"


def order_commits(wal_dir: Path, timeline: int, start: int, relation: str) -> list[datetime]:
    """When each transaction that inserted or updated the orders table (`relation`: its
    tablespace/database/filenode) committed, as its commit record says, for the records
    pg_waldump finds on `timeline` from `start`."""
    waldump = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_waldump"))[-1]
    dumped = subprocess.run(
        [
            waldump,
            "-p",
            wal_dir,
            "-t",
            str(timeline),
            "-s",
            f"{start >> 32:X}/{start & 0xFFFFFFFF:X}",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,  # it ends with an error at the end of the WAL it was given
    )
    writers: set[str] = set()
    commits = []
    for line in dumped.stdout.splitlines():
        xid = line.split("tx: ")[1].split(",")[0].strip() if "tx: " in line else ""
        if f"rel {relation} " in line and ("INSERT" in line or "UPDATE" in line):
            writers.add(xid)
        elif "desc: COMMIT " in line:
            # a write in a savepoint carries the subtransaction's id; the commit lists them
            subxacts = (
                line.split("subxacts: ")[1].split(";")[0].split() if "subxacts: " in line else []
            )
            if writers.isdisjoint([xid, *subxacts]):
                continue
            stamp = line.split("desc: COMMIT ")[1].split(";")[0].strip()
            commits.append(datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S.%f %Z").replace(tzinfo=UTC))
    return commits


def assert_one_writer(cluster: Cluster, headers: dict) -> None:
    """No split brain: no member committed an order on a timeline once Patroni had
    switched away from it. Patroni's history gives each switch: the old timeline, the LSN
    where the new one forked, and when. Every WAL segment of the old timeline past that
    LSN that a member archived is read with pg_waldump: an old primary that went on
    taking writes after losing the lock would have archived them. Commits there may be
    only those the failure caught in flight (written before the switch, never
    acknowledged: synchronous replication waited for a standby that was promoted
    instead), so none may be later than the switch (a switch Patroni did not date is
    not judged). And the same reading of the
    current primary's WAL finds a booking made now, so the search is not blind."""
    assert book_priced(cluster, headers, priced_offers(cluster, headers, 1, first=300)) == [201]
    primary = cluster.primary()
    history = requests.get(cluster.member_api(primary) + "/history", timeout=10).json()
    relation = cluster.manage_json(
        "import json; from django.db import connection; cursor = connection.cursor(); "
        "cursor.execute(\"SELECT pg_relation_filenode('orders_order'), oid FROM pg_database "
        'WHERE datname = current_database()"); node, database = cursor.fetchone(); '
        "print(json.dumps(f'1663/{database}/{node}'))"
    )
    archive = cluster.dir / "backup" / "archive"
    for timeline, forked_at, *rest in history:
        if len(rest) < 2:
            continue  # a switch Patroni did not time (read from the timeline's history file)
        switched = rest[1]
        first = wal_file(timeline, forked_at)
        segments = [
            path
            for path in archive.glob(f"*/*/{timeline:08X}*/{timeline:08X}*")
            # whole segments only ("<name>-<sha1>.zst"): not a .partial nor a .backup
            if path.name[24:25] == "-" and path.name[:24] >= first
        ]
        with tempfile.TemporaryDirectory() as unpacked:
            for path in segments:
                with open(Path(unpacked) / path.name[:24], "wb") as out:
                    subprocess.run(["zstd", "-dc", path], stdout=out, check=True, timeout=60)
            commits = order_commits(Path(unpacked), timeline, forked_at, relation)
        late = [c for c in commits if c > datetime.fromisoformat(switched)]
        assert late == [], (timeline, forked_at, switched, late)
    if history:
        timeline, forked_at = history[-1][0] + 1, history[-1][1]
        made = order_commits(cluster.dir / f"pg{primary}" / "pg_wal", timeline, forked_at, relation)
        assert made, (timeline, forked_at, "the booking just made not found")


def fault_under_bookings(load: Load, fault) -> float:
    """The clients booking; `fault()` once a dozen are acknowledged; until eight more
    are after it. The monotonic time of the fault."""
    faulted_at = 0.0

    def during():
        nonlocal faulted_at
        load.wait_for_successes(12, 0, 120, "bookings under way")
        faulted_at = time.monotonic()
        fault()
        load.wait_for_successes(8, faulted_at + 0.1, 60, "bookings after")

    run_load(load, during)
    return faulted_at


def test_one_etcd_member_killed_changes_nothing(cluster, headers):
    """etcd keeps its quorum with two of three members: Patroni renews the leader lock
    on them, no booking fails, and supervisord starts the member again."""
    synchronous_pair(cluster)
    load = card_bookings(cluster, headers, 110, 40)
    member = cluster.pid("etcd1")
    fault_under_bookings(load, lambda: os.kill(member, signal.SIGKILL))
    assert [o for o in load.outcomes if o.status != 201] == []
    assert_kept(cluster, load)
    wait_for(lambda: cluster.pid("etcd1") not in (0, member), 30, "etcd1 restarted")


def test_a_killed_pgbouncer_is_restarted_by_supervisor(cluster, headers):
    """The primary's PgBouncer SIGKILLed: the requests that were using it fail (503);
    supervisord starts it again, and HAProxy's retries carry new connections over."""
    synchronous_pair(cluster)
    primary = cluster.primary()
    load = card_bookings(cluster, headers, 150, 80, days=40)
    pooler = cluster.pid(f"pool{primary}")
    faulted_at = fault_under_bookings(load, lambda: os.kill(pooler, signal.SIGKILL))
    assert longest_pause(load, faulted_at) <= 5
    assert cluster.pid(f"pool{primary}") not in (0, pooler)
    assert_kept(cluster, load)


def test_synchronous_standby_killed_stalls_bookings_for_seconds_at_most(cluster, headers):
    """The standby's host lost (its Patroni and PostgreSQL SIGKILLed): the primary stops
    waiting for it within Patroni's loop (synchronous_mode_strict off), so bookings never
    pause for more than 5 s; the standby comes back as the synchronous standby. Only a
    request whose stale-ok read was on the standby at that moment fails (503)."""
    synchronous_pair(cluster)
    standby = cluster.standby()
    load = card_bookings(cluster, headers, 190, 80, days=40)

    def kill_standby():
        os.kill(cluster.pid(f"patroni{standby}"), signal.SIGKILL)
        os.kill(cluster.postmaster(standby), signal.SIGKILL)

    faulted_at = fault_under_bookings(load, kill_standby)
    failed = [o for o in load.outcomes if o.status != 201]
    assert len(failed) <= CLIENTS, failed
    assert all(faulted_at <= o.ended <= faulted_at + 2 for o in failed), (
        faulted_at,
        time.time() - time.monotonic(),
        failed,
    )
    assert longest_pause(load, faulted_at) <= 5
    assert_kept(cluster, load)
    synchronous_pair(cluster)


def test_primary_killed_during_card_bookings_loses_no_acknowledged_booking(cluster, headers):
    """The primary's PostgreSQL SIGKILLed: Patroni fails over to the synchronous standby
    at once (primary_start_timeout 0), HAProxy follows Patroni's /primary, and the old
    primary comes back as the new one's standby (pg_rewind), never as a second primary."""
    synchronous_pair(cluster)
    old = cluster.primary()
    load = card_bookings(cluster, headers, 4, 100)
    killed_at = fault_under_bookings(load, lambda: os.kill(cluster.postmaster(old), signal.SIGKILL))
    recovered = min(o.ended for o in load.successes_since(killed_at + 0.1))
    assert recovered - killed_at <= RECOVERY_SECONDS, recovered - killed_at
    assert [o for o in load.outcomes if o.status == 503], "the kill landed between requests"
    assert cluster.primary() != old
    assert_kept(cluster, load)
    assert_one_writer(cluster, headers)
    synchronous_pair(cluster)
    assert cluster.roles()[old] == "replica"


def test_every_booking_a_primary_failure_cut_short_gets_its_true_answer(cluster, headers):
    """The primary SIGKILLed under card bookings each sent with an Idempotency-Key; every
    client not answered 201 retries with its key after the failover and the reconciler's
    settlement until it gets the final answer: the order (201) or the error. Then no
    order is confirmed that its client was not told of, and no key is left running."""
    synchronous_pair(cluster)
    offers = iter(priced_offers(cluster, headers, 80, first=110, days=40))
    lock = threading.Lock()
    sent: list[tuple[str, dict]] = []

    def book():
        with lock:
            priced = next(offers, None)
            if priced is None:
                return None
            key = f"cut-{len(sent)}-{os.getpid()}-{time.monotonic_ns()}"
            sent.append((key, priced))
        return requests.post(
            cluster.url + "/json/v1/orders",
            json=booking_body(priced, payment=CARD),
            headers={**headers, "Idempotency-Key": key},
            timeout=REQUEST_TIMEOUT,
        )

    load = Load(send=book)
    old = cluster.primary()
    started = datetime.now(UTC).isoformat()
    fault_under_bookings(load, lambda: os.kill(cluster.postmaster(old), signal.SIGKILL))
    assert [o for o in load.outcomes if o.status != 201], "the kill cut no request short"

    def reconcile(later: bool) -> None:
        """The worker's payment reconciler now, every intent due (grace 0); `later`: as
        it runs once the idempotency lease has passed (the clock moved on, not waited)."""
        cluster.manage_json(
            "import json; from datetime import timedelta; from django.conf import settings; "
            "from airline.api import clock; "
            "from orders.booking.reconcile import payments_reconcile; "
            f"ahead = {int(later)} * (settings.IDEMPOTENCY_LEASE_SECONDS + 1); "
            "print(json.dumps(payments_reconcile(now=clock.now() + timedelta(seconds=ahead), "
            "grace=timedelta(0))))"
        )

    def retried(key: str, priced: dict) -> requests.Response:
        """The answer to the same request, sent again with its key until it is not a
        503 (a moment's failure) nor a 409 (the request still in progress)."""
        for _ in range(10):
            answer = requests.post(
                cluster.url + "/json/v1/orders",
                json=booking_body(priced, payment=CARD),
                headers={**headers, "Idempotency-Key": key},
                timeout=REQUEST_TIMEOUT,
            )
            if answer.status_code != 503:
                break
            time.sleep(0.5)  # the client's back-off before it asks again
        return answer

    reconcile(later=False)
    answers = {key: retried(key, priced) for key, priced in sent}
    if any(answer.status_code == 409 for answer in answers.values()):
        # keys whose request died before it could free them: released after the lease
        reconcile(later=True)
        answers |= {
            key: retried(key, priced) for key, priced in sent if answers[key].status_code == 409
        }
    told: set[str] = set()
    for answer in answers.values():
        assert answer.status_code == 201 or 400 <= answer.status_code < 500, answer.text
        assert answer.status_code != 409, answer.text
        assert "json" in answer.headers["Content-Type"], answer.text
        if answer.status_code == 201:
            told.add(answer.json()["data"]["order"]["orderId"])
        else:
            assert answer.json()["error"]["code"].startswith("ERR-"), answer.text
    books = cluster.manage_json(
        "import json; from datetime import datetime; from orders.models import Order; "
        "from airline.api.models import IdempotencyRecord; "
        f"keys = {[key for key, _ in sent]!r}; since = datetime.fromisoformat({started!r}); "
        "print(json.dumps({'confirmed': sorted(Order.objects.filter(status='CONFIRMED', "
        "created_at__gte=since).values_list('order_id', flat=True)), "
        "'open': IdempotencyRecord.objects.filter(key__in=keys, "
        "state__in=['running', 'settling']).count()}))"
    )
    assert set(books["confirmed"]) <= told
    assert books["open"] == 0
    synchronous_pair(cluster)


def test_a_switchover_hands_the_primary_over_losing_no_booking(cluster, headers):
    """`scripts/cluster switchover` (patronictl) under card bookings: the standby becomes
    the primary, the old primary its synchronous standby, every booking kept, and
    bookings succeed again within RECOVERY_SECONDS of the switch's start."""
    synchronous_pair(cluster)
    old = cluster.primary()
    # Clients searching and pricing before each booking, as the switch may take the
    # primary away for seconds: offers priced beforehand would all be of the few days a
    # case has to itself, and a long switch would sell out their classes or use them up.
    load = booking_flow(cluster, headers)

    def switch() -> None:
        cluster.script("switchover", timeout=120)
        wait_for(lambda: cluster.primary() not in ("", old), 60, "the new primary")

    switched_at = fault_under_bookings(load, switch)
    assert longest_pause(load, switched_at) <= RECOVERY_SECONDS
    assert cluster.primary() not in ("", old)
    assert_kept(cluster, load)
    assert_one_writer(cluster, headers)
    synchronous_pair(cluster)
    assert cluster.roles()[old] == "replica"


def test_an_old_primary_started_by_hand_never_takes_a_write(cluster, headers):
    """The primary's Patroni stopped (its PostgreSQL with it: the standby takes over),
    then the old primary started by hand with pg_ctl, as a reboot's init script would:
    HAProxy never routes to it (its Patroni does not answer /primary), bookings go on
    on the new primary, and once its Patroni runs again it demotes and rewinds it."""
    synchronous_pair(cluster)
    old = cluster.primary()
    load = card_bookings(cluster, headers, 260, 100, days=40)
    pg_ctl = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"))[-1]
    routed = []

    def stop_then_start_by_hand():
        cluster.script("ctl", "stop", f"patroni{old}")
        wait_for(lambda: cluster.primary() not in ("", old), 30, "a new primary")
        data, log = cluster.dir / f"pg{old}", cluster.dir / "log" / "by-hand.log"
        subprocess.run(
            ["runuser", "-u", "postgres", "--", str(pg_ctl), "-D", data, "-l", log, "-w", "start"],
            check=True,
            timeout=60,
        )
        by_hand = time.monotonic()
        wait_for(lambda: len(load.successes_since(by_hand)) >= 8, 60, "bookings, old one up")
        routed.append(cluster.haproxy_stat(f"pg{old}", 17, backend="db_write"))

    try:
        fault_under_bookings(load, stop_then_start_by_hand)
    finally:
        cluster.script("ctl", "start", f"patroni{old}")
    assert routed == ["DOWN"]
    synchronous_pair(cluster)
    assert cluster.roles()[old] == "replica"
    assert_kept(cluster, load)
    assert_one_writer(cluster, headers)


def book_a_few(cluster: Cluster, headers: dict, first: int) -> Load:
    """Four card bookings, one a day from day `first`, all acknowledged."""
    load = card_bookings(cluster, headers, first, 4)
    run_load(load, lambda: wait_for(lambda: len(load.successes_since(0)) >= 4, 60, "bookings"))
    return load


ORDER_IDS = (
    "import json; from orders.models import Order; "
    "print(json.dumps(sorted(Order.objects.values_list('order_id', flat=True))))"
)


def test_stop_and_start_keep_every_order(cluster, headers):
    """`scripts/cluster stop` then `start`: every order as it was, and bookings again."""
    synchronous_pair(cluster)
    assert_kept(cluster, book_a_few(cluster, headers, 230))
    before = cluster.manage_json(ORDER_IDS)
    cluster.script("stop", timeout=300)
    assert cluster.roles() == {"1": "down", "2": "down"}
    cluster.script("start", timeout=600)
    assert cluster.manage_json(ORDER_IDS) == before
    synchronous_pair(cluster)
    assert_kept(cluster, book_a_few(cluster, headers, 240))


def test_restore_to_a_point_in_time_keeps_exactly_the_bookings_before_it(cluster, headers):
    """Bookings, a moment noted, more bookings; `scripts/cluster restore --time` the
    moment: a fresh cluster from the backup taken at `up` and the archived WAL, with
    every booking acknowledged before the moment and none after it."""
    synchronous_pair(cluster)
    before = book_a_few(cluster, headers, 320)
    noted = datetime.now(UTC)
    after = book_a_few(cluster, headers, 324)
    # To the millisecond, rounded up: a booking acknowledged before the moment committed
    # more than a millisecond before it.
    moment = (noted + timedelta(milliseconds=1)).isoformat(timespec="milliseconds")
    cluster.script("restore", "--time", moment, timeout=900)
    restored = set(cluster.manage_json(ORDER_IDS))
    acknowledged_before = {o.order_id for o in before.outcomes if o.status == 201}
    acknowledged_after = {o.order_id for o in after.outcomes if o.status == 201}
    assert acknowledged_before <= restored
    assert not acknowledged_after & restored
    assert_kept(cluster, before)
    synchronous_pair(cluster)
    assert_kept(cluster, book_a_few(cluster, headers, 300))
