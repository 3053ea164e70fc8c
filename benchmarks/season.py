"""A season's retime under traffic at several sizes (tests/e2e/season.py), for
`python -m benchmarks.schedule`: the demo airline in the scratch database, MX101 carrying
500, 2,000 and 5,000 bookings across its dates (SEASON_SIZES to choose others), two nodes
of two workers, the worker, 8 clients searching, pricing and booking MX101 on hold while
`manage.py load_schedule` retimes it on every date. For each size: when the schedule
committed, how fast the worker told the bookings, the longest a booking waited beyond
the median booking, and each node's stale window. The database is made afresh for each
size, so each starts from the same schedule."""

import os
import secrets
import tempfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from benchmarks.common import BENCH_DATABASE, bench_database_seeded, tiny

SIZES = tuple(
    int(n) for n in os.environ.get("SEASON_SIZES", tiny("500,2000,5000", "20")).split(",")
)


@dataclass(frozen=True)
class SeasonFigures:
    bookings: int
    commit_seconds: float
    load_seconds: float
    told_seconds: float  # from the commit until the last booking was told
    told_per_second: float
    longest_booking_wait: float
    book_median: float
    book_calls: int
    stale_worst: float
    problems: tuple[str, ...]


def season_figures(sizes: tuple[int, ...] = SIZES) -> list[SeasonFigures]:
    """One season retime per size, each on a freshly seeded scratch database."""
    found = []
    for size in sizes:
        raw_key, _ = bench_database_seeded(f"bench-season-{size}")
        found.append(_one(size, raw_key))
    return found


def _one(size: int, raw_key: str) -> SeasonFigures:
    from django.db import connections

    from airline.network.models import ScheduleLoad
    from sellers.models import Seller
    from tests.e2e.demo_nodes import Demo, two_nodes
    from tests.e2e.season import call_problems, season_retime, told_problems, webhook_sink
    from tests.e2e.servers import base_env

    env = base_env(
        AIRLINE_ENV="test",
        SECRET_KEY=os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(50)),
        DATABASE_URL=f"postgres://postgres@127.0.0.1:5432/{BENCH_DATABASE}",
        REDIS_URL=os.environ["REDIS_URL"],
        CACHE_KEY_PREFIX=os.environ.get("CACHE_KEY_PREFIX", "bench"),
        NETWORK_REBUILD_IN_BACKGROUND="1",
        NETWORK_WARM_ON_HEALTH_CHECK="1",
        LOG_LEVEL="INFO",
        WEBHOOK_ALLOW_LOOPBACK="1",
    )
    first_day = datetime.strptime(  # noqa: DTZ007 (a date in a file name)
        ScheduleLoad.objects.get().file_name, "demo-%Y%m%d.ssim"
    ).date()
    sellers = {s.code: str(s.pk) for s in Seller.objects.filter(partner__code="DEMO")}
    demo = Demo(env, first_day, raw_key, sellers)
    connections.close_all()
    with (
        tempfile.TemporaryDirectory(prefix="season-") as logs,
        webhook_sink() as url,
        two_nodes(env, Path(logs)) as nodes,
    ):
        run = season_retime(
            demo=demo, nodes=nodes, env=env, logs=Path(logs), bookings=size, webhook_url=url
        )
        problems = tuple(told_problems(run) + call_problems(run))
    connections.close_all()
    book = run.book_seconds()
    return SeasonFigures(
        bookings=size,
        commit_seconds=run.commit_seconds,
        load_seconds=run.load_ended - run.load_started,
        told_seconds=run.told - run.committed,
        told_per_second=run.told_per_second,
        longest_booking_wait=run.longest_booking_wait,
        book_median=book[len(book) // 2] if book else 0.0,
        book_calls=len(book),
        stale_worst=max(run.stale.values(), default=float("inf")),
        problems=problems,
    )


def season_rows(found: list[SeasonFigures]) -> list[tuple[str, str, str, str]]:
    """Report rows (benchmarks.common.report): each figure against its target."""
    rows = []
    for f in found:
        n = f"{f.bookings:,} bookings"
        rows += [
            (
                f"season retime, {n}: schedule committed after",
                f"{f.commit_seconds:.2f} s",
                "target 10 s",
                f"{f.commit_seconds / 10:.2f}x",
            ),
            (
                f"season retime, {n}: bookings told per second (all in {f.told_seconds:.1f} s)",
                f"{f.told_per_second:.0f}/s",
                f"load_schedule returned after {f.load_seconds:.2f} s",
                "",
            ),
            (
                f"season retime, {n}: longest booking wait (slowest of {f.book_calls} "
                "book calls less their median)",
                f"{f.longest_booking_wait * 1000:.0f} ms",
                "target 1 s",
                f"{f.longest_booking_wait:.2f}x",
            ),
            (
                f"season retime, {n}: stale window, slowest node",
                f"{f.stale_worst:.2f} s",
                "target 1 s",
                f"{f.stale_worst:.2f}x",
            ),
        ]
    return rows
