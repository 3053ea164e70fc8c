"""airline/sql.py: a booking's hot statements prepared once per connection on PostgreSQL,
never behind a transaction-mode pooler; seen by execute wrappers and with Django's errors
either way."""

import contextlib
from contextlib import ExitStack

import pytest
from django.db import IntegrityError, connection, transaction
from django.test import override_settings
from django.test.utils import CaptureQueriesContext

from airline.sql import statement_cursor, statements_pipelined

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="prepared statements"),
]


# Each test its own statement text: the connection, and what it has prepared, outlive a
# test.
def probe(value: int, name: str) -> int:
    with statement_cursor() as cursor:
        cursor.execute(f"SELECT %s::int + 1 AS {name}", [value])
        return cursor.fetchone()[0]


def prepared(name: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE %s",
            [f"%AS {name}"],
        )
        return cursor.fetchone()[0]


def test_its_statements_are_prepared_once_per_connection():
    assert [probe(41, "once"), probe(1, "once"), probe(7, "once")] == [42, 2, 8]

    assert prepared("once") == 1


@override_settings(DB_PREPARED_STATEMENTS=False)
def test_none_are_prepared_behind_a_transaction_pooler():
    assert probe(41, "pooled") == 42

    assert prepared("pooled") == 0


def test_execute_wrappers_see_its_statements():
    seen = []

    def record(execute, sql, params, many, context):
        seen.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        probe(1, "seen")

    assert seen == [("SELECT %s::int + 1 AS seen", [1])]


@pytest.fixture
def codes():
    """A table with a unique column, for this test's transaction alone."""
    with connection.cursor() as cursor:
        cursor.execute("CREATE TEMPORARY TABLE probe_unique (code text UNIQUE)")


def insert_code(code: str) -> None:
    with statement_cursor() as cursor:
        cursor.execute("INSERT INTO probe_unique (code) VALUES (%s)", [code])


def test_database_errors_are_djangos(codes):
    insert_code("X")

    with pytest.raises(IntegrityError), transaction.atomic():
        insert_code("X")


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_after_a_rollback_its_statements_are_prepared_again():
    """psycopg drops every prepared statement of a connection at a ROLLBACK."""
    probe(1, "rolled")
    with contextlib.suppress(RuntimeError), transaction.atomic():
        probe(2, "rolled")
        raise RuntimeError("refused")

    assert probe(3, "rolled") == 4
    assert prepared("rolled") == 1


def test_a_savepoint_rolled_back_keeps_them(codes):
    probe(1, "kept")
    with contextlib.suppress(IntegrityError), transaction.atomic():
        insert_code("X")
        insert_code("X")

    assert prepared("kept") == 1


def test_one_cursor_serves_a_connections_statements_and_a_block_within_gets_its_own():
    with statement_cursor() as first:
        first.execute("SELECT generate_series(1, 3) AS outer_rows")
        assert first.fetchone() == (1,)
        with statement_cursor() as inner:
            assert inner is not first
            inner.execute("SELECT 10 AS inner_row")
            assert inner.fetchone() == (10,)
        assert inner.closed
        # The outer block's rows were not touched by the inner one's statement.
        assert first.fetchall() == [(2,), (3,)]
    with statement_cursor() as second:
        assert second is first
    assert not first.closed


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_a_new_connection_gets_a_new_cursor():
    with statement_cursor() as before:
        pass
    connection.close()

    with statement_cursor() as after:
        after.execute("SELECT 1 AS reconnected")
        assert after.fetchone() == (1,)
    assert after is not before


def test_a_connection_that_starts_logging_its_queries_gets_a_cursor_that_logs():
    probe(1, "unlogged")
    with CaptureQueriesContext(connection) as logged:
        assert probe(2, "logged") == 3
    assert len(logged.captured_queries) == 1


def test_pipelined_statements_are_answered_together_at_the_blocks_end(codes):
    with statement_cursor() as first, statement_cursor() as second:
        with statements_pipelined():
            first.execute("INSERT INTO probe_unique (code) VALUES (%s) RETURNING code", ["A"])
            second.execute("SELECT count(*) FROM probe_unique WHERE code = %s", ["A"])
            # Sent, not answered yet: psycopg's pipeline holds the results until the end.
            assert (first.rowcount, second.rowcount) == (-1, -1)
        # In the order sent: the second statement saw the first one's row.
        assert first.fetchall() == [("A",)]
        assert second.fetchone() == (1,)


def insert_codes_pipelined(*codes: str) -> None:
    with ExitStack() as cursors:
        sending = [cursors.enter_context(statement_cursor()) for _ in codes]
        with statements_pipelined():
            for cursor, code in zip(sending, codes, strict=True):
                cursor.execute("INSERT INTO probe_unique (code) VALUES (%s)", [code])


def test_a_pipelined_statements_error_is_djangos(codes):
    insert_code("X")

    with pytest.raises(IntegrityError), transaction.atomic():
        insert_codes_pipelined("Y", "X", "Z")

    # Rolled back to the savepoint, the transaction goes on.
    insert_codes_pipelined("Z")
    with connection.cursor() as cursor:
        cursor.execute("SELECT code FROM probe_unique ORDER BY code")
        assert cursor.fetchall() == [("X",), ("Z",)]
