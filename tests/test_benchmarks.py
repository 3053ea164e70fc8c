"""Smoke runs of the benchmarks at tiny size (BENCH_TINY; `make bench` runs them at full
size): each as `python -m benchmarks.<name>` in a process of its own, on a scratch
database and Redis key prefix named after this test run's, its figures written to a
temporary directory. A benchmark that no longer runs fails here, and so does one that
leaves its scratch database or its Redis keys behind. The scratch databases are copies of
one seeded once for the module (BENCH_TEMPLATE), where a benchmark does not time the
seeding itself. Serial (tests/conftest.py SERIAL): they start servers and load both
cores."""

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
import pytest
import redis

from benchmarks.earlier import markdown_tables as tables

REPO = Path(__file__).resolve().parents[1]
# The hot requests benchmarks.profile must give a table of steps each.
PROFILED = [
    "create offers (busy round trip)",
    "NDC AirShopping (the same search)",
    "price (OfferPrice, round trip)",
    "create order, on hold",
    "create order, by card (test gateway)",
    "create order, on hold with a seat and a bag",
    "NDC OrderCreate (card)",
    "retrieve (order id)",
    "order seat map, 2 legs",
    "AcceptOffer (a seat on a hold)",
    "OrderList, page of 1000",
]
STEPS = [
    "authentication and throttling",
    "parsing and validation",
    "offer store read",
    "pricing (fares, taxes, ancillary prices)",
    "SQL build and round trips (ORM, psycopg)",
    "view render (order, offer, seat map dicts; NDC trees)",
    "JSON / XML serialisation",
    "cache reads and writes (Redis)",
    "outbox, events and metrics",
    "middleware, routing, request log",
    "service logic (the rest of the app's code)",
    "unattributed (no caller of a step)",
]


WORKER = os.environ.get("PYTEST_XDIST_WORKER", "main")
BASE = urlsplit(os.environ["DATABASE_URL"]).path.lstrip("/")  # this run's database's name
TEMPLATE = f"{BASE}_smoke_template_{WORKER}"


