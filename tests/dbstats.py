"""What PostgreSQL knows of a table's statistics (issue 24 item 8: bulk writes end with
ANALYZE, airline.sql.analyze)."""

from datetime import datetime

from django.db import connection
from django.db.models import Model


def database_clock() -> datetime:
    """The server's own time now (not the transaction's start, which now() is)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT clock_timestamp()")
        return cursor.fetchone()[0]


def analysed_since(since: datetime, *models: type[Model]) -> dict[str, bool]:
    """Each model's table: whether an ANALYZE (by a command, not autovacuum: that is
    last_autoanalyze) ran on it at or after `since` and left it a row estimate."""
    tables = [model._meta.db_table for model in models]
    with connection.cursor() as cursor:
        # Statistics views are read once per transaction unless the snapshot is dropped.
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute(
            "SELECT s.relname, s.last_analyze >= %s AND c.reltuples > 0"
            " FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid"
            " WHERE s.relname = ANY(%s)",
            [since, tables],
        )
        found = dict(cursor.fetchall())
    return {table: bool(found.get(table)) for table in tables}
