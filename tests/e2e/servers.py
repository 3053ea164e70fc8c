"""Real gunicorn processes for end-to-end tests, on free loopback ports."""

import json
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import requests
from django.conf import settings
from django.db import connection

from tests.cachekeys import worker_prefix

REPO = Path(__file__).resolve().parents[2]
START_TIMEOUT_SECONDS = 30


@dataclass
class Server:
    url: str
    log: Path
    pid: int = 0  # the gunicorn arbiter's

    def output(self) -> str:
        return self.log.read_text()


# Not the `random` module's generator: pytest-randomly seeds that alike in every xdist
# worker, which would then try the same ports in the same order.
_PORTS = random.SystemRandom()


def free_port() -> int:
    """A loopback port nothing listens on, below the kernel's ephemeral range: a port
    the kernel hands out (bind to 0) may be taken as the local end of any outgoing
    connection before the server that was meant to listen on it starts."""
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    while True:
        port = _PORTS.randrange(10_000, low)
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port


def base_env(**overrides: str) -> dict[str, str]:
    """This process's environment without its storage settings, plus `overrides`."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k
        not in (
            "DATABASE_URL",
            "REDIS_URL",
            "REDIS_SENTINELS",
            "CACHE_KEY_PREFIX",
            "DJANGO_SETTINGS_MODULE",
        )
    }
    env["DJANGO_SETTINGS_MODULE"] = "airline.settings"
    env.update(overrides)
    return env


def server_env_on_test_database() -> dict[str, str]:
    """Environment for a server on this test run's database and Redis key space, which it
    sees only for data a `transaction=True` test has committed."""
    db = connection.settings_dict
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    return base_env(
        AIRLINE_ENV="test",
        SECRET_KEY=settings.SECRET_KEY,
        DATABASE_URL=f"postgres://{db['USER']}{password}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        REDIS_URL=settings.REDIS_URL,
        CACHE_KEY_PREFIX=worker_prefix(),
    )


def manage(env: dict[str, str], *args: str) -> str:
    result = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


@contextmanager
def gunicorn(
    env: dict[str, str],
    log: Path,
    *,
    workers: int = 1,
    args: tuple[str, ...] = (),
    port: int | None = None,
) -> Iterator[Server]:
    """A gunicorn serving the project until the block ends; waits for /health to answer.
    `args` are more gunicorn options; `port` one to reuse (a node restarted), else a free one."""
    port = port or free_port()
    with log.open("w") as out:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "airline.wsgi",
                "--bind",
                f"127.0.0.1:{port}",
                "--workers",
                str(workers),
                "--error-logfile",
                "-",
                *args,
            ],
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        server = Server(url=f"http://127.0.0.1:{port}", log=log, pid=process.pid)
        try:
            _wait_until_up(server, process)
            yield server
        finally:
            process.terminate()
            process.wait(timeout=15)


def wait_until_ready(server: Server, timeout: float = 60) -> requests.Response:
    """Poll /health until it says ok (the schedule loaded and this worker's caches warm)."""
    deadline = time.monotonic() + timeout
    while True:
        response = requests.get(server.url + "/health", timeout=5)
        if response.status_code == 200 or time.monotonic() > deadline:
            return response
        time.sleep(0.1)  # polling a warming process, not timing behaviour


def _wait_until_up(server: Server, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"gunicorn exited early:\n{server.output()}")
        try:
            requests.get(server.url + "/health", timeout=5)
            return
        except requests.RequestException:
            time.sleep(0.1)  # polling a starting process, not timing behaviour
    raise AssertionError(f"gunicorn did not start in {START_TIMEOUT_SECONDS} s:\n{server.output()}")


def index_build_seconds() -> float:
    """How long this machine, now, takes to build the schedule index of the committed
    schedule: what a request that waited for a build would take. Tests bound request
    times by a fraction of it ("did not wait for a build"), not by wall-clock figures,
    which are benchmarks' (benchmarks.schedule)."""
    from airline.network.itineraries import build_index, schedule_version

    started = time.monotonic()
    build_index(schedule_version())
    return time.monotonic() - started


def worker_pids(arbiter: int) -> list[int]:
    """The gunicorn arbiter's children, read from /proc."""
    children = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # ended meanwhile
        # pid (comm) state ppid ...: comm may hold spaces, so split after its ')'.
        if int(stat.rsplit(")", 1)[1].split()[1]) == arbiter:
            children.append(int(entry.name))
    return children


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) process `pid` has used so far, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def server_seconds(logs: list[Path], request_id_prefix: str) -> dict[str, float]:
    """The server's own time (its access-log line, airline/api/middleware.py) of each
    request whose x-request-id starts with `request_id_prefix`, by request id: what a
    request cost the node, without the client's or the loopback's share."""
    found = {}
    for log in logs:
        for line in log.read_text().splitlines():
            if f'"request_id":"{request_id_prefix}' not in line:
                continue
            fields = json.loads(line)
            found[fields["request_id"]] = fields["duration_ms"] / 1000
    return found


class Probes:
    """A client searching (POST /json/v1/offers with `search`) and another probing
    /health, in loops, until stopped: what a node restart looks like to a load balancer
    and to a client (tests/e2e/test_index_restart.py, benchmarks.schedule)."""

    def __init__(self, url: str, headers: dict[str, str], search: dict) -> None:
        self.url, self.headers, self.search = url, headers, search
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
                    json=self.search,
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


class RedisServer:
    """A redis-server of a test's own on a free port, without persistence; `args` are
    more of its options (`--replicaof host port`), or a config file and `--sentinel`."""

    def __init__(self, log: Path, *args: str, port: int | None = None) -> None:
        self.port = port or free_port()
        self.log = log
        self.args = args
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        with self.log.open("a") as out:
            self.process = subprocess.Popen(
                ["redis-server", *self.args, "--port", str(self.port), "--bind", "127.0.0.1"]
                # The master's RDB for a replica's sync goes in the test's directory.
                + (
                    []
                    if "--sentinel" in self.args
                    else ["--save", "", "--dir", str(self.log.parent)]
                ),
                cwd=self.log.parent,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), 1):
                    return
            except OSError:
                time.sleep(0.05)  # polling a starting process, not timing behaviour
        raise AssertionError(f"redis-server did not start:\n{self.log.read_text()}")

    def kill(self) -> None:
        """SIGKILL, as a crash of the host would end it."""
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop_if_running(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.kill()
