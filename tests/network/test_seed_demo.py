"""seed_demo: the demo data contract that `make run` and the tests rely on (DESIGN.md §6)."""

from datetime import UTC, datetime, timedelta
from io import StringIO

import pytest
from django.core.management import call_command

from airline.fares.models import Fare
from airline.network.itineraries import network_index, reset_network_index
from airline.network.models import (
    SCHEDULE_LOAD_MODELS,
    AircraftType,
    FlightLeg,
    ScheduledLeg,
    ScheduleLoad,
    Station,
)
from airline.network.services import configuration_capacities
from sellers.models import Partner, Seller
from tests.dbstats import analysed_since, database_clock

pytestmark = pytest.mark.django_db

CONTRACT_NONSTOPS = [
    ("CHS", "PVD"),
    ("TPA", "PVD"),
    ("CHS", "BDL"),
    ("MCO", "BDL"),
    ("TPA", "ORF"),
    ("MSY", "PIT"),
]


@pytest.fixture(scope="module")
def seeded(django_db_setup, django_db_blocker):
    """One seeding for the module (it loads 330 days of schedule), undone afterwards."""
    with django_db_blocker.unblock():
        first, second = StringIO(), StringIO()
        started = database_clock()
        call_command("seed_demo", stdout=first)
        analysed = analysed_since(started, *SCHEDULE_LOAD_MODELS, Fare)
        sellers = list(Seller.objects.values_list("pk", "code", "is_default"))
        legs = FlightLeg.objects.count()
        call_command("seed_demo", stdout=second)
        reset_network_index()
        yield {
            "first": first.getvalue(),
            "second": second.getvalue(),
            "sellers": sellers,
            "legs": legs,
            "analysed": analysed,
        }
        reset_network_index()
        FlightLeg.objects.all().delete()
        ScheduledLeg.objects.all().delete()  # a later module counts them
        ScheduleLoad.objects.all().delete()
        Seller.objects.all().delete()
        Partner.objects.all().delete()


def test_it_creates_the_demo_partner_and_sellers_once(seeded):
    assert Partner.objects.get().code == "DEMO"
    assert sorted((code, default) for _, code, default in seeded["sellers"]) == [
        ("DEMO1", True),
        ("DEMO2", False),
    ]
    assert list(Seller.objects.values_list("pk", "code", "is_default")) == seeded["sellers"]


def test_the_tables_it_filled_have_statistics_once_it_is_done(seeded):
    # Issue 24 item 8: planned without them, a search's inventory query took 25 ms of 35.
    assert seeded["analysed"] == {
        "network_scheduleload": True,
        "network_scheduledleg": True,
        "network_flightleg": True,
        "network_leginventory": True,
        "fares_fare": True,
    }


def test_a_second_run_changes_nothing(seeded):
    assert "already loaded" in seeded["second"]
    assert FlightLeg.objects.count() == seeded["legs"]
    assert ScheduleLoad.objects.count() == 1


def test_the_schedule_runs_from_today_for_330_days(seeded):
    today = datetime.now(tz=UTC).date()
    dates = FlightLeg.objects.values_list("flight_date", flat=True)

    assert min(dates) == today
    assert max(dates) == today + timedelta(days=329)


def test_at_least_25_us_stations(seeded):
    assert Station.objects.filter(country="US").count() >= 25


def test_two_aircraft_types_one_with_a_premium_cabin(seeded):
    capacities = {
        t.iata_code: configuration_capacities(t.configurations.get())
        for t in AircraftType.objects.all()
    }

    assert capacities == {"320": {"C": 12, "Y": 138}, "E75": {"Y": 76}}


def test_contract_nonstops_fly_daily_both_ways(seeded):
    days = FlightLeg.objects.values("flight_date").distinct().count()
    for a, b in CONTRACT_NONSTOPS:
        for origin, destination in ((a, b), (b, a)):
            operated = (
                FlightLeg.objects.filter(origin=origin, destination=destination)
                .values("flight_date")
                .distinct()
            )
            assert operated.count() == days, (origin, destination)


def test_pvd_chs_tpa_is_one_flight_number_with_two_legs(seeded):
    legs = FlightLeg.objects.filter(
        origin="PVD",
        destination="CHS",
        flight_number__in=FlightLeg.objects.filter(origin="CHS", destination="TPA").values(
            "flight_number"
        ),
    )
    flight = legs.first()

    itinerary = FlightLeg.objects.filter(
        flight_number=flight.flight_number, flight_date=flight.flight_date
    ).order_by("leg_sequence")
    assert [(leg.origin_id, leg.destination_id) for leg in itinerary] == [
        ("PVD", "CHS"),
        ("CHS", "TPA"),
    ]


def test_every_contract_market_has_journeys_and_pvd_msy_only_connections(seeded):
    index = network_index()
    day = datetime.now(tz=UTC).date() + timedelta(days=30)
    for a, b in CONTRACT_NONSTOPS:
        for origin, destination in ((a, b), (b, a)):
            assert any(j.stops == 0 for j in index.journeys(origin, destination, day)), (
                origin,
                destination,
            )
    direct = index.journeys("PVD", "TPA", day)
    assert any(len(j.segments) == 1 and j.stops == 1 for j in direct)
    for origin, destination in (("PVD", "MSY"), ("MSY", "PVD")):
        journeys = index.journeys(origin, destination, day)
        assert journeys
        assert all(len(j.segments) == 2 for j in journeys)
    assert not FlightLeg.objects.filter(origin="PVD", destination="MSY").exists()
