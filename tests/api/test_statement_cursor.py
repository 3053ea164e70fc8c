"""airline/sql.py: a booking's hot statements prepared once per connection on PostgreSQL,
never behind a transaction-mode pooler; seen by execute wrappers and with Django's errors
either way."""

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


def insert_code(code: str) -> None:
    with statement_cursor() as cursor:
        cursor.execute("INSERT INTO probe_unique (code) VALUES (%s)", [code])


def test_database_errors_are_djangos():
    with connection.cursor() as cursor:
        cursor.execute("CREATE TEMPORARY TABLE probe_unique (code text UNIQUE)")
    insert_code("X")

    with pytest.raises(IntegrityError), transaction.atomic():
        insert_code("X")
