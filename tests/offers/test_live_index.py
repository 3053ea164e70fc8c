"""The schedule index follows changes through the change log, and no request builds it
(issue 24; README "Process layout"): a schedule load logs one NetworkChange with the legs
it wrote; a worker's poll patches its index with them (a full build only where the log
cannot say); a process with no index answers a search 503 ERR-9000 in JSON and NDC and
/health 503 `loading`, at once, while it builds in the background; seat layouts and
station zones follow the index's version."""

import gc
import threading
import time as clock_time
from datetime import time, timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import DatabaseError

from airline.network import itineraries, models
from airline.network.itineraries import (
    network_index,
    network_version_served,
    refresh_network_index,
    reset_network_index,
    schedule_version,
)
from airline.network.models import FlightLeg, NetworkChange, NetworkVersion, SeatConfiguration
from airline.network.services import station_zone
from offers.seating import seats_of_configuration
from tests.ndc.conftest import air_shopping, ndc_error_of, post
from tests.network.ssim_builder import Leg, ssim_file
from tests.offers.conftest import first_day, search_body

QUICK = 0.5  # seconds: at once, on a busy machine; a request that waited would wait 30 s (held)


@pytest.fixture(autouse=True)
def no_index_left():
    yield
    reset_network_index()  # also stops a poller a test started


def pvd_chs(tmp_path, name: str, *flights: tuple[int, int]) -> None:
    """Load a schedule of PVD-CHS flights (number, local departure hour) for a week."""
    day = first_day()
    legs = [
        Leg(number, "PVD", "CHS", time(hour), time(hour + 2), day, day + timedelta(days=6))
        for number, hour in flights
    ]
    (tmp_path / name).write_text(ssim_file(legs))
    call_command("load_schedule", str(tmp_path / name), stdout=StringIO())


def departures(day) -> list[tuple[int, int]]:
    """(flight number, UTC departure hour) of this process's PVD-CHS journeys on `day`."""
    return [
        (j.segments[0].flight_number, j.departs_at.hour)
        for j in network_index().journeys("PVD", "CHS", day)
    ]


def in_own_thread(call):
    """Run `call` in a thread of its own, with its own connection (as the poller does): it
    sees only committed data."""
    outcome = {}

    def run():
        from django.db import connection

        try:
            outcome["value"] = call()
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(timeout=60)
    return outcome.get("value")


def timed(call):
    started = clock_time.monotonic()
    result = call()
    return result, clock_time.monotonic() - started


@pytest.fixture
def no_full_build(monkeypatch):
    def refuse(version):
        raise AssertionError("a full build where the change log said which legs changed")

    monkeypatch.setattr(itineraries, "build_index", refuse)


@pytest.fixture
def held_build(monkeypatch):
    """A full build starts (`started` is set) and waits for the test to end."""
    started, release = threading.Event(), threading.Event()

    def held(version):
        started.set()
        release.wait(timeout=30)
        raise DatabaseError("the test is over")

    monkeypatch.setattr(itineraries, "build_index", held)
    yield started
    release.set()


# --- the change log --------------------------------------------------------------------


@pytest.mark.django_db
def test_a_schedule_load_logs_one_change_with_the_legs_it_wrote(tmp_path):
    pvd_chs(tmp_path, "a.ssim", (101, 7), (103, 9))
    before = schedule_version()
    old_103 = set(FlightLeg.objects.filter(flight_number=103).values_list("id", flat=True))
    kept_101 = set(FlightLeg.objects.filter(flight_number=101).values_list("id", flat=True))

    pvd_chs(tmp_path, "b.ssim", (101, 7), (102, 8))  # 103 dropped, 102 new

    [change] = NetworkChange.objects.filter(version__gt=before)
    new_102 = set(FlightLeg.objects.filter(flight_number=102).values_list("id", flat=True))
    assert change.version == schedule_version() == before + 1  # one bump for the load
    assert set(change.leg_ids) == old_103 | new_102
    assert not set(change.leg_ids) & kept_101  # unchanged legs are not logged
    assert change.full is False


@pytest.mark.django_db
def test_a_load_of_more_legs_than_the_log_lists_is_logged_full(tmp_path, monkeypatch):
    monkeypatch.setattr(models, "CHANGE_LOG_MAX_LEGS", 3)

    pvd_chs(tmp_path, "a.ssim", (101, 7))  # 7 legs

    change = NetworkChange.objects.get(version=schedule_version())
    assert (change.full, change.leg_ids) == (True, [])


@pytest.mark.django_db
def test_a_reference_data_edit_is_logged_without_legs(network):
    configuration = SeatConfiguration.objects.get(code="Y76")
    configuration.blocked_seats = ["19D"]
    configuration.save(update_fields=["blocked_seats"])

    change = NetworkChange.objects.get(version=schedule_version())
    assert (change.full, change.leg_ids) == (False, [])


@pytest.mark.django_db
def test_old_log_rows_are_pruned_and_an_index_older_than_the_log_is_rebuilt(network, monkeypatch):
    index = network_index()
    monkeypatch.setattr(models, "CHANGE_LOG_KEEP", 3)
    monkeypatch.setattr(models, "CHANGE_LOG_PRUNE_EVERY", 1)
    for _ in range(5):
        newest = NetworkVersion.bump()

    assert list(NetworkChange.objects.values_list("version", flat=True)) == [
        newest - 2,
        newest - 1,
        newest,
    ]
    built = []
    real = itineraries.build_index
    monkeypatch.setattr(itineraries, "build_index", lambda v: built.append(v) or real(v))
    assert refresh_network_index().version == newest
    assert built == [newest]  # the log no longer reaches back to the index's version
    assert index.version < newest - 3


