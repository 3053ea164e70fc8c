"""A worker whose index is behind a schedule load (another node's, or its own before the
background rebuild lands) still shows a flight the database no longer has: pricing and
booking re-read the legs from the database, so it is never priced nor sold; the caller
gets a clean error and nothing is written (DESIGN.md §6; SPEC.md §4.5, §4.7)."""

from datetime import time, timedelta
from io import StringIO

import pytest
from django.core.management import call_command

from airline.network import itineraries
from airline.network.inventory import inventory_sell
from airline.network.itineraries import network_index
from airline.network.models import FlightLeg, LegInventory
from orders.models import Order
from tests.conftest import error_of
from tests.network.ssim_builder import Leg, ssim_file
from tests.offers.conftest import first_day, search_body
from tests.orders.conftest import auth, book, booking_body, network, price_offer

__all__ = ["auth", "network"]  # fixtures

pytestmark = pytest.mark.django_db


@pytest.fixture
def stale(monkeypatch):
    """This worker keeps the index it has: it has not seen any newer version yet."""
    shown = network_index().version
    monkeypatch.setattr(itineraries, "schedule_version", lambda: shown)


def load_without_mx101(tmp_path) -> None:
    """A schedule that keeps only MX102 (CHS-PVD), exactly as the network fixture has it."""
    start = first_day()
    keep = [Leg(102, "CHS", "PVD", time(10, 0), time(12, 5), start, start + timedelta(days=60))]
    (tmp_path / "only102.ssim").write_text(ssim_file(keep))
    call_command("load_schedule", str(tmp_path / "only102.ssim"), stdout=StringIO())


def sold_on(flight_number: int) -> list[int]:
    return list(
        LegInventory.objects.filter(leg__flight_number=flight_number, rank=0)
        .order_by("leg_id", "cabin")
        .values_list("sold", flat=True)
    )


def search(api, auth, day):
    found = api.post("/json/v1/offers", search_body(("PVD", "CHS", day)), format="json", **auth)
    assert found.status_code == 201, found.content
    return found.json()["data"]["offers"]


def mx101(offers):
    return [o for o in offers if o["offerItems"][0]["flight"]["flightNumbers"] == ["MX101"]]


def selection(offer):
    return {"offerId": offer["offerId"], "offerItemIds": [offer["offerItems"][0]["offerItemId"]]}


@pytest.fixture
def day(network):
    return network + timedelta(days=5)


def test_a_deleted_flight_the_index_still_shows_is_not_priced(api, auth, day, stale, tmp_path):
    offer = mx101(search(api, auth, day))[0]
    leg = FlightLeg.objects.get(flight_number=101, flight_date=day)

    load_without_mx101(tmp_path)

    assert not FlightLeg.objects.filter(flight_number=101).exists()
    assert network_index().leg(leg.pk) is not None  # still in this worker's index
    priced = api.post(
        "/json/v1/offers/price",
        {"selections": [selection(offer)], "passengers": [{"type": "ADT"}]},
        format="json",
        **auth,
    )
    error_of(priced, 400, "ERR-3003")
    assert mx101(search(api, auth, day)) == []  # the stale index finds it; no seats to offer


def test_a_deleted_flight_the_index_still_shows_is_not_booked(
    api, auth, day, clock, stale, tmp_path
):
    priced = price_offer(api, auth, day, flight=101)
    sold_before = sold_on(102)

    load_without_mx101(tmp_path)
    response = book(api, auth, booking_body(priced))

    error_of(response, 400, "ERR-4001", path="offerId")
    assert "no longer operates" in response.json()["error"]["description"]
    assert Order.objects.count() == 0
    assert sold_on(102) == sold_before


def test_a_flight_kept_cancelled_for_its_bookings_is_neither_priced_nor_sold(
    api, auth, day, clock, stale, tmp_path
):
    """A dropped flight with sales stays in the database, cancelled, inventory and all:
    the stale index shows it and its class rows still have room."""
    offer = mx101(search(api, auth, day))[0]
    priced = price_offer(api, auth, day, flight=101)
    leg = FlightLeg.objects.get(flight_number=101, flight_date=day)
    inventory_sell(leg_ids=[leg.pk], rbd="Y", seats=1)  # someone else's booking

    load_without_mx101(tmp_path)

    leg.refresh_from_db()
    assert leg.is_cancelled
    assert network_index().leg(leg.pk) is not None  # still in this worker's index
    repriced = api.post(
        "/json/v1/offers/price",
        {"selections": [selection(offer)], "passengers": [{"type": "ADT"}]},
        format="json",
        **auth,
    )
    error_of(repriced, 400, "ERR-3003")
    assert mx101(search(api, auth, day)) == []
    booked = book(api, auth, booking_body(priced))
    error_of(booked, 400, "ERR-4001", path="offerId")
    assert Order.objects.count() == 0
    assert sold_on(101)[0] == 1  # only the earlier sale
