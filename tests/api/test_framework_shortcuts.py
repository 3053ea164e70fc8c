"""Where the code goes past Django's, DRF's and psycopg's public API for speed (issue 29
item 2; docs/operators/production.md "Framework shortcuts"): each test here fails, naming what to
re-verify, on an upgrade that changes what a shortcut relies on; and each shortcut has a
setting that turns it off. orders/core/rows.py's own checks: tests/orders/test_rows_insert.py;
orders/reading/part_rows.py's: tests/orders/test_order_parts.py.

After re-verifying a shortcut against a new release, update VERIFIED_WITH (and, for a
changed method, its fingerprint below) in the same commit as the upgrade."""

import hashlib
import inspect
from importlib.metadata import version

import psycopg
import pytest
from django.db import connection
from django.db.backends.base.base import BaseDatabaseWrapper
from rest_framework import serializers

from airline.sql import KEPT_CURSOR
from tests.api.test_pooling import printed_at_startup

# The releases the shortcuts were last checked against (major.minor): requirements/base.txt
# pins a patch release of each.
VERIFIED_WITH = {"Django": "5.2", "djangorestframework": "3.18", "psycopg": "3.3"}


@pytest.mark.parametrize("package", sorted(VERIFIED_WITH))
def test_the_installed_frameworks_are_the_ones_the_shortcuts_were_checked_against(package):
    installed = version(package)
    assert installed.startswith(VERIFIED_WITH[package] + "."), (
        f"{package} {installed}: re-verify orders/core/rows.py, orders/reading/part_rows.py, "
        "airline/sql.py and airline/api/serializers.py (StrictSerializer.get_fields) against "
        "it, then update VERIFIED_WITH"
    )


def fingerprint(function) -> str:
    return hashlib.sha256(inspect.getsource(function).encode()).hexdigest()[:16]


# --- airline/sql.py: statement_cursor repeats what db.cursor() does -----------------------

# The steps of Django's cursor() that statement_cursor repeats, and the PostgreSQL
# backend's create_cursor (whose timezone step it leaves out: see the test below).
CURSOR_STEPS = {
    "BaseDatabaseWrapper._cursor": "bb632516d005185c",
    "BaseDatabaseWrapper._prepare_cursor": "92079d0eed95d59d",
    "postgresql.DatabaseWrapper.create_cursor": "5309d92ffca3e871",
}


def cursor_steps() -> dict[str, str]:
    from django.db.backends.postgresql.base import DatabaseWrapper

    return {
        "BaseDatabaseWrapper._cursor": fingerprint(BaseDatabaseWrapper._cursor),
        "BaseDatabaseWrapper._prepare_cursor": fingerprint(BaseDatabaseWrapper._prepare_cursor),
        "postgresql.DatabaseWrapper.create_cursor": fingerprint(DatabaseWrapper.create_cursor),
    }


def test_djangos_cursor_steps_are_the_ones_statement_cursor_repeats():
    assert cursor_steps() == CURSOR_STEPS, (
        "Django's cursor() changed: compare airline/sql.py statement_cursor with it"
    )
    for name in (
        "close_if_health_check_failed",
        "ensure_connection",
        "validate_thread_sharing",
        "make_cursor",
        "make_debug_cursor",
    ):
        assert callable(getattr(BaseDatabaseWrapper, name)), name
    assert isinstance(BaseDatabaseWrapper.queries_logged, property)
    assert hasattr(connection, "wrap_database_errors")
    # The kept cursor's attribute on the connection wrapper is statement_cursor's alone.
    from django.db.backends.postgresql.base import DatabaseWrapper

    assert not hasattr(DatabaseWrapper, KEPT_CURSOR)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="psycopg")
def test_the_backends_server_binding_cursor_binds_on_the_server():
    from django.db.backends.postgresql.base import ServerBindingCursor

    assert issubclass(ServerBindingCursor, psycopg.Cursor)
    assert not issubclass(ServerBindingCursor, psycopg.ClientCursor)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="psycopg")
@pytest.mark.django_db
def test_django_connects_with_preparing_off_and_the_timezone_statement_cursor_assumes():
    from psycopg.pq import Format

    connection.ensure_connection()
    raw = connection.connection

    # statement_cursor sets the threshold to 0 for its own statements only, and back.
    assert raw.prepare_threshold is None
    assert isinstance(psycopg.Connection.prepare_threshold, property)
    assert psycopg.Connection.prepare_threshold.fset is not None
    # create_cursor registers a timezone loader on a cursor only when the connection's
    # disagrees with Django's; statement_cursor leaves that step out, so it must agree.
    timestamptz = psycopg.adapters.types["timestamptz"].oid
    assert raw.adapters.get_loader(timestamptz, Format.TEXT).timezone == connection.timezone


# --- airline/api/serializers.py: StrictSerializer.get_fields copies the declared fields ---


def test_the_declared_fields_get_fields_copies_are_there():
    class Shape(serializers.Serializer):
        name = serializers.CharField()

    assert list(Shape._declared_fields) == ["name"]


# --- The settings that turn each shortcut off -------------------------------------------

SHOW_SHORTCUT_SETTINGS = (
    "import django; django.setup(); from django.conf import settings as s; "
    "print(s.DB_DIRECT_INSERT, s.DB_DIRECT_READS, s.DB_PREPARED_STATEMENTS, "
    "s.DB_COMMIT_WITHOUT_FLUSH)"
)


def shortcut_settings(tmp_path, **env: str) -> str:
    return printed_at_startup(tmp_path, SHOW_SHORTCUT_SETTINGS, **env)


def test_every_shortcut_is_on_by_default_but_the_commit_without_flush(tmp_path):
    assert shortcut_settings(tmp_path) == "True True True False"


def test_each_shortcut_has_a_setting_that_turns_it_off(tmp_path):
    assert (
        shortcut_settings(
            tmp_path,
            DB_DIRECT_INSERT="0",
            DB_DIRECT_READS="0",
            DB_PREPARED_STATEMENTS="0",
            DB_COMMIT_WITHOUT_FLUSH="1",
        )
        == "False False False True"
    )
