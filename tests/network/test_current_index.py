"""No worker prices, books, reshops or sells a seat from a schedule older than the
database's (README "Process layout"; DESIGN.md §6): with production's setting, a worker
whose index is behind the network version (forked from a master that built it before a
load, or whose poller has not patched the load in yet) answers those 503 ERR-9000 with
Retry-After, never at the old times, and answers them at the new times once its poller
has patched; it waits for a patch under way, not for a full build; a worker that starts
behind patches at once without holding up /health; an order view shows an aircraft swap
on the next retrieve, whatever the worker's index."""

import threading
import time as clock_time
from datetime import time, timedelta
from io import StringIO

import pytest
from django.core.management import call_command

from airline.network import itineraries, models
from airline.network.itineraries import (
    NetworkIndexLoading,
    follow_network_changes,
    network_index,
    network_version_served,
    refresh_network_index,
    reset_network_index,
    schedule_version,
)
from orders.models import Order, Service
from tests.conftest import error_of, statements_sent
from tests.ndc.conftest import ndc_error_of, offer_price, post
from tests.network.ssim_builder import Leg, ssim_file
from tests.offers.conftest import first_day, search_body
from tests.offers.test_live_index import in_own_thread
from tests.orders.conftest import HOLD, auth, book, booking_body, network, price_offer
from tests.orders.test_airline_changes import RETIMED_101, reload
from tests.orders.test_exchange import accept as accept_reshop
from tests.orders.test_exchange import booked, itinerary, quote, reshop
from tests.orders.test_first_booking_ancillaries import offer_ancillaries, seat_for
from tests.orders.test_order_ancillaries import change, open_seat, seat_entry, seats
from tests.orders.test_seat_blocks import aircraft_in_json, aircraft_in_ndc

__all__ = ["auth", "network"]  # fixtures

QUICK = 0.5  # seconds: "at once", far above a real answer's few ms on a busy machine


def refused(response) -> None:
    """503 ERR-9000 with Retry-After: the client retries in a moment."""
    error_of(response, 503, "ERR-9000")
    assert response["Retry-After"] == "1"


@pytest.fixture
def behind(settings, monkeypatch, network):
    """Production's setting, in the test's transaction: this process's index is built
    (what the master does before forking), and no poller runs: the test is the poller
    (refresh_network_index), since a poller's own connection could not see the test's
    data. A load the test makes leaves the index behind until it says so. The bound a
    sale waits for a patch is made short: with no poller, none comes."""
    settings.NETWORK_REBUILD_IN_BACKGROUND = True
    monkeypatch.setattr(itineraries._IndexHolder, "follow_in_background", lambda self: None)
    monkeypatch.setattr(itineraries, "FRESH_WAIT_SECONDS", 0.01)
    refresh_network_index()
    return network


def retime_101(tmp_path, start) -> None:
    """A schedule load moving MX101 from 07:00 to 08:30 (its legs keep their ids)."""
    before = schedule_version()
    reload(tmp_path, start, f101=RETIMED_101)
    assert schedule_version() > network_index().version == before  # the worker is behind


def search_101(api, auth, day) -> dict:
    found = api.post("/json/v1/offers", search_body(("PVD", "CHS", day)), format="json", **auth)
    assert found.status_code == 201, found.content
    return next(
        o
        for o in found.json()["data"]["offers"]
        if o["offerItems"][0]["flight"]["flightNumbers"] == ["MX101"]
    )


def price(api, auth, offer):
    selection = {
        "offerId": offer["offerId"],
        "offerItemIds": [offer["offerItems"][0]["offerItemId"]],
    }
    body = {"selections": [selection], "passengers": [{"type": "ADT"}]}
    return api.post("/json/v1/offers/price", body, format="json", **auth)


def departs(priced: dict) -> str:
    [journey] = priced["journeys"]
    return journey["departureDateTime"][11:16]


@pytest.mark.django_db
def test_price_offer_on_an_index_older_than_the_database_is_refused_in_json_and_ndc(
    api, auth, behind, tmp_path
):
    day = behind + timedelta(days=5)
    offer = search_101(api, auth, day)
    assert departs(price(api, auth, offer).json()["data"]) == "07:00"

    retime_101(tmp_path, behind)

    refused(price(api, auth, offer))  # not priced at 07:00
    selected = (offer["offerId"], offer["offerItems"][0]["offerItemId"])
    ndc = post(api, "OfferPrice", offer_price(selected, passengers=[("ADT-1", "ADT")]), auth)
    ndc_error_of(ndc, 503, "ERR-9000", root="IATA_OfferPriceRS")
    assert search_101(api, auth, day)  # a search answers from the index it has