# --- following the version ---------------------------------------------------------------


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_the_poller_patches_in_a_committed_change(tmp_path, settings, monkeypatch):
    settings.NETWORK_REBUILD_IN_BACKGROUND = True
    pvd_chs(tmp_path, "a.ssim", (101, 7), (103, 9))
    in_own_thread(refresh_network_index)  # the master's build before fork
    built = []
    real = itineraries.build_index
    monkeypatch.setattr(itineraries, "build_index", lambda v: built.append(v) or real(v))
    old = network_index()

    pvd_chs(tmp_path, "b.ssim", (101, 10), (102, 8))  # retime, add, drop
    assert departures(first_day()) == [(101, 12), (103, 14)]  # not followed yet (UTC-5)
    in_own_thread(refresh_network_index)  # one poll: what the poller does every POLL_SECONDS

    assert departures(first_day()) == [(102, 13), (101, 15)]
    assert network_index().version == schedule_version()
    assert built == []  # patched from the log, not rebuilt
    assert [(j.segments[0].flight_number) for j in old.journeys("PVD", "CHS", first_day())] == [
        101,
        103,
    ]  # the old index, which requests may still hold, is unchanged


# --- no request builds the index -----------------------------------------------------------


@pytest.mark.django_db
def test_a_search_on_a_process_with_no_index_is_refused_at_once_in_json(
    api, auth, network, settings, held_build
):
    settings.NETWORK_REBUILD_IN_BACKGROUND = True
    reset_network_index()

    response, took = timed(
        lambda: api.post(
            "/json/v1/offers", search_body(("PVD", "CHS", network)), format="json", **auth
        )
    )

    assert response.status_code == 503
    assert response.json()["error"]["code"] == "ERR-9000"
    assert response["Retry-After"] == "1"
    assert took < QUICK
    assert held_build.wait(timeout=10)  # the poller is building it meanwhile
    assert network_version_served() is None


@pytest.mark.django_db
def test_a_search_on_a_process_with_no_index_is_refused_at_once_in_ndc(
    api, auth, network, settings, held_build
):
    settings.NETWORK_REBUILD_IN_BACKGROUND = True
    reset_network_index()

    response, took = timed(
        lambda: post(api, "AirShopping", air_shopping(("PVD", "CHS", network)), auth)
    )

    error = ndc_error_of(response, 503, "ERR-9000")
    assert "loading" in error["DescText"]
    assert took < QUICK
    assert held_build.wait(timeout=10)


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_health_is_loading_at_once_then_ok_once_the_poller_built_the_index(api, tmp_path, settings):
    settings.NETWORK_REBUILD_IN_BACKGROUND = True
    pvd_chs(tmp_path, "a.ssim", (101, 7))
    reset_network_index()

    response, took = timed(lambda: api.get("/health"))
    assert (response.status_code, response.json(), took < QUICK) == (
        503,
        {"status": "loading"},
        True,
    )
    in_own_thread(refresh_network_index)  # the poller's first iteration

    assert api.get("/health").status_code == 200


@pytest.mark.django_db
def test_station_zones_need_no_index(network, settings):
    settings.NETWORK_REBUILD_IN_BACKGROUND = True
    reset_network_index()

    assert str(station_zone("MSY")) == "America/Chicago"
    assert str(station_zone("PVD")) == "America/New_York"
    assert network_version_served() is None  # answered without one


# --- caches follow the version ------------------------------------------------------------


@pytest.mark.django_db
def test_seat_layouts_change_with_the_version(network):
    configuration = SeatConfiguration.objects.get(code="Y76")
    network_index()
    assert not any(s.blocked for s in seats_of_configuration(configuration.pk))

    configuration.blocked_seats = ["19D"]
    configuration.save(update_fields=["blocked_seats"])
    still = seats_of_configuration(configuration.pk)  # this process is still at the old version
    refresh_network_index()  # it moves on
    now = seats_of_configuration(configuration.pk)

    assert not any(s.blocked for s in still)
    assert [s.designator for s in now if s.blocked] == ["19D"]


@pytest.mark.django_db
def test_a_full_build_does_not_freeze_the_collector(network, monkeypatch):
    frozen = []
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(True))
    reset_network_index()

    refresh_network_index()  # a process with no index builds in full

    assert frozen == []  # only the master freezes, before forking (airline/wsgi.py)
    assert gc.isenabled()


@pytest.mark.django_db
def test_a_patch_that_fails_is_replaced_by_a_full_build(tmp_path, monkeypatch):
    pvd_chs(tmp_path, "a.ssim", (101, 7))
    refresh_network_index()
    pvd_chs(tmp_path, "b.ssim", (102, 8))

    def broken(self, **changes):
        raise RuntimeError("a bug in with_changes")

    monkeypatch.setattr(itineraries.NetworkIndex, "with_changes", broken)

    assert refresh_network_index().version == schedule_version()
    assert departures(first_day()) == [(102, 13)]
