"""The demo airline at full size (`manage.py seed_demo`: 330 days, 58,410 flight-date legs,
~433k inventory rows) for the tests that need airline size, for ~5 s instead of ~45 s.

The first `demo_seeded()` of a test run runs seed_demo itself and keeps what it wrote as
PostgreSQL COPY files under var/test-seed/<key>/; every later one, in this process or
another (the xdist workers and the serial pass of `make test` each have their own
database), copies those rows in. The key is the seeding day (seed_demo's "today") and a
hash of the project's code, migrations included, so a change to the seed, the schedule
or the schema is never served an old copy. What seed_demo itself does is tested on the
real command (tests/network/test_seed_demo.py).

Which tables to keep is read from PostgreSQL, not listed by hand: the tables seed_demo
inserted into, updated or deleted from (pg_stat_xact_user_tables, around the seeding)."""

import fcntl
import hashlib
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC
from io import StringIO
from pathlib import Path

from django.apps import apps
from django.core.management import call_command
from django.core.management.color import no_style
from django.db import connection, transaction

from airline.api import clock
from airline.network.models import FlightLeg

REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / "var" / "test-seed"
CODE = ("airline", "sellers", "offers", "orders", "ndc", "webhooks")
LIST = "tables.txt"


def demo_seeded() -> None:
    """The database gets exactly what seed_demo writes into an empty one, committed with
    the caller's transaction (or at once in autocommit, for `transaction=True` tests
    whose servers must see it), with fresh planner statistics."""
    if connection.vendor != "postgresql":
        raise RuntimeError("demo_seeded copies PostgreSQL COPY files: call seed_demo instead")
    if FlightLeg.objects.exists():
        raise RuntimeError("demo_seeded needs a database without a schedule")
    kept = CACHE / _key()
    with _locked(kept):
        if (kept / LIST).exists():
            _copy_in(kept)
        else:
            _seed_and_keep(kept)


def _key() -> str:
    digest = hashlib.sha256()
    for package in CODE:
        for path in sorted((REPO / package).rglob("*.py")):
            digest.update(str(path.relative_to(REPO)).encode())
            digest.update(path.read_bytes())
    return f"{clock.now().astimezone(UTC):%Y%m%d}-{digest.hexdigest()[:16]}"


@contextmanager
def _locked(kept: Path) -> Iterator[None]:
    """One process at a time makes or reads a copy (two xdist workers may ask together)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    with (CACHE / f"{kept.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _seed_and_keep(kept: Path) -> None:
    making = kept.with_name(kept.name + ".making")
    shutil.rmtree(making, ignore_errors=True)
    making.mkdir()
    with transaction.atomic(), connection.cursor() as cursor:
        before = _rows_written(cursor)
        call_command("seed_demo", stdout=StringIO())
        tables = sorted(t for t, n in _rows_written(cursor).items() if n > before.get(t, 0))
        for table in tables:
            with (
                (making / table).open("wb") as out,
                cursor.copy(
                    f"COPY {connection.ops.quote_name(table)} TO STDOUT (FORMAT binary)"
                ) as copy,
            ):
                for chunk in copy:
                    out.write(chunk)
    (making / LIST).write_text("\n".join(tables) + "\n")
    for old in CACHE.iterdir():  # copies of other days or code
        if old.is_dir() and old.name not in (kept.name, making.name):
            shutil.rmtree(old, ignore_errors=True)
    making.rename(kept)


def _rows_written(cursor) -> dict[str, int]:
    """Rows each table had inserted, updated or deleted, as this backend counts them: the
    current transaction's, and (PostgreSQL 15 flushes its counters at most once a
    second) maybe a recent one's too, hence the difference around the seeding."""
    cursor.execute(
        "SELECT relname, n_tup_ins + n_tup_upd + n_tup_del FROM pg_stat_xact_user_tables"
    )
    return dict(cursor.fetchall())


def _copy_in(kept: Path) -> None:
    tables = (kept / LIST).read_text().split()
    with transaction.atomic(), connection.cursor() as cursor:
        for table in tables:  # the foreign keys are deferred to the commit
            quoted = connection.ops.quote_name(table)
            # e.g. a row a migration made; the table names are PostgreSQL's own, quoted
            cursor.execute(f"DELETE FROM {quoted}")  # noqa: S608
            with (
                (kept / table).open("rb") as rows,
                cursor.copy(f"COPY {quoted} FROM STDIN (FORMAT binary)") as copy,
            ):
                while chunk := rows.read(1 << 20):
                    copy.write(chunk)
        models = [m for m in apps.get_models() if m._meta.db_table in tables]
        for statement in connection.ops.sequence_reset_sql(no_style(), models):
            cursor.execute(statement)
        cursor.execute("ANALYZE " + ", ".join(connection.ops.quote_name(t) for t in tables))
