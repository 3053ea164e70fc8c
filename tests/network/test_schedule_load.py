"""Loading and replacing schedules (DESIGN.md §6): `load_schedule FILE.ssim`."""

import os
from datetime import UTC, date, datetime, time, timedelta
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.db.models import F

from airline.network import services
from airline.network.inventory import inventory_sell
from airline.network.models import (
    SCHEDULE_LOAD_MODELS,
    FlightLeg,
    LegInventory,
    ScheduledLeg,
    ScheduleLoad,
    SeatConfiguration,
    Station,
)
from airline.network.schedule_diff import schedule_diff
from airline.network.services import (
    configuration_capacities,
    known_station,
    schedule_load_file,
)
from airline.network.ssim import parse_ssim
from tests.dbstats import analysed_since, database_clock
from tests.network.ssim_builder import Leg, ssim_file

pytestmark = pytest.mark.django_db

SAMPLES = Path(
    os.environ.get(
        "SSIM_SAMPLES_DIR", Path(__file__).resolve().parents[3] / "shared" / "ssim-samples"
    )
)
JAN = date(2027, 1, 4)  # a Monday


def load(tmp_path: Path, legs: list[Leg], name: str = "test.ssim") -> str:
    path = tmp_path / name
    path.write_text(ssim_file(legs))
    out = StringIO()
    call_command("load_schedule", str(path), stdout=out)
    return out.getvalue()


def pvd_chs(**overrides) -> Leg:
    fields = {
        "number": 101,
        "origin": "PVD",
        "destination": "CHS",
        "departs": time(7, 0),
        "arrives": time(9, 5),
        "start": JAN,
        "end": JAN + timedelta(days=6),
    }
    return Leg(**{**fields, **overrides})


def test_the_third_party_sample_loads(tmp_path):
    out = StringIO()
    call_command("load_schedule", str(SAMPLES / "avionworx-sample.ssim"), stdout=out)

    assert "Loaded avionworx-sample.ssim" in out.getvalue()
    assert ScheduledLeg.objects.count() == 514
    assert Station.objects.get(code="RUN").time_zone == "Indian/Reunion"
    assert Station.objects.get(code="MRU").time_zone == "Indian/Mauritius"
    # Configurations we have no layout for get one matching the filed seat counts.
    boeing_733 = SeatConfiguration.objects.get(aircraft_type__iata_code="733", code="W18Y112")
    assert configuration_capacities(boeing_733) == {"W": 18, "Y": 112}
    boeing_772 = SeatConfiguration.objects.get(aircraft_type__iata_code="772", code="J14W34Y316")
    assert configuration_capacities(boeing_772) == {"C": 14, "W": 34, "Y": 316}
    legs = FlightLeg.objects.filter(carrier="XX")
    assert legs.count() > 514
    assert not legs.filter(arrives_at__lte=F("departs_at")).exists()


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_what_a_load_wrote_has_statistics_once_it_is_done(tmp_path, monkeypatch):
    monkeypatch.setattr(services, "ANALYZE_AFTER_LEGS", 7)  # a week of one flight
    started = database_clock()

    load(tmp_path, [pvd_chs()])

    # Issue 24 item 8: the legs and inventory a load filled are not planned as empty.
    assert analysed_since(started, *SCHEDULE_LOAD_MODELS) == {
        "network_scheduleload": True,
        "network_scheduledleg": True,
        "network_flightleg": True,
        "network_leginventory": True,
    }


def test_a_load_of_a_few_legs_leaves_statistics_to_autovacuum(tmp_path):
    started = database_clock()

    load(tmp_path, [pvd_chs()])  # 7 legs, inside the test's transaction

    assert not any(analysed_since(started, *SCHEDULE_LOAD_MODELS).values())


def test_loading_the_same_file_again_changes_nothing(tmp_path):
    load(tmp_path, [pvd_chs()])
    ids = set(FlightLeg.objects.values_list("id", flat=True))

    out = load(tmp_path, [pvd_chs()])

    assert "nothing changed" in out
    assert set(FlightLeg.objects.values_list("id", flat=True)) == ids
    assert ScheduleLoad.objects.count() == 1