@pytest.mark.django_db
def test_create_order_on_an_index_older_than_the_database_is_refused(
    api, auth, behind, tmp_path, clock
):
    priced = price_offer(api, auth, behind + timedelta(days=5), flight=101)

    retime_101(tmp_path, behind)
    response = book(api, auth, booking_body(priced))

    refused(response)
    assert not Order.objects.exists()


@pytest.mark.django_db
def test_once_the_poller_patched_the_load_in_price_and_book_answer_at_the_new_times(
    api, auth, behind, tmp_path, clock
):
    day = behind + timedelta(days=5)
    offer = search_101(api, auth, day)
    retime_101(tmp_path, behind)
    refused(price(api, auth, offer))

    refresh_network_index()  # the poller's patch
    priced = price(api, auth, offer)
    assert priced.status_code == 201, priced.content
    assert departs(priced.json()["data"]) == "08:30"
    created = book(api, auth, booking_body(priced.json()["data"]))

    assert created.status_code == 201, created.content
    [journey] = created.json()["data"]["journeys"]
    assert journey["departureDateTime"][11:16] == "08:30"


@pytest.mark.django_db
def test_reshop_quote_and_accept_on_an_index_older_than_the_database_are_refused(
    api, auth, behind, tmp_path, clock
):
    day = behind + timedelta(days=10)
    order_id = booked(api, auth, day, payment=HOLD)["order"]["orderId"]
    offers = reshop(api, auth, order_id, itinerary(day + timedelta(days=1))).json()["data"]
    quoted = quote(api, auth, order_id, offers["offers"][0])
    assert quoted.status_code == 200, quoted.content

    retime_101(tmp_path, behind)
    version = Order.objects.get(order_id=order_id).version  # its airline change recorded

    refused(reshop(api, auth, order_id, itinerary(day + timedelta(days=1))))
    refused(quote(api, auth, order_id, offers["offers"][0]))
    refused(accept_reshop(api, auth, order_id, quoted.json()["data"]["offer"]))
    assert Order.objects.get(order_id=order_id).version == version
    refresh_network_index()
    assert reshop(api, auth, order_id, itinerary(day + timedelta(days=1))).status_code == 200


@pytest.mark.django_db
def test_a_seat_sale_on_an_index_older_than_the_database_is_refused(
    api, auth, behind, tmp_path, clock
):
    hold = book(api, auth, booking_body(price_offer(api, auth, behind + timedelta(days=5))))
    order_id = hold.json()["data"]["order"]["orderId"]
    seat_data = seats(api, auth, order_id).json()["data"]
    unit, row = open_seat(seat_data["legSeatMaps"][0], hold.json()["data"]["pax"][0]["paxId"])

    retime_101(tmp_path, behind)

    refused(change(api, auth, order_id, {"changes": [seat_entry(seat_data, unit, row)]}))
    assert not Service.objects.filter(order__order_id=order_id, seat_row__isnull=False).exists()


@pytest.mark.django_db
def test_a_seat_sale_reads_the_network_version_once(api, auth, behind, clock):
    """A booking with a seat, and a seat bought on a hold, check their seats on the index
    of the version the request has already read: one read each, not one a check."""
    priced = price_offer(api, auth, behind + timedelta(days=5))
    seat_data = offer_ancillaries(api, auth, priced, "seats")
    unit, row = open_seat(seat_data["legSeatMaps"][0], "ADT-1")
    body = booking_body(priced, ancillaries=[seat_for(seat_data, unit, row)])
    with statements_sent() as sent:
        hold = book(api, auth, body)
    assert hold.status_code == 201, hold.content
    assert len([sql for sql in sent if "networkversion" in sql]) == 1

    order = hold.json()["data"]
    order_id = order["order"]["orderId"]
    seat_data = seats(api, auth, order_id).json()["data"]
    unit, row = open_seat(seat_data["legSeatMaps"][0], order["pax"][1]["paxId"])
    with statements_sent() as sent:
        changed = change(api, auth, order_id, {"changes": [seat_entry(seat_data, unit, row)]})
    assert changed.status_code == 200, changed.content
    assert len([sql for sql in sent if "networkversion" in sql]) == 1


@pytest.mark.django_db
def test_an_aircraft_swap_shows_on_retrieve_before_the_worker_patched_its_index(
    api, auth, behind, tmp_path, clock
):
    day = behind + timedelta(days=5)
    order_id = booked(api, auth, day, flight=501, payment=HOLD)["order"]["orderId"]
    assert aircraft_in_json(api, auth, order_id) == ["320"]  # rendered and cached
    assert aircraft_in_ndc(api, auth, order_id) == ["320"]

    reload(tmp_path, behind, f501={"aircraft": "E75", "configuration": "Y76"})

    assert network_version_served() < schedule_version()  # no patch yet
    assert aircraft_in_json(api, auth, order_id) == ["E75"]
    assert aircraft_in_ndc(api, auth, order_id) == ["E75"]


