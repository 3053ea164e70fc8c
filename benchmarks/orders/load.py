"""The orders benchmark's client processes and the load they send: timed phases of
requests, the CPU each part of the machine spent, and the server's own times from its
access log."""

import http.client
import json
import multiprocessing
import os
import subprocess
import time
from collections.abc import Collection, Sequence
from pathlib import Path

from benchmarks.orders.sizes import CLIENTS, SECONDS


def cpu_snapshot(server_pid: int | Collection[int], pids: list[int] | None = None) -> dict:
    """CPU seconds (user + system) spent so far by each gunicorn process (of the master
    `server_pid`, or of each of several) and each PostgreSQL process (backends, WAL
    writer, checkpointer), by pid, and by the whole machine. With `pids`, only those
    processes are read."""
    masters = {server_pid} if isinstance(server_pid, int) else set(server_pid)
    tick = os.sysconf("SC_CLK_TCK")
    spent = {"gunicorn": {}, "postgresql": {}}
    entries = Path("/proc").iterdir() if pids is None else (Path(f"/proc/{p}") for p in pids)
    for entry in entries:
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # gone meanwhile
            continue
        # The command name is in parentheses and may hold spaces: split after it.
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        pid, ppid = int(entry.name), int(fields[1])
        seconds = (int(fields[11]) + int(fields[12])) / tick
        if pid in masters or ppid in masters:
            spent["gunicorn"][pid] = seconds
        elif name == "postgres":
            spent["postgresql"][pid] = seconds
    machine = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    user, nice, system, idle, iowait, irq, softirq = (int(v) for v in machine[:7])
    spent["machine"] = (user + nice + system + irq + softirq) / tick
    spent["machine idle"] = (idle + iowait) / tick
    return spent


def cpu_watch(server_pid: int | Collection[int], process: subprocess.Popen) -> dict[str, float]:
    """CPU spent (as cpu_spent) while `process` runs, counting the processes that start
    and end meanwhile, as pgbench's PostgreSQL backends do, by their last reading: every
    0.1 s the processes seen so far are read again (the whole of /proc once, early on,
    to find the new ones), so a backend's last 0.1 s at most is missed."""
    before = cpu_snapshot(server_pid)
    started = time.monotonic()
    last, pids = before, None
    while process.poll() is None:
        time.sleep(0.1)
        if pids is None and time.monotonic() - started > 0.5:
            now = cpu_snapshot(server_pid)
            pids = [pid for part in ("gunicorn", "postgresql") for pid in now[part]]
        elif pids is None:
            continue
        else:
            now = cpu_snapshot(server_pid, pids)
        last = {
            part: {**last[part], **now[part]} if isinstance(now[part], dict) else now[part]
            for part in now
        }
    return cpu_spent(before, last)


def cpu_spent(before: dict, after: dict) -> dict[str, float]:
    """Seconds spent between two snapshots. A process that ended in between (an
    autovacuum worker, say) took its time with it: the figures are then a little low."""
    spent = {}
    for part, now in after.items():
        if isinstance(now, dict):
            spent[part] = sum(seconds - before[part].get(pid, 0.0) for pid, seconds in now.items())
        else:
            spent[part] = now - before[part]
    return spent


def load(port: int, paths: list[str], headers: dict, tag: str, clients: int = CLIENTS) -> float:
    """`clients` processes GET `paths` (each from its own place in the list) for SECONDS;
    requests per second."""
    return load_requests(port, [("GET", path, None) for path in paths], headers, tag, clients)


def load_requests(
    port: int,
    requests: list[tuple],
    headers: dict,
    tag: str,
    clients: int = CLIENTS,
    seconds: float = SECONDS,
) -> float:
    """`load_phase`'s requests per second, its failures printed."""
    result = load_phase(port, requests, headers, tag, clients, seconds)
    if result["failed"]:
        print(f"  ({result['failed']} failed requests in phase {tag}: {result['error']})")
    return result["rate"]


