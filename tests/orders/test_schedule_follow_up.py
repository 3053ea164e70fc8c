"""The bookings on flights a schedule load changed are told after the load commits
(airline/network/follow_up.py): the load returns at its commit, each booking then gets
its airline change and webhook event exactly once, in batches, by the worker or
`load_schedule --wait`, and a batch that fails is taken again whole."""

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client

from airline.network import follow_up as follow_ups
from airline.network.follow_up import bookings_untold, follow_up_batch
from airline.network.models import FlightLeg, ScheduleFollowUp, ScheduleLoad
from orders.models import AirlineChange, Order, OrderEvent
from orders.servicing.airline_changes import Bookings
from tests.orders.test_airline_changes import (
    RETIMED_101,
    booked,
    reload,
    ssim_again,
    view_of,
)

pytestmark = pytest.mark.django_db

DETECTED = OrderEvent.Kind.AIRLINE_CHANGE_DETECTED


def load(path, *args) -> str:
    out = StringIO()
    call_command("load_schedule", str(path), *args, stdout=out)
    return out.getvalue()


def told_once(order_ids) -> None:
    """Each order has exactly one airline change and one detection event."""
    for order_id in order_ids:
        order = Order.objects.get(order_id=order_id)
        assert AirlineChange.objects.filter(order=order).count() == 1, order_id
        assert OrderEvent.objects.filter(order=order, kind=DETECTED).count() == 1, order_id


@pytest.fixture
def three_bookings(api, auth, network):
    day = network + timedelta(days=3)
    return [
        booked(api, auth, day + timedelta(days=n), flight=101)["order"]["orderId"] for n in range(3)
    ]


def test_a_load_returns_at_its_commit_and_its_bookings_are_told_in_batches(
    api, auth, network, three_bookings, tmp_path, monkeypatch
):
    monkeypatch.setattr(follow_ups, "FOLLOW_UP_BATCH", 2)
    leg = FlightLeg.objects.filter(flight_number=101).first()

    said = load(ssim_again(tmp_path, network, f101=RETIMED_101))

    follow_up = ScheduleLoad.objects.first().follow_up
    assert (follow_up.total, follow_up.done, follow_up.finished_at) == (3, 0, None)
    assert "3 bookings on the changed flights are being told" in said
    assert not AirlineChange.objects.exists()  # the flights moved; nobody told yet
    assert bookings_untold(None).count() == 3  # the metrics gauge
    assert FlightLeg.objects.get(pk=leg.pk).departs_at == leg.departs_at + timedelta(minutes=90)

    first = follow_up_batch()
    assert (first.done, first.changes, first.finished_at) == (2, 2, None)
    assert AirlineChange.objects.count() == 2
    assert bookings_untold(None).count() == 1
    second = follow_up_batch()
    assert (second.done, second.changes) == (3, 3)
    assert second.finished_at is not None
    assert follow_up_batch() is None
    assert bookings_untold(None).count() == 0

    told_once(three_bookings)
    view = view_of(api, auth, three_bookings[0])
    assert view["airlineInitiatedChanges"][0]["reasons"] == ["RETIMED"]


def test_a_batch_that_fails_is_rolled_back_whole_and_taken_again(
    network, three_bookings, tmp_path, monkeypatch
):
    monkeypatch.setattr(follow_ups, "FOLLOW_UP_BATCH", 2)
    load(ssim_again(tmp_path, network, f101=RETIMED_101))
    telling = Bookings.changed
    calls = []

    def dies_on_the_second_batch(self, holder_ids, *, now):
        calls.append(list(holder_ids))
        told = telling(self, calls[-1], now=now)
        if len(calls) == 2:
            raise RuntimeError("the worker died here")
        return told

    monkeypatch.setattr(Bookings, "changed", dies_on_the_second_batch)
    follow_up_batch()
    with pytest.raises(RuntimeError):
        follow_up_batch()

    follow_up = ScheduleFollowUp.objects.get()
    assert (follow_up.done, follow_up.finished_at) == (2, None)
    assert AirlineChange.objects.count() == 2  # the second batch's change rolled back
    monkeypatch.setattr(Bookings, "changed", telling)
    follow_up_batch()
    told_once(three_bookings)
    assert ScheduleFollowUp.objects.get().finished_at is not None


def test_a_booking_told_by_two_loads_with_nothing_new_hears_it_once(api, auth, network, tmp_path):
    day = network + timedelta(days=3)
    first = booked(api, auth, day, flight=101)["order"]["orderId"]
    back = booked(api, auth, day + timedelta(days=1), flight=102)["order"]["orderId"]
    # Two loads before anyone is told: the first moves MX101, the second MX102 as well.
    load(ssim_again(tmp_path, network, f101=RETIMED_101))
    load(ssim_again(tmp_path, network, f101=RETIMED_101, f102=RETIMED_101))
    assert ScheduleFollowUp.objects.count() == 2

    call_command("run_worker", "--once", stdout=StringIO())
    while follow_up_batch() is not None:
        pass

    told_once([first, back])


def test_a_flight_moved_and_moved_back_before_its_bookings_are_told_changes_nothing(
    network, three_bookings, tmp_path
):
    load(ssim_again(tmp_path, network, f101=RETIMED_101))
    load(ssim_again(tmp_path, network))  # as it was
    while follow_up_batch() is not None:
        pass

    assert ScheduleFollowUp.objects.filter(finished_at__isnull=True).count() == 0
    assert not AirlineChange.objects.exists()


def test_wait_tells_them_before_it_returns_and_load_status_says_so(
    network, three_bookings, tmp_path, admin_client
):
    said = load(ssim_again(tmp_path, network, f101=RETIMED_101), "--wait")

    assert "3 bookings on the changed flights told; 3 airline changes recorded" in said
    told_once(three_bookings)
    version = ScheduleLoad.objects.first().pk
    status = StringIO()
    call_command("load_status", str(version), stdout=status)
    assert "3 of 3 told (finished); 3 airline changes recorded" in status.getvalue()
    page = admin_client.get(f"/admin/network/scheduleload/{version}/change/")
    assert "3 of 3 told (finished)" in page.content.decode()


def test_load_status_says_what_is_left_while_the_worker_is_at_it(
    network, three_bookings, tmp_path, monkeypatch
):
    monkeypatch.setattr(follow_ups, "FOLLOW_UP_BATCH", 1)
    load(ssim_again(tmp_path, network, f101=RETIMED_101))
    follow_up_batch()

    status = StringIO()
    call_command("load_status", stdout=status)
    assert "1 of 3 told (running)" in status.getvalue()
    staff = Client()
    assert staff.get("/admin/network/scheduleload/").status_code == 302  # staff only


def test_a_load_that_changes_no_booked_flight_has_nothing_to_tell(network, tmp_path):
    load(ssim_again(tmp_path, network, f101=RETIMED_101))

    follow_up = ScheduleLoad.objects.first().follow_up
    assert (follow_up.total, follow_up.done) == (0, 0)
    assert follow_up.finished_at is not None
    assert follow_up_batch() is None


def test_reload_helper_tells_before_it_returns(api, auth, network, tmp_path):
    order_id = booked(api, auth, network + timedelta(days=3), flight=101)["order"]["orderId"]
    reload(tmp_path, network, f101=RETIMED_101)
    told_once([order_id])
