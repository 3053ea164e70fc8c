"""The cluster's cost and its fault matrix. Run with `python -m benchmarks.cluster`
(root or sudo: scripts/cluster runs PostgreSQL as its own user).

A cluster of its own (scripts/cluster up, CLUSTER_DIR var/cluster-bench, ports from
CLUSTER_BENCH_PORT, default 7700, upwards; docs/operators/cluster.md), and beside it one gunicorn
of as many workers as the cluster's nodes together, connected straight to the primary
and its Redis: no HAProxy, no PgBouncer. Same run, same database, the same synchronous
standby behind both, so the ratio is what the balancer and the pooler cost.

- create order on hold: 8 client threads booking offers priced beforehand (one a day on
  busy CHS-PVD, in both directions), through the cluster and direct, taking turns
  REPEATS times; holds per second (median of the phases) and the client's p95;
- the fault matrix: 8 clients booking by card (each charge 150 ms) while, in turn, the
  primary's PostgreSQL, the synchronous standby's host (Patroni and PostgreSQL), the
  primary's PgBouncer and one etcd member are SIGKILLed; for each, the longest time
  without an acknowledged booking from the fault on, the answers that were not 201 (all
  503: ERR-9000, or ERR-8002 where a request's authentication met the dead primary, in
  a sound run) and the acknowledged bookings not found confirmed afterwards (0).
"""

import itertools
import json
import os
import signal
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import date, timedelta

import requests

from benchmarks.common import REPO, median, ms, p95, report, table, write_figures

CLIENTS = 8
PER_PHASE = 80
REPEATS = 3
BASE = int(os.environ.get("CLUSTER_BENCH_PORT", "7700"))
DIR = REPO / "var" / "cluster-bench"
ENV = {
    **os.environ,
    "CLUSTER_DIR": str(DIR),
    "CLUSTER_PORT": str(BASE),
    "CLUSTER_PG1_PORT": str(BASE + 1),
    "CLUSTER_PG2_PORT": str(BASE + 2),
    "CLUSTER_DB_PORT": str(BASE + 3),
    "CLUSTER_DB_READ_PORT": str(BASE + 4),
    "CLUSTER_API1_PORT": str(BASE + 5),
    "CLUSTER_API2_PORT": str(BASE + 6),
    "CLUSTER_POOL1_PORT": str(BASE + 11),
    "CLUSTER_POOL2_PORT": str(BASE + 12),
    "CLUSTER_ETCD1_PORT": str(BASE + 13),
    "CLUSTER_ETCD2_PORT": str(BASE + 14),
    "CLUSTER_ETCD3_PORT": str(BASE + 15),
    "CLUSTER_ETCD_PEER1_PORT": str(BASE + 16),
    "CLUSTER_ETCD_PEER2_PORT": str(BASE + 17),
    "CLUSTER_ETCD_PEER3_PORT": str(BASE + 18),
    "CLUSTER_REDIS_PORT": str(BASE + 20),
    "CLUSTER_NODE_PORT": str(BASE + 31),
    "CLUSTER_KEY_RATE": str(10**7),
    "AIRLINE_ENV": "development",
    "TEST_GATEWAY_LATENCY_MS": "150",
}
DIRECT_PORT = BASE + 40
CARD = {
    "type": "CreditCard",
    "cardType": "VI",
    "cardNumber": "4111111111111111",
    "expiryDate": "1230",
    "securityCode": "737",
    "payer": {"name": {"givenName": "Ada", "surname": "Lovelace"}},
}


def cluster(*args: str) -> str:
    return subprocess.run(
        [str(REPO / "scripts" / "cluster"), *args],
        env=ENV,
        stdout=subprocess.PIPE,  # its progress and errors (stderr) show as they come
        text=True,
        timeout=1200,
        check=True,
    ).stdout


