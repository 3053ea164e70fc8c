"""Shared pieces of the benchmarks: a fresh seeded database, timing statistics, a report
table, and the figures file each benchmark writes for the manual
(docs/contributors/benchmarks.md)."""

import os
import platform
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from io import StringIO
from pathlib import Path
from typing import TypeVar

import psycopg
import redis

# BENCH_DATABASE names another scratch database, for a bench beside someone else's.
BENCH_DATABASE = os.environ.get("BENCH_DATABASE", "airline_bench")


def prepare_environment() -> None:
    """Point Django at a scratch PostgreSQL database and Redis db 2 (never the dev ones)."""
    os.environ.setdefault("AIRLINE_ENV", "test")
    os.environ.setdefault("DATABASE_URL", f"postgres://postgres@127.0.0.1:5432/{BENCH_DATABASE}")
    os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/2")
    os.environ.setdefault("CACHE_KEY_PREFIX", "bench")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "airline.settings")


# BENCH_TINY=1: every benchmark at a tiny size, to show that it runs (the suite's smoke
# runs, tests/test_benchmarks.py); its figures mean nothing.
TINY = os.environ.get("BENCH_TINY") == "1"
T = TypeVar("T")


def tiny(full: T, small: T) -> T:
    """`full`, or `small` under BENCH_TINY."""
    return small if TINY else full


# BENCH_TEMPLATE names a database migrated and seeded with the demo airline that each
# scratch database is made a copy of: migrate and seed_demo then find nothing to do. The
# suite's smoke runs seed one once for all of them (tests/test_benchmarks.py).
BENCH_TEMPLATE = os.environ.get("BENCH_TEMPLATE", "")


def recreate_database() -> None:
    template = f" TEMPLATE {BENCH_TEMPLATE}" if BENCH_TEMPLATE else ""
    with psycopg.connect("postgres://postgres@127.0.0.1:5432/postgres", autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {BENCH_DATABASE} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {BENCH_DATABASE}{template}")


def drop_scratch(*databases: str) -> None:
    """What a benchmark leaves behind, removed when it ends: its scratch database
    (BENCH_DATABASE, and any others named) and its Redis keys (those under its
    CACHE_KEY_PREFIX in REDIS_URL's db: every key the service writes starts with it).
    BENCH_KEEP=1 keeps both, for benchmarks.ab or a second run (ADMIN_REUSE)."""
    if os.environ.get("BENCH_KEEP") == "1":
        return
    if "django.db" in sys.modules:
        from django.db import connections

        connections.close_all()
    with psycopg.connect("postgres://postgres@127.0.0.1:5432/postgres", autocommit=True) as conn:
        for database in databases or (BENCH_DATABASE,):
            conn.execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
    url, prefix = os.environ.get("REDIS_URL"), os.environ.get("CACHE_KEY_PREFIX")
    if url and prefix:
        client = redis.Redis.from_url(url)
        for key in client.scan_iter(match=f"{prefix}:*", count=1000):
            client.delete(key)


@contextmanager
def scratch(*databases: str) -> Iterator[None]:
    """Around a benchmark's main(): drop_scratch when it ends, however it ends (SIGTERM,
    a kill's default, included: it is made an exit that unwinds)."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    try:
        yield
    finally:
        drop_scratch(*databases)


AGENCY = "DEMOAGT"  # the demo partner's agency the benchmarks book for


def bench_api_key(name: str) -> str:
    """A fresh key of the demo partner for AGENCY, with no practical volume limit."""
    from django.core.management import call_command

    out = StringIO()
    call_command(
        "create_api_key",
        "--partner",
        "DEMO",
        "--agency",
        AGENCY,
        "--rate",
        "100000000",
        "--name",
        name,
        stdout=out,
    )
    return out.getvalue().strip().splitlines()[-1]


def nonstop_markets() -> list[tuple[str, str]]:
    """Every (origin, destination) a demo flight leg flies: markets with a nonstop."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT DISTINCT origin_id, destination_id FROM network_flightleg "
            "ORDER BY origin_id, destination_id"
        )
        return [tuple(row) for row in cursor.fetchall()]


def bench_database_seeded(key_name: str) -> tuple[str, list[tuple[str, str]]]:
    """The scratch database made afresh, migrated and seeded with the demo airline, this
    Redis db cleared (no offers, tokens or node fingerprint of a past run): (a fresh bench
    API key named `key_name`, the markets with a nonstop). Connections are closed at the
    end, since the benchmarks fork their client processes from this one."""
    prepare_environment()
    recreate_database()
    import django

    django.setup()
    from django.core.cache import cache
    from django.core.management import call_command
    from django.db import connections

    call_command("migrate", verbosity=0)
    call_command("seed_demo", stdout=StringIO())
    cache.delete_pattern("*")  # this benchmark's keys only (CACHE_KEY_PREFIX)
    raw_key = bench_api_key(key_name)
    markets = nonstop_markets()
    connections.close_all()
    return raw_key, markets


def quiet_request_log() -> None:
    """The service's request log line, written as in production (its JSON formatted), but
    to nowhere rather than into the benchmark's output."""
    import logging

    for handler in logging.getLogger().handlers:
        if isinstance(handler, logging.StreamHandler):
            handler.setStream(open(os.devnull, "w"))  # noqa: SIM115 (for the process's life)


