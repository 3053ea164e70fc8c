"""Each worker's in-memory index: built on demand, rebuilt for a newer schedule, and what
/health waits for (SPEC.md §4.3; DESIGN.md §6)."""

import time as clock_time
from datetime import date, time, timedelta
from io import StringIO

import pytest
from django.core.management import call_command

from airline.network import itineraries
from airline.network.itineraries import (
    is_valid_market,
    network_index,
    network_is_ready,
    reset_network_index,
)
from tests.network.ssim_builder import Leg, ssim_file

pytestmark = pytest.mark.django_db

DAY = date(2027, 1, 4)


@pytest.fixture(autouse=True)
def fresh_index():
    reset_network_index()
    yield
    reset_network_index()


def load(tmp_path, legs: list[Leg], name: str) -> None:
    (tmp_path / name).write_text(ssim_file(legs))
    call_command("load_schedule", str(tmp_path / name), stdout=StringIO())


def leg(number: int, origin: str, destination: str) -> Leg:
    return Leg(number, origin, destination, time(7, 0), time(9, 0), DAY, DAY + timedelta(days=6))


def test_health_is_loading_until_a_schedule_is_loaded_and_the_index_is_warm(api, tmp_path):
    assert api.get("/health").json() == {"status": "loading"}

    load(tmp_path, [leg(101, "PVD", "CHS")], "a.ssim")
    network_index()  # what the warming thread does

    assert api.get("/health").status_code == 200


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_readiness_starts_warming_in_the_background(tmp_path, settings):
    """The warming thread has its own connection: it sees committed data only."""
    settings.NETWORK_WARM_ON_HEALTH_CHECK = True
    load(tmp_path, [leg(101, "PVD", "CHS")], "a.ssim")

    assert network_is_ready() is False  # not warm yet: starts the build
    deadline = clock_time.monotonic() + 10
    while not network_is_ready() and clock_time.monotonic() < deadline:
        clock_time.sleep(0.01)  # waiting for the warming thread, not timing behaviour

    assert network_is_ready()


def test_a_newer_schedule_is_picked_up(tmp_path, monkeypatch):
    monkeypatch.setattr(itineraries, "VERSION_CHECK_SECONDS", 0)
    load(tmp_path, [leg(101, "PVD", "CHS")], "a.ssim")
    assert [j.segments[0].flight_number for j in network_index().journeys("PVD", "CHS", DAY)] == [
        101
    ]

    load(tmp_path, [leg(102, "PVD", "CHS")], "b.ssim")

    assert [j.segments[0].flight_number for j in network_index().journeys("PVD", "CHS", DAY)] == [
        102
    ]


def test_a_valid_market_is_served_directly_or_by_connection(tmp_path):
    load(tmp_path, [leg(1, "PVD", "CLT"), leg(2, "CLT", "MSY"), leg(3, "TPA", "ORF")], "a.ssim")

    assert is_valid_market("PVD", "MSY")
    assert is_valid_market("TPA", "ORF")
    assert not is_valid_market("ORF", "TPA")  # flown one way only
    assert not is_valid_market("PVD", "ORF")
    assert not is_valid_market("PVD", "LAX")  # a real airport the schedule does not serve
