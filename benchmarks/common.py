"""Shared pieces of the benchmarks: a fresh database, timing statistics, a report table."""

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import psycopg

# BENCH_DATABASE names another scratch database, for a bench beside someone else's.
BENCH_DATABASE = os.environ.get("BENCH_DATABASE", "airline_bench")


def prepare_environment() -> None:
    """Point Django at a scratch PostgreSQL database and Redis db 2 (never the dev ones)."""
    os.environ.setdefault("AIRLINE_ENV", "test")
    os.environ.setdefault("DATABASE_URL", f"postgres://postgres@127.0.0.1:5432/{BENCH_DATABASE}")
    os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/2")
    os.environ.setdefault("CACHE_KEY_PREFIX", "bench")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "airline.settings")


def recreate_database() -> None:
    with psycopg.connect("postgres://postgres@127.0.0.1:5432/postgres", autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {BENCH_DATABASE} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {BENCH_DATABASE}")


def timings(fn: Callable[[], object], repeat: int) -> list[float]:
    """Seconds per call, `repeat` calls."""
    result = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        result.append(time.perf_counter() - started)
    return result


def median(values: list[float]) -> float:
    return statistics.median(values)


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.3f} ms"


def report(title: str, rows: list[tuple[str, str, str, str]]) -> None:
    """rows: (measure, value, reference, ratio)."""
    print(f"\n{title}")
    widths = [
        max(len(r[i]) for r in [("measure", "value", "same-run reference", "ratio"), *rows])
        for i in range(4)
    ]
    header = ("measure", "value", "same-run reference", "ratio")
    for row in [header, tuple("-" * w for w in widths), *rows]:
        print("  " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)))


REPO = Path(__file__).resolve().parents[1]


def log_path(name: str) -> Path:
    """Where a benchmark server's log named `name` goes (var/, or AIRLINE_VAR_DIR)."""
    return Path(os.environ.get("AIRLINE_VAR_DIR", REPO / "var")) / name


def start_gunicorn(
    *,
    workers: int,
    log_name: str | None = None,
    env: dict[str, str] | None = None,
    tree: Path = REPO,
) -> tuple[subprocess.Popen, int]:
    """A real gunicorn serving the project (the checkout at `tree`) on a free local port:
    (process, port). With `log_name` its access log (one JSON line a request, with the
    server's own duration) goes to var/<log_name>; without, nowhere."""
    from tests.e2e.servers import free_port

    port = free_port()
    command = [
        sys.executable,
        "-m",
        "gunicorn",
        "airline.wsgi",
        "--bind",
        f"127.0.0.1:{port}",
        "--workers",
        str(workers),
    ]
    environment = {**os.environ, "LOG_LEVEL": "INFO", **(env or {})}
    if log_name is None:
        process = subprocess.Popen(
            command,
            cwd=tree,
            env=environment,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        return process, port
    log = log_path(log_name)
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w") as sink:  # the server keeps its own descriptor
        process = subprocess.Popen(
            command, cwd=tree, env=environment, stdout=sink, stderr=subprocess.STDOUT
        )
    return process, port


def schema_invalid(documents: list[bytes]) -> list[str]:
    """The first schema error of each NDC response in `documents` that does not validate
    against IATA's 21.3 schema of its root (settings.NDC_SCHEMA_DIR), through the same
    compiled schemas the service validates requests with. Run after the timed phases:
    validating costs the client CPU the server is measured on."""
    from lxml import etree

    from ndc.xml import schema

    errors = []
    for document in documents:
        root = etree.fromstring(document)
        checker = schema(etree.QName(root).localname)
        if not checker.validate(root):
            errors.append(f"{etree.QName(root).localname}: {checker.error_log[0].message}")
    return errors