def timings(fn: Callable[[], object], repeat: int) -> list[float]:
    """Seconds per call, `repeat` calls."""
    result = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        result.append(time.perf_counter() - started)
    return result


def process_cpu_ns(pid: int) -> int:
    """Nanoseconds process `pid` of this machine has run on a CPU (the kernel's schedstat:
    exact, where /proc's stat counts 10 ms ticks)."""
    with open(f"/proc/{pid}/schedstat") as stat:
        return int(stat.read().split()[0])


def executed_at_once(execute, sql, params, many, context):
    """For an execute wrapper that reads what a statement did (its rows, its backend's
    CPU): the statement run and answered before this returns, also when the service sends
    it in a pipeline (airline.sql.statements_pipelined), where a pipeline block of its
    own syncs as it ends."""
    raw = context["connection"].connection
    if raw.pgconn.pipeline_status:
        with raw.pipeline():
            return execute(sql, params, many, context)
    return execute(sql, params, many, context)


def median(values: list[float]) -> float:
    return statistics.median(values)


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.3f} ms"


# Every table printed in this run, in order: what write_figures puts in the manual.
TABLES: list[tuple[str, tuple[str, ...], list[tuple[str, ...]]]] = []


def table(title: str, header: Sequence, rows: Sequence[Sequence]) -> None:
    """Print a table (cells as str()) and keep it for write_figures."""
    header = tuple(str(cell) for cell in header)
    rows = [tuple(str(cell) for cell in row) for row in rows]
    TABLES.append((title, header, rows))
    print(f"\n{title}")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, tuple("-" * w for w in widths), *rows]:
        print("  " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)))


def report(title: str, rows: list[tuple[str, str, str, str]]) -> None:
    """rows: (measure, value, reference, ratio)."""
    table(title, ("measure", "value", "same-run reference", "ratio"), rows)


REPO = Path(__file__).resolve().parents[1]
# BENCH_FIGURES_DIR puts them elsewhere: the suite's smoke runs (tests/test_benchmarks.py).
FIGURES = Path(os.environ.get("BENCH_FIGURES_DIR", REPO / "docs" / "benchmarks" / "figures"))


def write_figures(module: str, notes: Sequence[str] = ()) -> Path:
    """Write docs/benchmarks/figures/<module>.md, the fragment
    docs/contributors/benchmarks.md includes:
    every table this run printed (TABLES) as markdown, then `notes`, under a line saying
    on what machine, when and from which commit they were measured. The file holds the
    current figures only; earlier ones are in git's history of it."""
    commit = _MEASURED_COMMIT
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor() or "unknown CPU",
    )
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    lines = [
        f"*Measured by `python -m benchmarks.{module}` on {datetime.now(tz=UTC):%Y-%m-%d %H:%M} "
        f"UTC, commit `{commit}`, {os.cpu_count()} x {cpu}, load average at the end {load}.*",
    ]
    for title, header, rows in TABLES:
        lines += ["", f"**{_cell(title)}**", ""]
        lines.append("| " + " | ".join(_cell(cell) for cell in header) + " |")
        lines.append("|" + "---|" * len(header))
        lines += ["| " + " | ".join(_cell(cell) for cell in row) + " |" for row in rows]
    if notes:
        lines.append("")
        lines += [f"- {_cell(note)}" for note in notes]
    FIGURES.mkdir(parents=True, exist_ok=True)
    path = FIGURES / f"{module}.md"
    path.write_text("\n".join(lines) + "\n")
    print(f"\n(figures written to {path})")
    return path


def _cell(text: str) -> str:
    """Text safe in a markdown table cell: pipes escaped, one line."""
    return " ".join(str(text).replace("|", "\\|").split())


def _git(*args: str) -> str:
    done = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=False)
    return done.stdout.strip() if done.returncode == 0 else ""


def _commit() -> str:
    """The checkout's commit, and whether its code differs from it (the manual aside)."""
    commit = _git("rev-parse", "--short", "HEAD") or "unknown"
    if _git("status", "--porcelain", "--", ".", ":(exclude)docs"):
        commit += " with uncommitted changes"
    return commit


# Read when the benchmark starts: the code measured is the code it loaded.
_MEASURED_COMMIT = _commit()


def log_path(name: str) -> Path:
    """Where a benchmark server's log named `name` goes (var/, or AIRLINE_VAR_DIR)."""
    return Path(os.environ.get("AIRLINE_VAR_DIR", REPO / "var")) / name


def start_gunicorn(
    *,
    workers: int,
    log_name: str | None = None,
    env: dict[str, str] | None = None,
    tree: Path = REPO,
    options: Sequence[str] = (),
    app: str = "airline.wsgi",
) -> tuple[subprocess.Popen, int]:
    """A real gunicorn serving the project (the checkout at `tree`, with its
    gunicorn.conf.py and then `options` on the command line) on a free local port:
    (process, port). With `log_name` its access log (one JSON line a request, with the
    server's own duration) goes to var/<log_name>; without, nowhere. `app` serves
    another WSGI application (with `options` naming its own config)."""
    from tests.e2e.servers import free_port

    port = free_port()
    command = [
        sys.executable,
        "-m",
        "gunicorn",
        app,
        "--bind",
        f"127.0.0.1:{port}",
        "--workers",
        str(workers),
        *options,
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