def priced_offers(url: str, headers: dict, first_day: date, count: int, skip: int) -> list[dict]:
    offers = []
    for n in range(count):
        origin, destination = ("CHS", "PVD") if n % 2 else ("PVD", "CHS")
        day = first_day + timedelta(days=skip + n // 2)
        found = requests.post(
            url + "/json/v1/offers",
            json={
                "originDestinations": [
                    {"origin": origin, "destination": destination, "departureDate": str(day)}
                ],
                "passengers": [{"type": "ADT"}],
            },
            headers=headers,
            timeout=60,
        ).json()["data"]["offers"][0]
        priced = requests.post(
            url + "/json/v1/offers/price",
            json={
                "selections": [
                    {
                        "offerId": found["offerId"],
                        "offerItemIds": [found["offerItems"][0]["offerItemId"]],
                    }
                ],
                "passengers": [{"type": "ADT"}],
            },
            headers=headers,
            timeout=60,
        )
        priced.raise_for_status()
        offers.append(priced.json()["data"])
    return offers


def body(priced: dict, payment: dict) -> dict:
    return {
        "offerId": priced["offer"]["offerId"],
        "offerItemIds": [i["offerItemId"] for i in priced["offer"]["items"]],
        "passengers": [
            {
                "passengerId": p["paxId"],
                "type": p["ptc"],
                "name": {"givenName": "Pat", "surname": "Doe"},
            }
            for p in priced["pax"]
        ],
        "contact": {"emailAddress": "pat@example.com", "phoneNumber": "+1 401 555 0123"},
        "payment": payment,
    }


def book_all(
    url: str, headers: dict, offers: list[dict], payment: dict, stop=None, pace: float = 0.0
) -> list:
    """CLIENTS threads booking `offers` once each (until `stop` is set), each client
    starting a booking at most every `pace` seconds: (started, ended, status, error
    code, orderId) of each."""
    queue = iter(offers)
    lock = threading.Lock()
    outcomes = []

    def client():
        while stop is None or not stop.is_set():
            with lock:
                priced = next(queue, None)
            if priced is None:
                return
            started = time.monotonic()
            try:
                response = requests.post(
                    url + "/json/v1/orders", json=body(priced, payment), headers=headers, timeout=60
                )
                answer = (
                    response.json()
                    if response.headers.get("Content-Type", "").startswith("application/json")
                    else {}
                )
                status = response.status_code
            except requests.RequestException as exc:
                answer, status = {}, type(exc).__name__
            code = (answer.get("error") or {}).get("code", "")
            order = ((answer.get("data") or {}).get("order") or {}).get("orderId", "")
            with lock:
                outcomes.append((started, time.monotonic(), status, code, order))
            if status != 201 and stop is not None:
                stop.wait(1.0)  # a client backs off after a 503
            elif pace and stop is not None:
                stop.wait(max(0.0, started + pace - time.monotonic()))

    with ThreadPoolExecutor(CLIENTS) as pool:
        for future in [pool.submit(client) for _ in range(CLIENTS)]:
            future.result()
    return outcomes


def roles() -> dict[str, str]:
    """Each member's role as its Patroni says (scripts/cluster status)."""
    return {
        line.split()[0][2:]: line.split()[2]
        for line in cluster("status").splitlines()
        if line.startswith("pg")
    }


def wait_for_pair() -> None:
    """Until a primary and its synchronous standby are up again after the last fault."""
    deadline = time.monotonic() + 300
    while True:
        status = cluster("status")
        if " primary " in status and " replica " in status and " sync" in status:
            return
        assert time.monotonic() < deadline, status
        time.sleep(0.5)  # polling the members' state


def member(role: str) -> str:
    return next(n for n, r in roles().items() if r == role)


def postmaster(n: str) -> int:
    return int((DIR / f"pg{n}" / "postmaster.pid").read_text().split()[0])


def program(name: str) -> int:
    return int(cluster("pid", name).strip())


def kill(*pids: int) -> None:
    for pid in pids:
        os.kill(pid, signal.SIGKILL)


FAULTS = [
    ("primary's PostgreSQL SIGKILLed", lambda: kill(postmaster(member("primary")))),
    (
        "synchronous standby's host (Patroni + PostgreSQL) SIGKILLed",
        lambda: kill(program(f"patroni{member('replica')}"), postmaster(member("replica"))),
    ),
    ("primary's PgBouncer SIGKILLed", lambda: kill(program(f"pool{member('primary')}"))),
    ("one etcd member SIGKILLed", lambda: kill(program("etcd1"))),
]


def fault_run(url: str, headers: dict, offers: list, fault, env: dict) -> tuple[str, str, str]:
    """Card bookings, each client one a second; `fault()` 3 s in; 12 s more. The longest
    time without a booking acknowledged from the fault on, the answers not 201 (and
    whether all were 503), the acknowledged bookings not found confirmed afterwards."""
    stop = threading.Event()
    faulted = {}

    def when_busy():
        time.sleep(3)  # bookings under way: the benchmark's own pacing, not a wait on state
        faulted["at"] = time.monotonic()
        fault()
        time.sleep(12)
        stop.set()

    thread = threading.Thread(target=when_busy)
    thread.start()
    outcomes = book_all(url, headers, offers, CARD, stop=stop, pace=1.0)
    thread.join()
    ends = sorted(o[1] for o in outcomes if o[2] == 201 and o[1] >= faulted["at"])
    moments = [faulted["at"], *ends]
    pause = max((b - a for a, b in itertools.pairwise(moments)), default=None)
    booked = [o[4] for o in outcomes if o[2] == 201]
    script = (
        "import json; from orders.models import Order; "
        f"ids = {booked!r}; "
        "print(json.dumps(Order.objects.filter(order_id__in=ids, status='CONFIRMED').count()))"
    )
    found = json.loads(
        subprocess.run(
            [str(REPO / ".venv" / "bin" / "python"), "manage.py", "shell", "-c", script],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        .stdout.strip()
        .splitlines()[-1]
    )
    failed = [o for o in outcomes if o[2] != 201]
    sound = all(o[2:4] in {(503, "ERR-9000"), (503, "ERR-8002")} for o in failed)
    return (
        f"{pause:.1f} s" if pause is not None else "never",
        f"{len(failed)} ({'all 503' if sound else 'OTHER ANSWERS'})",
        f"{len(booked) - found} of {len(booked)}",
    )


def main() -> None:
    subprocess.run([str(REPO / "scripts" / "cluster"), "destroy", "--yes"], env=ENV, check=False)
    cluster("up")
    direct = None
    try:
        first_day = date.fromisoformat(
            (DIR / "log" / "seed.log").read_text().split("schedule from ")[1].split()[0]
        )
        app = dict(line.split("=", 1) for line in cluster("env").split())
        app["DATABASE_URL"] = f"postgres://postgres@127.0.0.1:{BASE + 1}/airline"
        app["DB_TRANSACTION_POOLING"] = "0"
        nodes, workers = int(ENV.get("CLUSTER_NODES", 2)), int(ENV.get("CLUSTER_WORKERS", 2))
        direct = subprocess.Popen(
            [
                str(REPO / ".venv" / "bin" / "gunicorn"),
                "airline.wsgi",
                "--bind",
                f"127.0.0.1:{DIRECT_PORT}",
                "--workers",
                str(nodes * workers),
                "--log-level",
                "warning",
            ],
            cwd=REPO,
            env={**ENV, **app},
            stdout=subprocess.DEVNULL,
            stderr=(DIR / "log" / "direct.log").open("w"),
        )
        urls = {"cluster": f"http://127.0.0.1:{BASE}", "direct": f"http://127.0.0.1:{DIRECT_PORT}"}
        deadline = time.monotonic() + 300
        while True:
            try:
                if requests.get(urls["direct"] + "/health", timeout=5).status_code == 200:
                    break
            except requests.RequestException:
                pass
            assert time.monotonic() < deadline, "the direct node did not start"
            time.sleep(0.5)
        key = (DIR / "api-key").read_text().strip()
        token = requests.post(
            urls["cluster"] + "/auth/token", headers={"x-api-key": key}, timeout=30
        )
        headers = {"Authorization": f"Bearer {token.json()['access_token']}"}

        rates: dict[str, list[float]] = {"cluster": [], "direct": []}
        seconds: dict[str, list[float]] = {"cluster": [], "direct": []}
        errors = {"cluster": 0, "direct": 0}
        skip = 3
        for repeat in range(REPEATS):
            for layout in ("cluster", "direct") if repeat % 2 == 0 else ("direct", "cluster"):
                offers = priced_offers(urls[layout], headers, first_day, PER_PHASE, skip)
                skip += PER_PHASE // 2
                started = time.monotonic()
                outcomes = book_all(urls[layout], headers, offers, {"type": "Hold"})
                rates[layout].append(len(outcomes) / (time.monotonic() - started))
                seconds[layout] += [o[1] - o[0] for o in outcomes]
                errors[layout] += sum(1 for o in outcomes if o[2] != 201)
        rows = []
        for name, pick in (
            ("holds/s", lambda lay: median(rates[lay])),
            ("p95", lambda lay: p95(seconds[lay])),
        ):
            value, reference = pick("cluster"), pick("direct")
            shown = (lambda v: f"{v:.1f}") if name == "holds/s" else ms
            rows.append(
                (
                    f"create order (hold) {name}",
                    shown(value),
                    shown(reference) + " direct",
                    f"{value / reference:.2f}",
                )
            )
        rows.append(("non-201 answers", str(errors["cluster"]), f"{errors['direct']} direct", ""))
        report(f"Cluster: HAProxy + PgBouncer against direct, {CLIENTS} clients", rows)

        env = {**ENV, **dict(line.split("=", 1) for line in cluster("env").split())}
        rows = []
        # The days of the holds above again (a seat each per flight and direction): the
        # schedule has not days enough for all the cases otherwise.
        for n, (case, fault) in enumerate(FAULTS):
            wait_for_pair()
            offers = priced_offers(urls["cluster"], headers, first_day, 160, 3 + 80 * n)
            rows.append((case, *fault_run(urls["cluster"], headers, offers, fault, env)))
        table(
            f"Cluster: the fault matrix under {CLIENTS} clients' card bookings",
            ("fault", "longest without a booking", "answers not 201", "acknowledged lost"),
            rows,
        )
        write_figures("cluster")
    finally:
        if direct is not None:
            direct.terminate()
            direct.wait(timeout=30)
        subprocess.run(
            [str(REPO / "scripts" / "cluster"), "destroy", "--yes"], env=ENV, check=False
        )


if __name__ == "__main__":
    main()
