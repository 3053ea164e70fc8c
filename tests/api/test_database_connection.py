"""The app's PostgreSQL connections (airline/settings.py, airline/sql.py): no JIT
compilation, and statistics refreshed on demand after a bulk write (issue 24 item 8)."""

import pytest
from django.db import connection

from airline.network.models import Station
from airline.sql import analyze
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
