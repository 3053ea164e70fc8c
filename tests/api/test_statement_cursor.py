"""airline/sql.py: a booking's hot statements prepared once per connection on PostgreSQL,
never behind a transaction-mode pooler; seen by execute wrappers and with Django's errors
either way."""

import contextlib

import pytest
from django.db import IntegrityError, connection, transaction
from django.test import override_settings

from airline.sql import statement_cursor

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