def test_dated_legs_carry_utc_times_from_the_filed_local_times_and_offsets(tmp_path):
    load(tmp_path, [pvd_chs(days="135")])

    legs = FlightLeg.objects.order_by("flight_date")
    assert [leg.flight_date for leg in legs] == [
        JAN,
        JAN + timedelta(days=2),
        JAN + timedelta(days=4),
    ]
    first = legs[0]
    assert first.departs_at == datetime(2027, 1, 4, 12, 0, tzinfo=UTC)
    assert first.arrives_at == datetime(2027, 1, 4, 14, 5, tzinfo=UTC)
    assert dict(
        LegInventory.objects.filter(leg=first, rank=0).values_list("cabin", "authorized")
    ) == {"Y": 76}


def test_every_new_leg_gets_each_class_of_its_cabins_sized_by_its_own_configuration(
    tmp_path, monkeypatch
):
    # Written set-wise (one INSERT ... SELECT per configuration and chunk of legs): two
    # configurations in one load, and chunks of at most 4 legs (fewer where the classes'
    # values leave less under a backend's bound on parameters, as SQLite's), so that
    # chunks end inside a flight's dates.
    monkeypatch.setattr(services, "LOCK_CHUNK", 4)
    monkeypatch.setattr(connection.features, "max_query_params", 40)
    load(
        tmp_path,
        [
            pvd_chs(),
            pvd_chs(number=102, aircraft="733", configuration="W18Y112", days="246"),
        ],
    )

    ladder = services._ladder()
    legs = FlightLeg.objects.select_related("configuration")
    assert legs.count() == 7 + 3
    for leg in legs:
        expected = {
            (
                cabin,
                booking_class.rbd,
                booking_class.rank,
                services.authorized_seats(capacity, booking_class),
                0,
            )
            for cabin, capacity in configuration_capacities(leg.configuration).items()
            for booking_class in ladder[cabin]
        }
        rows = leg.inventory.values_list("cabin", "rbd", "rank", "authorized", "sold")
        assert set(rows) == expected, leg
        assert len(rows) == len(expected)
    assert {leg.configuration.code for leg in legs} == {"Y76", "W18Y112"}


def test_a_replacement_updates_creates_and_removes_legs(tmp_path):
    load(tmp_path, [pvd_chs(), pvd_chs(number=102, origin="CHS", destination="PVD")])
    kept_id = FlightLeg.objects.get(flight_number=101, flight_date=JAN).pk

    out = load(
        tmp_path,
        [
            pvd_chs(departs=time(8, 0), arrives=time(10, 5)),
            pvd_chs(number=103, origin="PVD", destination="TPA"),
        ],
        "v2.ssim",
    )

    retimed = FlightLeg.objects.get(flight_number=101, flight_date=JAN)
    assert retimed.pk == kept_id  # updated in place: bookings keep their leg
    assert retimed.departs_at == datetime(2027, 1, 4, 13, 0, tzinfo=UTC)
    assert not FlightLeg.objects.filter(flight_number=102).exists()
    assert FlightLeg.objects.filter(flight_number=103).count() == 7
    assert "7 flight-date legs created, 7 updated, 7 removed" in out


def test_a_dropped_leg_with_sales_is_kept_as_cancelled(tmp_path):
    load(tmp_path, [pvd_chs()])
    booked = FlightLeg.objects.get(flight_date=JAN)
    inventory_sell(leg_ids=[booked.pk], rbd="Y", seats=2)

    out = load(tmp_path, [pvd_chs(start=JAN + timedelta(days=1))], "v2.ssim")

    booked.refresh_from_db()
    assert booked.is_cancelled
    assert LegInventory.objects.get(leg=booked, rbd="Y").sold == 2
    assert "1 kept as cancelled" in out


def test_an_equipment_change_resizes_inventory_but_never_below_what_is_sold(tmp_path):
    SeatConfiguration.objects.all().delete()
    load(tmp_path, [pvd_chs(aircraft="320", configuration="C12Y138")])
    leg = FlightLeg.objects.get(flight_date=JAN)
    inventory_sell(leg_ids=[leg.pk], rbd="Y", seats=100)

    load(tmp_path, [pvd_chs(aircraft="E75", configuration="Y76")], "v2.ssim")

    rows = dict(LegInventory.objects.filter(leg=leg).values_list("rbd", "authorized"))
    assert rows["Y"] == 100  # 76 seats now, 100 already sold: the limit stays at what is sold
    assert rows["L"] == 76 * 20 // 100


