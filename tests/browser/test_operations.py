"""Operations in Chromium: find a booking by surname, cancel a hold and see its seats come
back on the flight page, upload a schedule and confirm its preview."""

from datetime import UTC, time

import pytest

from airline.network.models import FlightLeg, LegInventory, ScheduleLoad
from orders.models import OrderStatus
from tests.browser.conftest import staff_member
from tests.network.test_admin_schedule_upload import RETIMED_101, pvd_chs
from tests.orders import conftest as booking
from tests.orders import test_admin as bookings

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

network, auth, travel_day, priced = (
    booking.network,
    booking.auth,
    booking.travel_day,
    booking.priced,
)
held, paid = bookings.held, bookings.paid


@pytest.fixture
def operations(browser):
    staff_member("Operations", "ops")
    browser.sign_in("ops")
    return browser


def search(browser, words: str, step: str) -> None:
    browser.fill({"q": words})
    browser.submit('#changelist-search input[type="submit"]', step)


def test_find_a_booking_by_surname(operations, held):
    operations.open("/admin/orders/order/", "bookings")

    search(operations, "lovel", "found-by-surname")

    assert operations.text("#result_list tbody").count(held.record_locator) == 1
    operations.find(f'#result_list a[href^="/admin/orders/order/{held.pk}/change/"]').click()
    operations.shot("booking")
    assert operations.path.startswith(f"/admin/orders/order/{held.pk}/change/")
    assert "Lovelace" in operations.text("#content-main")
    operations.open("/admin/orders/order/", "bookings-again")
    search(operations, "nobody", "not-found")
    assert operations.find_all("#result_list") == []


def test_cancel_a_hold_and_see_its_seats_come_back(operations, held, travel_day):
    leg = FlightLeg.objects.get(flight_number=101, flight_date=travel_day)
    flight_page = f"/admin/network/flightleg/{leg.pk}/change/"
    operations.open(flight_page, "flight-booked")
    assert operations.text("#cabin-Y-sold") == "3 / 76"
    assert held.record_locator in operations.text("#flight-passengers")

    operations.open("/admin/orders/order/", "bookings")
    operations.run_action("cancel_unpaid_hold", [held.pk], "hold-cancelled")

    assert operations.messages() == [
        f"1 unpaid hold(s) cancelled ({held.record_locator}); their seats are free."
    ]
    held.refresh_from_db()
    assert held.status == OrderStatus.CANCELLED
    assert LegInventory.objects.get(leg=leg, rank=0, cabin="Y").sold == 0
    operations.open(flight_page, "flight-free-again")
    assert operations.text("#cabin-Y-sold") == "0 / 76"
    assert "No booking holds a seat on this flight." in operations.text("#flight-passengers")


def test_upload_a_schedule_and_confirm_its_preview(operations, held, network, tmp_path):
    ssim = tmp_path / "w27.ssim"
    ssim.write_text(pvd_chs(network, flight_101=RETIMED_101, add_103=True))
    loads = ScheduleLoad.objects.count()

    operations.open("/admin/network/scheduleload/", "schedule-loads")
    operations.find("#upload-schedule").click()
    operations.shot("upload")
    operations.find('input[name="file"]').send_keys(str(ssim))
    operations.submit("#preview-upload", "preview")

    assert operations.text("#count-added") == "61"
    assert operations.text("#count-retimed") == "61"
    assert operations.text("#count-removed") == "244"
    assert operations.text("#count-bookings") == "1"
    assert held.record_locator in operations.text("#preview-bookings")
    assert ScheduleLoad.objects.count() == loads  # nothing loaded yet

    operations.submit("#confirm-load", "loaded")

    load = ScheduleLoad.objects.first()
    assert ScheduleLoad.objects.count() == loads + 1
    assert operations.path == f"/admin/network/scheduleload/{load.pk}/change/"
    assert operations.messages()[0].startswith(f"Loaded w27.ssim (version {load.pk})")
    retimed = FlightLeg.objects.filter(flight_number=101).first()
    assert retimed.departs_at.astimezone(UTC).time() == time(13, 30)  # 08:30 EST