@pytest.fixture(scope="module")
def template() -> Iterator[str]:
    """A database migrated and seeded with the demo airline, dropped at the end."""
    environment = {
        **_service_environment(),
        "DATABASE_URL": urlsplit(os.environ["DATABASE_URL"])._replace(path=f"/{TEMPLATE}").geturl(),
    }
    _drop(TEMPLATE)
    with psycopg.connect(_postgres(), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {TEMPLATE}")
    try:
        for command in (["migrate", "--verbosity", "0"], ["seed_demo"]):
            done = subprocess.run(
                [sys.executable, "manage.py", *command],
                cwd=REPO,
                env=environment,
                capture_output=True,
                text=True,
                check=False,
            )
            assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        yield TEMPLATE
    finally:
        _drop(TEMPLATE)


def _service_environment() -> dict[str, str]:
    """This environment with the service's settings, not the suite's."""
    environment = {**os.environ, "AIRLINE_ENV": "test"}
    environment.pop("DJANGO_SETTINGS_MODULE", None)
    environment.pop("DATABASE_URL", None)
    return environment


def _postgres() -> str:
    return urlsplit(os.environ["DATABASE_URL"])._replace(path="/postgres").geturl()


def _drop(database: str) -> None:
    with psycopg.connect(_postgres(), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")


def run_benchmark(
    name: str, tmp_path: Path, *arguments: str, template: str = "", **settings: str
) -> str:
    """`python -m benchmarks.<name>` at tiny size with `settings` in its environment, on a
    scratch database (a copy of `template`, when given) and key prefix of this test's; its
    figures file's text. Fails when it exits with an error or leaves the database or a
    Redis key behind."""
    database = f"{BASE}_smoke_{name}_{WORKER}"
    prefix = f"smoke-{name}-{WORKER}"
    environment = {
        **_service_environment(),
        "BENCH_TINY": "1",
        "BENCH_DATABASE": database,
        "BENCH_TEMPLATE": template,
        "CACHE_KEY_PREFIX": prefix,
        "BENCH_FIGURES_DIR": str(tmp_path),
        "AIRLINE_VAR_DIR": str(tmp_path / "var"),
        **settings,
    }
    done = subprocess.run(
        [sys.executable, "-m", f"benchmarks.{name}", *arguments],
        cwd=REPO,
        env=environment,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    if settings.get("BENCH_KEEP") != "1":
        assert not database_exists(database), f"benchmarks.{name} left {database} behind"
        left = redis.Redis.from_url(os.environ["REDIS_URL"]).keys(f"{prefix}:*")
        assert not left, f"benchmarks.{name} left Redis keys behind: {left[:5]}"
    figures = tmp_path / f"{name}.md"
    return figures.read_text() if figures.exists() else done.stdout


def database_exists(name: str) -> bool:
    with psycopg.connect(_postgres(), autocommit=True) as conn:
        return conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()


def ms(cell: str) -> float:
    return float(cell.removesuffix(" ms"))


@pytest.mark.parametrize(
    "name",
    ["shopping", "orders", "payments", "servicing", "nodes", "schedule", "admin", "shortcuts"],
)
def test_it_runs_at_tiny_size_and_cleans_up(name, tmp_path, template):
    text = run_benchmark(name, tmp_path, template=template)
    assert "|---" in text, text[-2000:]  # it wrote its tables
    if name == "orders":
        # The hold replay ran from Python too (benchmarks/replay.py, Replayer.run_python).
        assert re.search(
            r"\| replayed from Python \(psycopg, 1 client, 4 holds\) \| - \| [\d.]+ \| [\d.]+ \|",
            text,
        ), text[-3000:]
        # And served bare over HTTP (benchmarks/floor.py): a rate, a ratio and its CPU.
        assert re.search(r"\| the same SQL served bare: .* \| \d+/s \| [\d.]+ \(phase", text)
        assert re.search(r"\| served bare \(benchmarks/floor.py\) \|( [\d.]+ \|){5}", text)
        assert re.search(r"\| left for the service's own work at the target \| -?[\d.]+ \|", text)
        # And behind the service's framework with nothing of a booking
        # (benchmarks/floor_urls.py): its rate, its CPU and what it leaves a booking.
        assert re.search(r"\| the same SQL behind the framework: .* \| \d+/s \| [\d.]+ \(", text)
        assert re.search(
            r"\| behind the framework \(benchmarks/floor_urls.py\) \|( [\d.]+ \|){5}", text
        )
        assert re.search(r"\| left for the booking's own logic at the target \| -?[\d.]+ \|", text)
        # The p95 ratios, pooled and repeat by repeat (one repeat at this size).
        assert re.search(
            r"\| paid by card / plain hold \| [\d.]+ \| [\d.]+ \| <= 1\.30 \|", text
        ), text[-3000:]


@pytest.mark.parametrize("name", ["network", "webhooks"])  # they seed their own database
def test_it_seeds_and_runs_at_tiny_size_and_cleans_up(name, tmp_path):
    database = f"{BASE}_smoke_{name}_{WORKER}"
    text = run_benchmark(
        name,
        tmp_path,
        BENCH_WEBHOOKS_DATABASE=database,
        BENCH_WEBHOOKS_REDIS_URL=os.environ["REDIS_URL"],
    )
    assert "|---" in text, text[-2000:]


@pytest.mark.parametrize(
    ("mode", "shown"),
    [
        (
            ("--rounds", "1", "--seconds", "0.5", "--clients", "1"),
            # Both sides, though they name one revision.
            r"GET /health: server time(.|\n)*\n  A +\. +\d+ (.|\n)*\n  B +\. +\d+ ",
        ),
        (
            ("--interleave", "--blocks", "2", "--per-block", "3"),
            # Each side's CPU per request and round trip, and B against A block by block.
            r"\n  B +\. +\d+\.\d{3} ms +\d+\.\d{3} ms +"
            r"\d\.\d{3} \(quartiles \d\.\d{3} - \d\.\d{3}\)",
        ),
    ],
    ids=["in-turns", "interleaved"],
)
def test_ab_compares_two_revisions(tmp_path, template, mode, shown):
    """benchmarks.ab on the database a kept run leaves (a copy of the template here), in
    turns under load and interleaved."""
    database = f"{BASE}_smoke_ab_{WORKER}"
    _drop(database)
    with psycopg.connect(_postgres(), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {database} TEMPLATE {template}")
    try:
        out = run_benchmark("ab", tmp_path, ".", ".", "/health", *mode, BENCH_KEEP="1")
    finally:
        _drop(database)
        client = redis.Redis.from_url(os.environ["REDIS_URL"])
        for key in client.scan_iter(match=f"smoke-ab-{WORKER}:*"):
            client.delete(key)
    assert re.search(shown, out), out[-2000:]


def test_profile_gives_every_hot_request_its_steps_before_and_after(tmp_path, template):
    # The revision before is this one, checked out beside it: the smoke run shows that the
    # before run is made, cleaned up and read back, not what it measures.
    text = run_benchmark(
        "profile",
        tmp_path,
        template=template,
        PROFILE_REQUESTS="2",
        PROFILE_WARMUP="1",
        PROFILE_LIST_ORDERS="1000",
        PROFILE_BEFORE="HEAD",
        PROFILE_ROUNDS="2",  # each side run twice, in turns, its median round kept
    )
    assert not database_exists(f"{BASE}_smoke_profile_{WORKER}_before")
    found = tables(text)
    for request in PROFILED:
        [title] = [t for t in found if t.startswith(f"{request}: CPU by step")]
        header, *rows = found[title]
        assert header == ["step", "CPU per request", "share", "before (HEAD)", "share before"]
        assert [row[0] for row in rows] == [*STEPS, "total"], title
        steps, total = rows[:-1], rows[-1]
        for column in (1, 3):
            assert ms(total[column]) > 0, title
            # The steps add up to the request's CPU (each rounded to 0.01 ms) and to 100%.
            assert sum(ms(row[column]) for row in steps) == pytest.approx(
                ms(total[column]), abs=0.1
            )
        for column in (2, 4):
            shares = [float(row[column].removesuffix("%")) for row in steps]
            assert sum(shares) == pytest.approx(100.0, abs=0.7), title
            # Nearly all of it is attributed to a step of the service.
            assert shares[STEPS.index("unattributed (no caller of a step)")] < 10.0, title
            assert shares[STEPS.index("SQL build and round trips (ORM, psycopg)")] > 0, title
    [summary] = [t for t in found if t.startswith("Each hot request in process")]
    assert [row[0] for row in found[summary][1:]] == PROFILED
    [both] = [t for t in found if t.startswith("Before and after")]
    assert [row[0] for row in found[both][1:]] == PROFILED
    assert "in each of 2 rounds" in text
    assert "run 2 times in turns with this one" in text
    # Python calls per request, on both sides (the revision before counts them too).
    assert found[both][0][-2:] == ["Python calls: before", "now"]
    for row in found[both][1:]:
        assert all(int(cell.replace(",", "")) > 100 for cell in row[-2:]), row
    for request, before, now, ratio, *_ in found[both][1:]:
        assert float(ratio.removesuffix("x")) == pytest.approx(ms(now) / ms(before), abs=0.011), (
            request
        )
    # PostgreSQL's CPU by statement of the writes: each column adds up to its total, and
    # a card booking's confirmation is a statement a hold has not.
    [by_statement] = [t for t in found if t.startswith("PostgreSQL's CPU per request by")]
    header, *rows = found[by_statement]
    assert header[1:] == [
        "create order, on hold",
        "create order, by card (test gateway)",
        "create order, on hold with a seat and a bag",
        "AcceptOffer (a seat on a hold)",
    ]
    labels = {row[0]: row[1:] for row in rows}
    assert labels["INSERT orders_orderitem"][0] != "-"
    [confirm] = [row for label, row in labels.items() if "UPDATE orders_paymentintent" in label]
    assert confirm[0] == "-"
    assert confirm[1] != "-"
    assert rows[-2][0] == "BEGIN, COMMIT and between statements"
    assert rows[-1][0] == "total"
    for column in range(4):
        cells = [ms(row[1 + column]) for row in rows[:-1] if row[1 + column] != "-"]
        assert sum(cells) == pytest.approx(ms(rows[-1][1 + column]), abs=0.05), header[1 + column]
        assert ms(rows[-1][1 + column]) > 0


def test_workers_measures_each_configuration(tmp_path, template):
    text = run_benchmark(
        "workers",
        tmp_path,
        template=template,
        WORKERS_CLIENTS="2",
        WORKERS_SECONDS="1",
        WORKERS_ROUNDS="1",
        WORKERS_CONFIGURATIONS="0,3",
    )
    funnels, served = tables(text).values()
    header, *configurations = funnels
    assert [row[0].split(",")[0] for row in configurations] == ["sync", "gthread"]
    for row in configurations:
        assert float(row[1].removesuffix("/s")) > 0, row
        assert row[header.index("failed")] == "0", row
    # Each step as the clients saw it and as the server timed it: the server's time is
    # part of the clients', so never the larger (the request log names every step).
    header, *configurations = served
    assert [row[0].split(",")[0] for row in configurations] == ["sync", "gthread"]
    for row in configurations:
        for cell in row[1:-1]:
            seen, server = (float(x) for x in cell.removesuffix(" ms").split(" / "))
            assert 0 < server <= seen, row
        assert float(row[-1].removesuffix(" requests")) > 0, row
    assert re.search(r"load average at the end \d", text)


def test_growth_measures_every_read_at_every_size(tmp_path, template):
    text = run_benchmark(
        "growth", tmp_path, template=template, GROWTH_SIZES="200,400", GROWTH_REPEATS="1"
    )
    [rows] = tables(text).values()
    header, *measures = rows
    assert header[1:4] == ["200: median", "200: p95", "200: CPU"]
    assert header[4:7] == ["400: median", "400: p95", "400: CPU"]
    assert [row[0].split(",")[0].split(" ")[0] for row in measures] == [
        "OrderList",
        "OrderList",
        "OrderList",
        "retrieve",
        "retrieve",
        "back",
        "back",
        "audit:",
        "audit:",
        "audit:",
    ]
    assert all(ms(cell) > 0 for row in measures for cell in row[1:7])
