"""The back office at 1,400 pixels wide (the browser's window): the columns staff read
on the legs list, the bookings list and the deliveries list are all in view without
scrolling sideways; a booking's history reads as lines, not JSON; a journey an exchange
replaced says what it was; a flight the airline retimed shows both times in the list."""

from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest

from orders.models import Journey, Order
from tests.browser.conftest import WINDOW, staff_member
from tests.network.factories import FlightLegFactory
from tests.orders import conftest as booking
from tests.orders import test_admin as bookings
from tests.orders.test_exchange import booked
from tests.orders.test_schedule_recheck import reload_schedule
from tests.orders.test_views_contract import paid_exchange
from tests.webhooks.conftest import loopback_allowed, register  # noqa: F401
from webhooks.models import WebhookDelivery

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

network, auth, travel_day, priced = (
    booking.network,
    booking.auth,
    booking.travel_day,
    booking.priced,
)
paid, hook = bookings.paid, bookings.hook

LEGS_COLUMNS = ["capacity", "sold", "held", "ticketed", "load_factor", "status"]
BOOKINGS_COLUMNS = ["seller", "agency_code", "channel", "total", "balance"]
DELIVERIES_COLUMNS = ["status", "attempts", "last_status_code"]


@pytest.fixture
def operations(browser):
    staff_member("Operations", "ops")
    browser.sign_in("ops")
    return browser


def out_of_view(browser, columns: list[str]) -> dict[str, int]:
    """The columns of the list whose heading or any cell ends right of what shows of the
    list (the window's width, or the list's own scrolling box beside the filters), so
    staff would scroll sideways to read it, each with where it ends."""
    assert browser.driver.get_window_size()["width"] == WINDOW[0]
    return browser.driver.execute_script(
        """
        const box = document.querySelector('#changelist .results').getBoundingClientRect();
        const width = Math.min(document.documentElement.clientWidth, Math.ceil(box.right));
        const late = {};
        for (const name of arguments[0]) {
            const cells = document.querySelectorAll(
                `#result_list th.column-${name}, #result_list td.field-${name}`);
            if (!cells.length) { late[name] = -1; continue; }
            for (const cell of cells) {
                const right = Math.ceil(cell.getBoundingClientRect().right);
                if (right > width) { late[name] = right; }
            }
        }
        return late;
        """,
        columns,
    )


def test_the_columns_that_matter_are_in_view_at_1400_pixels(
    operations, hook, paid, network, travel_day
):
    FlightLegFactory(flight_number=1020)
    WebhookDelivery.objects.filter(order=paid).update(attempts=6, last_status_code=404)

    operations.open("/admin/network/flightleg/", "legs")
    assert operations.find_all("#result_list tbody tr")
    assert out_of_view(operations, LEGS_COLUMNS) == {}

    operations.open("/admin/orders/order/", "bookings")
    assert paid.record_locator in operations.text("#result_list tbody")
    assert out_of_view(operations, BOOKINGS_COLUMNS) == {}

    operations.open("/admin/webhooks/webhookdelivery/", "deliveries")
    assert operations.find_all("#result_list tbody tr")
    assert out_of_view(operations, DELIVERIES_COLUMNS) == {}


def test_the_list_shows_a_retimed_flight_as_booked_and_as_it_flies_now(
    operations, hook, paid, network, travel_day, tmp_path
):
    reload_schedule(tmp_path, network, bookings.RETIMED_101)  # 07:00 -> 08:30

    operations.open("/admin/orders/order/", "bookings")

    row = operations.find(f'#result_list input[value="{paid.pk}"]').find_element(
        "xpath", "./ancestor::tr"
    )
    departure = row.find_element("css selector", "td.field-departure").text
    zone = datetime.combine(travel_day, time(7), ZoneInfo("America/New_York")).strftime("%Z")
    assert departure == f"{travel_day.isoformat()} 07:00 → 08:30 {zone}", departure
    assert out_of_view(operations, BOOKINGS_COLUMNS) == {}


def test_the_history_reads_as_lines_and_a_replaced_journey_says_what_it_was(
    operations, api, auth, network, clock
):
    day = network + timedelta(days=10)
    first = booked(api, auth, day)
    order_id = first["order"]["orderId"]
    paid_exchange(api, auth, order_id, day + timedelta(days=1), 101)
    order = Order.objects.get(order_id=order_id)
    replaced = Journey.objects.get(order=order, exchanged=True)

    operations.open(f"/admin/orders/order/{order.pk}/change/", "booking")

    places = [c.text for c in operations.find_all("#journeys-group td.field-place")]
    assert sorted(places) == ["1", "replaced, was journey 1"], places
    assert str(replaced.position) not in places
    history = [c.text for c in operations.find_all("#events-group td.field-what")]
    assert history, operations.html
    assert not any(text.lstrip().startswith(("{", "[")) for text in history), history
    assert not any('"' in text for text in history), history
    exchanged = next(e for e in order.events.order_by("id") if e.detail)
    key = next(iter(exchanged.detail)).replace("_", " ")
    assert any(f"{key}:" in text for text in history), (key, history)
