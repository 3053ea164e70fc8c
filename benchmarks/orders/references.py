"""The orders benchmark's references beside its own rates: pgbench's TPC-B-like rate on a
scratch database, the holds' own SQL replayed by pgbench (benchmarks/replay.py), and the
same SQL served over HTTP with nothing else (benchmarks/floor.py) and behind the
service's framework with nothing of a booking (benchmarks/floor_urls.py)."""

import os
import re
import subprocess

import psycopg

from benchmarks.common import (
    BENCH_DATABASE,
    start_gunicorn,
)
from benchmarks.orders.load import cpu_snapshot, cpu_spent, cpu_watch, load_phase
from benchmarks.orders.sizes import CLIENTS, PGBENCH_SECONDS
from benchmarks.replay import Replayer

# Its own name per bench database, so two benches side by side never share it.
PGBENCH_DATABASE = os.environ.get("PGBENCH_DATABASE", f"{BENCH_DATABASE}_pgbench")


def _pg_args() -> list[str]:
    return ["-h", "127.0.0.1", "-p", "5432", "-U", "postgres"]


def pgbench_init() -> None:
    with psycopg.connect("postgres://postgres@127.0.0.1:5432/postgres", autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {PGBENCH_DATABASE} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {PGBENCH_DATABASE}")
    subprocess.run(
        ["pgbench", *_pg_args(), "-i", "-s", "1", "-q", PGBENCH_DATABASE],
        check=True,
        capture_output=True,
    )


def pgbench_tps() -> float:
    """pgbench's built-in TPC-B-like script, 8 clients, 2 threads."""
    done = subprocess.run(
        [
            "pgbench",
            *_pg_args(),
            "-c",
            str(CLIENTS),
            "-j",
            "2",
            "-T",
            str(PGBENCH_SECONDS),
            "-n",
            PGBENCH_DATABASE,
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    return float(re.search(r"^tps = ([\d.]+)", done.stdout, re.MULTILINE).group(1))


def pgbench_drop() -> None:
    with psycopg.connect("postgres://postgres@127.0.0.1:5432/postgres", autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {PGBENCH_DATABASE} WITH (FORCE)")


def replay_phase(replayer: Replayer, seconds: float, server_pid: int) -> dict:
    """The captured holds' SQL replayed by pgbench (-c CLIENTS -j 2) on the bench
    database for `seconds` (whole seconds, as -T takes them), with the CPU per replayed
    hold of PostgreSQL, of pgbench and of the machine."""
    duration = max(1, round(seconds))
    result = replayer.run(duration, watch=lambda process: cpu_watch(server_pid, process))
    cpu = result.pop("watched")
    done = max(1, result["transactions"])
    result["seconds"] = duration
    result["cpu_per_hold"] = {
        "postgresql": cpu["postgresql"] / done,
        "pgbench": result["pgbench_cpu"] / done,
        "machine": cpu["machine"] / done,
        "machine idle": cpu["machine idle"] / done,
    }
    return result


def floor_start(replayer: Replayer, workers: int, *, framework: bool = False):
    """gunicorn serving the replay's scripts (`workers` sync workers, like the service's):
    bare (benchmarks/floor.py), or with `framework` behind the service's own WSGI entry
    point, gunicorn config, middleware, authentication and throttling
    (benchmarks/floor_urls.py). (process, port)."""
    env = {
        "FLOOR_SCRIPTS": str(replayer.path),
        "FLOOR_DATABASE": BENCH_DATABASE,
        "FLOOR_CLIENTS": str(CLIENTS),
    }
    if framework:
        return start_gunicorn(
            workers=workers,
            options=["--config", "python:benchmarks.floor_framework"],
            env={**env, "DJANGO_SETTINGS_MODULE": "benchmarks.floor_settings"},
        )
    return start_gunicorn(
        workers=workers,
        app="benchmarks.floor:application",
        options=["--config", "python:benchmarks.floor"],
        env=env,
    )


def floor_phase(
    replayer: Replayer,
    port: int,
    server_pid: int,
    bodies: list,
    seconds: float,
    headers: dict,
    what: str = "the floor",
) -> dict:
    """The captured holds' SQL served by a floor (floor_start): CLIENTS clients POST the
    hold phase's own bodies, with the hold phase's headers, for as long as that phase
    took. Its rate and the CPU per hold of each part of the machine; every row it wrote is
    deleted after it (Replayer.room)."""
    requests = [("POST", "/json/v1/orders", body) for body in bodies]
    with replayer.room() as done:
        before = cpu_snapshot(server_pid)
        result = load_phase(port, requests, headers, "fl", CLIENTS, seconds)
        cpu = cpu_spent(before, cpu_snapshot(server_pid))
    cpu["clients"] = result["clients_cpu"]
    if result["failed"] or not result["sent"]:
        raise RuntimeError(f"{what} failed {result['failed']} holds: {result['error']}")
    if done["deleted"] < result["sent"]:
        raise RuntimeError(f"{what} held {result['sent']} but left {done['deleted']} rows")
    return {
        "rate": result["rate"],
        "cpu_per_hold": {part: spent / result["sent"] for part, spent in cpu.items()},
    }
