"""The app's PostgreSQL connections (airline/settings.py, airline/sql.py): no JIT
compilation, and statistics refreshed on demand after a bulk write (issue 24 item 8); a
host list for failover and commits that wait for a synchronous standby (issue 30)."""

import pytest
from django.db import connection, transaction

from airline.env import database_url_hosts
from airline.network.models import Station
from airline.sql import analyze, commit_without_flush
from tests.dbstats import analysed_since, database_clock

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL settings"),
]


def test_an_app_connection_compiles_no_plan():
    # A JIT-compiled plan of the back office's counts over the schedule cost it 12 s.
    with connection.cursor() as cursor:
        cursor.execute("SHOW jit")
        assert cursor.fetchone()[0] == "off"


def test_analyze_gives_the_tables_it_is_given_statistics(db):
    Station.objects.bulk_create(
        Station(
            code=f"Q{n:02d}",
            name="Q",
            city="Q",
            country="QQ",
            time_zone="UTC",
            latitude=0,
            longitude=0,
        )
        for n in range(30)
    )
    started = database_clock()

    analyze(Station)

    assert analysed_since(started, Station) == {"network_station": True}


@pytest.mark.parametrize(("setting", "expected"), [(True, "off"), (False, "on")])
def test_a_confirmation_waits_for_its_commit_unless_allowed_not_to(settings, setting, expected):
    # With a synchronous standby (DB_COMMIT_WITHOUT_FLUSH off) a confirmation must wait
    # for it like any commit, or a failover could lose a booking the client was told of.
    settings.DB_COMMIT_WITHOUT_FLUSH = setting
    with transaction.atomic(), connection.cursor() as cursor:
        commit_without_flush()
        cursor.execute("SHOW synchronous_commit")
        assert cursor.fetchone()[0] == expected


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            "postgres://app:pw@10.0.0.1:6432,10.0.0.2:6433/airline?target_session_attrs=read-write",
            (
                "postgres://app:pw@10.0.0.1:6432/airline?target_session_attrs=read-write",
                ["10.0.0.1", "10.0.0.2"],
                ["6432", "6433"],
            ),
        ),
        (
            "postgres://app@db-a,db-b/airline",
            ("postgres://app@db-a:5432/airline", ["db-a", "db-b"], ["5432", "5432"]),
        ),
        ("postgres://app@db:6432/airline", ("postgres://app@db:6432/airline", [], [])),
    ],
)
def test_a_database_url_may_list_hosts_for_libpq(url, expected):
    assert database_url_hosts(url) == expected
