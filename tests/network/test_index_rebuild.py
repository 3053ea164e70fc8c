"""The index off the request path: a network version that cannot be patched in is built
by the worker's poller while requests keep the old index; /health answers at once while a
process warms; fleet and station edits move the version like a schedule load (DESIGN.md
§6; SPEC.md §4.3). A build is made slow on purpose (it waits for an event), so nothing
here depends on how long a real build takes."""

import threading
import time as clock_time
from datetime import date, time, timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import OperationalError, transaction

from airline.network import itineraries, models
from airline.network.demo_fleet import DEMO_FLEET
from airline.network.itineraries import (
    follow_network_changes,
    network_index,
    refresh_network_index,
    reset_network_index,
    schedule_version,
)
from airline.network.models import AircraftType, CabinLayout, SeatConfiguration, Station
from airline.network.services import fleet_ensure
from tests.network.ssim_builder import Leg, ssim_file

DAY = date(2027, 1, 4)
QUICK = 0.5  # seconds: what "at once" means here, far above a real answer's few ms


@pytest.fixture(autouse=True)
def fresh_index():
    reset_network_index()
    yield
    reset_network_index()


@pytest.fixture
def held_build(monkeypatch):
    """Builds wait for `release.set()` (an injected slow build)."""
    release = threading.Event()
    real = itineraries.build_index

    def slow(version):
        assert release.wait(timeout=30), "the test never released the build"
        return real(version)

    monkeypatch.setattr(itineraries, "build_index", slow)
    yield release
    release.set()


def load(tmp_path, number: int) -> None:
    legs = [Leg(number, "PVD", "CHS", time(7, 0), time(9, 0), DAY, DAY + timedelta(days=6))]
    (tmp_path / f"{number}.ssim").write_text(ssim_file(legs))
    call_command("load_schedule", str(tmp_path / f"{number}.ssim"), stdout=StringIO())


def flights() -> list[int]:
    return [j.segments[0].flight_number for j in network_index().journeys("PVD", "CHS", DAY)]


def eventually(check, timeout: float = 10) -> bool:
    deadline = clock_time.monotonic() + timeout
    while not check():
        if clock_time.monotonic() > deadline:
            return False
        clock_time.sleep(0.01)  # waiting for the build thread, not timing behaviour
    return True


def timed(call):
    started = clock_time.monotonic()
    result = call()
    return result, clock_time.monotonic() - started


# The build thread has its own connection: these tests commit what it must see.
committed = pytest.mark.django_db(transaction=True, serialized_rollback=True)


@committed
def test_health_answers_loading_at_once_while_the_first_build_runs(
    api, tmp_path, settings, held_build
):
    settings.NETWORK_WARM_ON_HEALTH_CHECK = True
    load(tmp_path, 101)

    first, first_took = timed(lambda: api.get("/health"))  # starts the (held) build
    second, second_took = timed(lambda: api.get("/health"))  # while it holds the build lock

    assert (first.status_code, first.json()) == (503, {"status": "loading"})
    assert (second.status_code, second.json()) == (503, {"status": "loading"})
    assert max(first_took, second_took) < QUICK
    held_build.set()
    assert eventually(lambda: api.get("/health").status_code == 200)
    assert set(api.get("/health").json()) == {"status", "timestamp", "degraded", "dependencies"}


@pytest.fixture
def logged_full(monkeypatch):
    """Every schedule load is logged `full` (as one of over CHANGE_LOG_MAX_LEGS legs is):
    workers rebuild instead of patching."""
    monkeypatch.setattr(models, "CHANGE_LOG_MAX_LEGS", 0)


@committed
def test_a_full_rebuild_runs_in_the_poller_while_the_old_index_serves(
    tmp_path, settings, held_build, logged_full
):
    settings.NETWORK_REBUILD_IN_BACKGROUND = True
    load(tmp_path, 101)
    held_build.set()
    refresh_network_index()  # what the master does before forking
    assert flights() == [101]
    held_build.clear()

    load(tmp_path, 102)
    follow_network_changes()  # the worker's poller: its rebuild is held meanwhile
    answers = [timed(flights) for _ in range(5)]

    assert [found for found, _ in answers] == [[101]] * 5  # the old index, not a stall
    assert max(took for _, took in answers) < QUICK
    held_build.set()
    assert eventually(lambda: flights() == [102])


@committed
def test_a_failed_rebuild_keeps_the_old_index_and_is_retried(
    tmp_path, settings, monkeypatch, logged_full
):
    settings.NETWORK_REBUILD_IN_BACKGROUND = True
    load(tmp_path, 101)
    refresh_network_index()
    real, failures = itineraries.build_index, []

    def fails_once(version):
        if not failures:
            failures.append(version)
            raise OperationalError("the database went away")
        return real(version)

    monkeypatch.setattr(itineraries, "build_index", fails_once)
    load(tmp_path, 102)
    with pytest.raises(OperationalError):
        refresh_network_index()  # one poll, failing

    assert flights() == [101]
    follow_network_changes()  # the poller retries
    assert eventually(lambda: flights() == [102])
    assert len(failures) == 1


@pytest.mark.django_db
@pytest.mark.parametrize(
    "edit",
    [
        lambda: AircraftType.objects.filter(iata_code="E75").first().save(),
        lambda: SeatConfiguration.objects.first().save(),
        lambda: CabinLayout.objects.first().save(),
        lambda: Station.objects.get(code="PVD").save(),
        lambda: SeatConfiguration.objects.filter(cabins__isnull=True).first().delete(),
    ],
    ids=["aircraft type", "seat configuration", "cabin layout", "station", "deletion"],
)
def test_an_edit_of_what_the_index_holds_moves_the_version(tmp_path, edit):
    fleet_ensure(DEMO_FLEET)
    load(tmp_path, 101)
    kind = AircraftType.objects.first()
    SeatConfiguration.objects.create(aircraft_type=kind, code="EMPTY")
    before = schedule_version()

    edit()

    assert schedule_version() > before


@pytest.mark.django_db
def test_a_rolled_back_edit_leaves_the_version(tmp_path):
    fleet_ensure(DEMO_FLEET)
    before = schedule_version()

    def failing_edit():
        with transaction.atomic():
            kind = AircraftType.objects.get(iata_code="E75")
            kind.carrier_code = "XXX"
            kind.save()
            raise RuntimeError("the admin's save failed after the aircraft type's")

    with pytest.raises(RuntimeError):
        failing_edit()

    assert schedule_version() == before


@pytest.mark.django_db
def test_an_aircraft_type_edit_reaches_a_running_worker(tmp_path, monkeypatch):
    """An admin edit of the carrier's aircraft code: shown by the next index, with no
    schedule load in between."""
    monkeypatch.setattr(itineraries, "VERSION_CHECK_SECONDS", 0)
    fleet_ensure(DEMO_FLEET)
    load(tmp_path, 101)
    assert network_index().carrier_aircraft_code("E75") == "E7Y"

    kind = AircraftType.objects.get(iata_code="E75")
    kind.carrier_code = "E7Z"
    kind.save()

    assert network_index().carrier_aircraft_code("E75") == "E7Z"
