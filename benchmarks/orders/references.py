"""The orders benchmark's references beside its own rates: pgbench's TPC-B-like rate on a
scratch database, and the holds' own SQL replayed by pgbench (benchmarks/replay.py)."""

import os
import re
import subprocess

import psycopg

from benchmarks.common import (
    BENCH_DATABASE,
)
from benchmarks.orders.load import cpu_watch
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