def load_phase(
    port: int | Sequence[int],
    requests: list[tuple],
    headers: dict,
    tag: str,
    clients: int = CLIENTS,
    seconds: float = SECONDS,
) -> dict:
    """`clients` processes send `requests` (method, path, body), each client from its own
    place in the list, for `seconds`: requests per second (only a 2xx counts), each 2xx's
    seconds as its client saw them, how many failed and the first failure, and the
    client processes' CPU. All start at one instant once every client process is up, as
    in book_phase, so that starting the client processes (CPU on the same two cores) is
    not inside the timed phase. With several ports (nodes), the clients are dealt out
    among them in turn (`client_ports`)."""
    start_at = time.monotonic() + 0.3
    until = start_at + seconds
    results = run_clients(
        _load_client,
        [
            (
                client_port,
                requests,
                headers,
                f"{tag}-{n}",
                n * len(requests) // clients,
                start_at,
                until,
            )
            for n, client_port in enumerate(client_ports(port, clients))
        ],
    )
    sent = sum(r["sent"] for r in results)
    return {
        "rate": sent / (time.monotonic() - start_at),
        "sent": sent,
        "latencies": [t for r in results for t in r["latencies"]],
        "failed": sum(r["failed"] for r in results),
        "error": next((r["error"] for r in results if r["error"]), ""),
        "clients_cpu": sum(r["cpu"] for r in results),
    }


def _load_client(
    port: int,
    requests: list,
    headers: dict,
    tag: str,
    position: int,
    start_at: float,
    until: float,
    results,
):
    time.sleep(max(0.0, start_at - time.monotonic()))
    sent = failed = 0
    error = ""
    latencies = []
    while time.monotonic() < until:
        method, path, body = requests[position % len(requests)]
        position += 1
        sent_at = time.monotonic()
        try:
            status, raw = call(port, method, path, body, headers, f"{tag}-{sent + failed}")
        except (OSError, http.client.HTTPException) as exc:
            status, raw = 0, repr(exc).encode()
        if 200 <= status < 300:
            sent += 1
            latencies.append(time.monotonic() - sent_at)
        else:
            failed += 1
            error = error or f"{status} {raw[:200]!r}"
    results.put(
        {
            "sent": sent,
            "latencies": latencies,
            "failed": failed,
            "error": error,
            "cpu": time.process_time(),  # this client process's CPU since it was forked
        }
    )


def server_times(log: Path) -> dict[str, list[float]]:
    """Seconds per successful request, by the tag its request id starts with."""
    found: dict[str, list[float]] = {}
    for line in log.read_text().splitlines():
        if not line.startswith("{") or '"request_id"' not in line:
            continue
        try:
            fields = json.loads(line)
        except ValueError:
            continue
        if fields.get("status", 500) >= 300:
            continue
        tag = str(fields.get("request_id", "")).split("-")[0]
        found.setdefault(tag, []).append(fields["duration_ms"] / 1000)
    return found


def client_ports(port: int | Sequence[int], clients: int) -> list[int]:
    """The port each of `clients` clients talks to: `port`, or with one port per node
    the nodes in turn, so that each gets an even share of the clients."""
    ports = [port] if isinstance(port, int) else list(port)
    return [ports[n % len(ports)] for n in range(clients)]


def run_clients(target, args_per_client: list[tuple]) -> list[dict]:
    """One process per argument tuple, each putting one result on a queue."""
    results = multiprocessing.Queue()
    processes = [
        multiprocessing.Process(target=target, args=(*args, results)) for args in args_per_client
    ]
    for p in processes:
        p.start()
    collected = [results.get(timeout=600) for _ in processes]  # before join: big results
    for p in processes:
        p.join()
        assert p.exitcode == 0, p.exitcode
    return collected


def call(
    port: int, method: str, path: str, body, headers: dict, request_id: str | None = None
) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        headers = {**headers, "x-request-id": request_id} if request_id else headers
        connection.request(
            method,
            path,
            body=body if isinstance(body, bytes | None) else json.dumps(body).encode(),
            headers=headers,
        )
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def json_headers(port: int, raw_key: str) -> dict:
    """The headers of a JSON request with a token the server on `port` issued for the API
    key `raw_key`."""
    status, raw = call(port, "POST", "/auth/token", None, {"x-api-key": raw_key})
    assert status in (200, 201), raw
    return {
        "Authorization": f"Bearer {json.loads(raw)['access_token']}",
        "Content-Type": "application/json",
    }


def wait_ready(port: int) -> None:
    """Until /health has said ok for 3 s without a break (both workers' indexes warm).
    The bound is a guard against a server that never comes up: on a busy machine two
    nodes building the full schedule's index at once take minutes."""
    deadline = time.monotonic() + 600
    ok_since = None
    while ok_since is None or time.monotonic() - ok_since < 3:
        if time.monotonic() > deadline:
            raise RuntimeError("server did not become ready")
        try:
            ok = call(port, "GET", "/health", None, {})[0] == 200
        except OSError:
            ok = False
        ok_since = (ok_since or time.monotonic()) if ok else None
        time.sleep(0.01)
