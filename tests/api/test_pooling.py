"""DB_TRANSACTION_POOLING: the settings a pooler in transaction mode (PgBouncer) needs,
README "Production"."""

import subprocess
import sys

import pytest
from django.contrib.contenttypes.models import ContentType
from django.db import connection, transaction

from tests.e2e.servers import REPO, base_env

SHOW_DATABASE_SETTINGS = (
    "import django; django.setup(); "
    "from django.conf import settings; from django.db import connection; "
    "print(connection.settings_dict['DISABLE_SERVER_SIDE_CURSORS'], "
    "connection.get_connection_params()['prepare_threshold'], "
    "settings.DB_PREPARED_STATEMENTS)"
)


def database_settings(tmp_path, **env: str) -> str:
    return printed_at_startup(tmp_path, SHOW_DATABASE_SETTINGS, **env)


def printed_at_startup(tmp_path, code: str, **env: str) -> str:
    """What `code` prints in a fresh process of the test settings with `env` added."""
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        env=base_env(
            AIRLINE_ENV="test",
            AIRLINE_VAR_DIR=str(tmp_path),
            DATABASE_URL="postgres://postgres@127.0.0.1:6432/airline",
            **env,
        ),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_transaction_pooling_turns_server_side_cursors_and_prepared_statements_off(tmp_path):
    assert database_settings(tmp_path, DB_TRANSACTION_POOLING="1") == "True None False"


def test_server_side_cursors_stay_on_without_a_pooler(tmp_path):
    # Without the pooler a large .iterator() streams from the server, as Django's default.
    # Django's own statements stay unprepared either way (its default for psycopg 3); a
    # booking's hot statements are prepared (airline/sql.py).
    assert database_settings(tmp_path, DB_TRANSACTION_POOLING="") == "False None True"


def open_cursors() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_cursors WHERE name LIKE '\\_django\\_curs%%'")
        return cursor.fetchone()[0]


@pytest.mark.parametrize(("disabled", "declared"), [(False, 1), (True, 0)])
@pytest.mark.django_db
def test_iterator_declares_no_server_cursor_when_disabled(monkeypatch, disabled, declared):
    """What the setting changes: .iterator() keeps no cursor on the server, so nothing of
    it is left for a later transaction on another server connection to look for."""
    monkeypatch.setitem(connection.settings_dict, "DISABLE_SERVER_SIDE_CURSORS", disabled)

    with transaction.atomic():
        rows = ContentType.objects.values_list("pk", flat=True).iterator(chunk_size=1)
        next(rows)
        assert open_cursors() == declared
        assert len(list(rows)) >= 1
