"""A fixture's database writes, made once and copied in after (issue 29 item 6).

Loading the shopping tests' network through the real SSIM loader took 0.3-0.8 s a test
on a busy 2-core machine (copying its rows in: 0.05-0.09 s), and over 800 tests want it.
`replayed(key, load)` runs `load()` the first time for a key and records what it wrote:
the rows it added or changed, table by table, in PostgreSQL's COPY text format. Every
later call copies those same rows in (a few COPY statements), inside the test's own
transaction, so each test still starts from exactly what the loader writes and rolls it
back as before: nothing is shared between tests but the recording.

The copy is used only in a test's transaction (a `transaction=True` test runs the
loader: its writes commit, for servers in other processes to see, and its on-commit work
runs), on PostgreSQL, and when every table the loader wrote holds exactly what it held
when recorded (a fixture that ran before may have filed a schedule or a station: that
starting state gets a recording of its own, up to RECORDINGS_PER_KEY, then the loader
runs). Rows keep their recorded ids and timestamps (a schedule load's time is the
recording's, minutes earlier); sequences are moved past the ids if they are behind (a
database flushed and restarted), so the test's own inserts never collide with them."""

from collections import Counter
from collections.abc import Callable, Hashable
from dataclasses import dataclass

from django.db import connection


@dataclass(frozen=True)
class Recording:
    before: dict[str, Counter]  # table -> its rows (COPY text lines) before the load
    added: dict[str, bytes]  # table -> rows to copy in (COPY text, one row a line)
    removed: dict[str, list[str]]  # table -> primary keys of rows the load changed
    keys: dict[str, str]  # table -> its primary key column
    sequences: dict[str, str]  # table -> the sequence of its primary key


_recordings: dict[Hashable, list[Recording]] = {}
_cannot_replay: set[Hashable] = set()
RECORDINGS_PER_KEY = 3  # starting states recorded: tests that run a fixture of their own
# before this one (a station, a schedule) start from another state than the rest


def replayed(key: Hashable, load: Callable[[], object]) -> None:
    """Make the database writes of `load()`: copied in from a recording made under `key`
    from the same starting state, else by `load()` itself (recording them)."""
    if connection.vendor != "postgresql" or not connection.in_atomic_block:
        load()
        return
    recordings = _recordings.setdefault(key, [])
    for recording in recordings:
        if _matches(recording):
            _copy_in(recording)
            return
    if key in _cannot_replay or len(recordings) >= RECORDINGS_PER_KEY:
        load()
        return
    before = {table: _rows(table) for table in _tables()}
    load()
    recording = _recorded(before)
    if recording is None:
        _cannot_replay.add(key)
    else:
        recordings.append(recording)


def _tables() -> list[str]:
    return sorted(connection.introspection.django_table_names(only_existing=True))


def _rows(table: str) -> Counter:
    statement = f"COPY {connection.ops.quote_name(table)} TO STDOUT"
    with connection.cursor() as cursor, cursor.cursor.copy(statement) as copy:
        data = b"".join(bytes(block) for block in copy)
    return Counter(data.splitlines())


def _recorded(before: dict[str, Counter]) -> Recording | None:
    """What the load wrote, or None when the copy could not reproduce it (a row deleted,
    a primary key COPY escapes): then every call under its key runs the loader."""
    state = Recording(before={}, added={}, removed={}, keys={}, sequences={})
    for table, rows in before.items():
        after = _rows(table)
        if after == rows:
            continue
        added, gone = after - rows, rows - after
        column, position = _primary_key(table)
        if column is None:
            return None
        added_keys = {line.split(b"\t")[position] for line in added.elements()}
        gone_keys = [line.split(b"\t")[position] for line in gone.elements()]
        if any(b"\\" in pk for pk in gone_keys) or not set(gone_keys) <= added_keys:
            return None  # a deleted row, or a key that would need unescaping
        state.before[table] = rows
        state.added[table] = b"".join(line + b"\n" for line in added.elements())
        state.removed[table] = [pk.decode() for pk in gone_keys]
        state.keys[table] = column
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_get_serial_sequence(%s, %s)", [table, column])
            sequence = cursor.fetchone()[0]
        if sequence:
            state.sequences[table] = sequence
    return state


def _primary_key(table: str) -> tuple[str | None, int]:
    with connection.cursor() as cursor:
        columns = [c.name for c in connection.introspection.get_table_description(cursor, table)]
        keys = connection.introspection.get_primary_key_columns(cursor, table) or []
    if len(keys) != 1:
        return None, -1
    return keys[0], columns.index(keys[0])


def _matches(recording: Recording) -> bool:
    return all(_rows(table) == rows for table, rows in recording.before.items())


def _copy_in(recording: Recording) -> None:
    qn = connection.ops.quote_name
    with connection.cursor() as cursor:
        for table, keys in recording.removed.items():
            if keys:
                cursor.execute(
                    f"DELETE FROM {qn(table)} WHERE {qn(recording.keys[table])}::text = ANY(%s)",  # noqa: S608
                    [keys],
                )
        for table, rows in recording.added.items():
            with cursor.cursor.copy(f"COPY {qn(table)} FROM STDIN") as copy:
                copy.write(rows)
        if recording.sequences:
            # Past the copied ids, where a flush and restart left a sequence behind them.
            cursor.execute(
                " UNION ALL ".join(
                    f"SELECT setval('{sequence}', m) FROM (SELECT max({qn(key)}) m"  # noqa: S608
                    f" FROM {qn(table)}) x WHERE m > (SELECT last_value FROM {sequence})"
                    for table, sequence in recording.sequences.items()
                    if (key := recording.keys[table])
                )
            )