def test_a_government_approval_disclosure_is_read_from_its_segment_data(tmp_path):
    load(tmp_path, [pvd_chs(segment_data=[(901, "SUBJECT TO GOVERNMENT APPROVAL")])])

    assert set(FlightLeg.objects.values_list("govt_approval_disclosure", flat=True)) == {
        "SUBJECT TO GOVERNMENT APPROVAL"
    }


def test_an_invalid_file_is_refused_whole_and_names_the_line(tmp_path):
    load(tmp_path, [pvd_chs()])
    before = (FlightLeg.objects.count(), ScheduledLeg.objects.count(), ScheduleLoad.objects.count())
    lines = ssim_file([pvd_chs(number=201), pvd_chs(number=202)]).splitlines()
    lines[11] = lines[11][:100]  # the second leg record, cut short
    (tmp_path / "bad.ssim").write_text("\n".join(lines) + "\n")

    with pytest.raises(CommandError, match=r"not loaded, nothing changed[\s\S]*line 12"):
        call_command("load_schedule", str(tmp_path / "bad.ssim"), stdout=StringIO())

    assert (
        FlightLeg.objects.count(),
        ScheduledLeg.objects.count(),
        ScheduleLoad.objects.count(),
    ) == before


def test_an_unknown_station_is_refused(tmp_path):
    (tmp_path / "bad.ssim").write_text(ssim_file([pvd_chs(destination="QQQ")]))

    with pytest.raises(CommandError, match="QQQ"):
        call_command("load_schedule", str(tmp_path / "bad.ssim"), stdout=StringIO())
    assert not FlightLeg.objects.exists()


def test_a_missing_file_is_refused(tmp_path):
    with pytest.raises(CommandError, match="No such file"):
        call_command("load_schedule", str(tmp_path / "nope.ssim"))


def test_a_reload_reads_and_writes_only_the_flights_it_touches(tmp_path):
    """Issue 24 item 6: a load is proportional to what it changes. MX102's records are
    the same, so none of its dated legs is read, compared or written."""
    chs_pvd = pvd_chs(
        number=102, origin="CHS", destination="PVD", departs=time(10, 0), arrives=time(12, 5)
    )
    load(tmp_path, [pvd_chs(), chs_pvd], name="first.ssim")
    untouched = {
        leg.pk: (leg.departs_at, leg.arrives_at)
        for leg in FlightLeg.objects.filter(flight_number=102)
    }
    retimed = pvd_chs(departs=time(7, 30), arrives=time(9, 35))
    path = tmp_path / "second.ssim"
    path.write_text(ssim_file([retimed, chs_pvd]))
    schedule = parse_ssim(path.read_text(encoding="latin-1"), known_station=known_station)

    diff = schedule_diff(schedule)
    assert diff.flights == {("MX", 101)}
    assert {key[1] for key in diff.existing} == {101}
    assert {key[1] for key in diff.wanted} == {101}
    assert diff.untouched_count() == len(untouched)

    result = schedule_load_file(path=path, now=datetime(2027, 1, 1, tzinfo=UTC))
    assert (result.legs_updated, result.legs_created, result.legs_removed) == (7, 0, 0)
    assert result.changed_leg_ids == set(
        FlightLeg.objects.filter(flight_number=101).values_list("pk", flat=True)
    )
    assert {
        leg.pk: (leg.departs_at, leg.arrives_at)
        for leg in FlightLeg.objects.filter(flight_number=102)
    } == untouched
    assert set(ScheduledLeg.objects.values_list("flight_number", flat=True)) == {101, 102}
    assert all(ScheduledLeg.objects.values_list("fingerprint", flat=True))


def test_records_stored_without_a_fingerprint_have_their_flights_diffed_whole(tmp_path):
    """Records loaded before fingerprints were kept: the first load after diffs their
    flights as before (and stores fingerprints), then only what changes."""
    load(tmp_path, [pvd_chs()], name="first.ssim")
    ScheduledLeg.objects.update(fingerprint="")
    ScheduleLoad.objects.update(sha256="0" * 64)  # as if another file had the same records
    path = tmp_path / "first.ssim"
    schedule = parse_ssim(path.read_text(encoding="latin-1"), known_station=known_station)
    assert schedule_diff(schedule).flights == {("MX", 101)}

    result = schedule_load_file(path=path, now=datetime(2027, 1, 1, tzinfo=UTC))
    assert (result.legs_updated, result.legs_created, result.legs_removed) == (0, 0, 0)
    assert schedule_diff(schedule).flights == set()