# --- with the poller: these tests commit what its own connection must see ---------------

committed = pytest.mark.django_db(transaction=True, serialized_rollback=True)


@pytest.fixture
def fresh(settings):
    settings.NETWORK_REBUILD_IN_BACKGROUND = True
    reset_network_index()
    yield
    reset_network_index()  # also stops the poller


def pvd_chs(tmp_path, name: str, hour: int) -> None:
    """Load a schedule of MX101 PVD-CHS at `hour` local for a week."""
    day = first_day()
    legs = [Leg(101, "PVD", "CHS", time(hour), time(hour + 2), day, day + timedelta(days=6))]
    (tmp_path / name).write_text(ssim_file(legs))
    call_command("load_schedule", str(tmp_path / name), stdout=StringIO())


def departures() -> list[int]:
    """UTC departure hours of this process's MX101 journeys on the first day."""
    return [j.departs_at.hour for j in network_index().journeys("PVD", "CHS", first_day())]


@pytest.fixture
def held_patch(monkeypatch):
    """The poller's patch starts (`started` is set) and waits for the test's `release`."""
    started, release = threading.Event(), threading.Event()
    real = itineraries._patched

    def held(index, version):
        started.set()
        assert release.wait(timeout=30), "the test never released the patch"
        return real(index, version)

    monkeypatch.setattr(itineraries, "_patched", held)
    yield started, release
    release.set()


@committed
def test_a_sale_waits_for_a_patch_under_way_and_answers_from_it(
    tmp_path, fresh, monkeypatch, held_patch
):
    started, release = held_patch
    monkeypatch.setattr(itineraries, "FRESH_WAIT_SECONDS", 30)  # whatever the machine
    pvd_chs(tmp_path, "a.ssim", 7)
    in_own_thread(refresh_network_index)  # the master's index
    pvd_chs(tmp_path, "b.ssim", 9)  # a load the worker has not patched in
    answered = {}
    sale = threading.Thread(target=lambda: answered.update(index=network_index(current=True)))

    sale.start()  # starts the poller too, whose patch is held
    assert started.wait(timeout=10)
    release.set()
    sale.join(timeout=30)

    assert answered["index"].version == schedule_version()
    assert departures() == [14]  # 09:00 in Providence


@committed
def test_a_sale_does_not_wait_for_a_full_build(tmp_path, fresh, monkeypatch):
    monkeypatch.setattr(itineraries, "FRESH_WAIT_SECONDS", 30)
    pvd_chs(tmp_path, "a.ssim", 7)
    in_own_thread(refresh_network_index)
    monkeypatch.setattr(models, "CHANGE_LOG_MAX_LEGS", 0)  # the next load is logged `full`
    pvd_chs(tmp_path, "b.ssim", 9)
    building, release = threading.Event(), threading.Event()
    real = itineraries.build_index

    def held(version):
        building.set()
        assert release.wait(timeout=30)
        return real(version)

    monkeypatch.setattr(itineraries, "build_index", held)
    try:
        started = clock_time.monotonic()
        with pytest.raises(NetworkIndexLoading):
            network_index(current=True)
        assert clock_time.monotonic() - started < QUICK
        assert building.is_set()
        assert departures() == [12]  # searches keep the old index meanwhile
    finally:
        release.set()


@committed
def test_a_worker_started_behind_the_database_patches_at_once_without_holding_up_health(
    api, tmp_path, fresh, monkeypatch, held_patch
):
    """What post_worker_init does in a worker forked after a load (gunicorn.conf.py)."""
    started, release = held_patch
    monkeypatch.setattr(itineraries, "FRESH_WAIT_SECONDS", 30)
    pvd_chs(tmp_path, "a.ssim", 7)
    in_own_thread(refresh_network_index)  # the master's index, inherited at the fork
    pvd_chs(tmp_path, "b.ssim", 9)

    began = clock_time.monotonic()
    follow_network_changes()
    health = api.get("/health")
    took = clock_time.monotonic() - began

    assert started.wait(timeout=10)  # the poller's first poll: patching, unasked
    assert (health.status_code, took < QUICK) == (200, True)
    release.set()
    assert caught_up()
    assert departures() == [14]


def caught_up() -> bool:
    """This process's index reaches the database's version (its poller's work), within
    a generous bound."""
    pause = threading.Event()
    for _ in range(1000):
        if network_version_served() == schedule_version():
            return True
        pause.wait(0.01)  # waiting for the poller's thread, not timing behaviour
    return False
