"""A day of operations in Chromium (issue 27): legs found as staff write flights, a
booking whose flight the airline retimed flagged on its page and in the list, the
webhook deliveries that told the agency, and "retry now" for the pending ones."""

from datetime import UTC, datetime, timedelta

import pytest
from django.db.models import Q

from airline.network.models import FlightLeg
from tests.browser.conftest import staff_member
from tests.browser.test_operations import search
from tests.network.factories import FlightLegFactory
from tests.orders import conftest as booking
from tests.orders import test_admin as bookings
from tests.orders.test_schedule_recheck import reload_schedule
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
DETECTED = "order.airline_initiated_change_detected"
LEGS = "/admin/network/flightleg/"
CHANGED = "SCHEDULE CHANGED by the airline, waiting for the seller"


@pytest.fixture
def operations(browser):
    staff_member("Operations", "ops")
    browser.sign_in("ops")
    return browser


def flights_listed(browser) -> list[str]:
    return [cell.text for cell in browser.find_all("#result_list tbody .field-flight")]


def legs_counted(browser) -> int:
    """The search's own count ("61 results")."""
    return int(browser.text("#changelist-search .quiet").split()[0])


def test_legs_are_found_as_staff_write_flights(operations, network, travel_day):
    FlightLegFactory(flight_number=1020)  # must not answer "102"
    operations.open(LEGS, "legs")
    day = travel_day.isoformat()

    for words, step in (("MX102", "mx102"), ("MX 102", "mx-space-102"), ("102", "bare-102")):
        operations.open(LEGS, f"legs-{step}")
        search(operations, words, f"found-{step}")
        assert set(flights_listed(operations)) == {"MX102"}, words
        assert legs_counted(operations) == FlightLeg.objects.filter(flight_number=102).count()

    search(operations, f"MX102 {day}", "found-mx102-on-a-day")
    assert flights_listed(operations) == ["MX102"]
    [row] = operations.find_all("#result_list tbody tr")
    assert day in row.find_element("css selector", ".field-flight_date").text or (
        travel_day.strftime("%b. %-d, %Y") in row.text
    )

    search(operations, "PVD", "found-pvd")
    # The first page (by departure): the rest are counted.
    assert set(flights_listed(operations)) <= {"MX101", "MX102", "MX501", "MX701", "MX1020"}
    assert legs_counted(operations) == (
        FlightLeg.objects.filter(Q(origin="PVD") | Q(destination="PVD")).count()
    )

    search(operations, "PVD-CHS", "found-pvd-chs")
    assert {"MX101", "MX501"} <= set(flights_listed(operations)) <= {"MX101", "MX501", "MX1020"}
    assert legs_counted(operations) == (
        FlightLeg.objects.filter(origin="PVD", destination="CHS").count()
    )
    for cell in operations.find_all("#result_list tbody .field-from_station"):
        assert cell.text == "PVD"


def test_a_retimed_flight_is_flagged_on_the_booking_and_in_the_list(
    operations, hook, paid, network, tmp_path
):
    reload_schedule(tmp_path, network, bookings.RETIMED_101)  # 90 minutes later

    operations.open("/admin/orders/order/", "bookings")
    row = operations.find(f'#result_list input[value="{paid.pk}"]').find_element(
        "xpath", "./ancestor::tr"
    )
    assert "CONFIRMED, schedule changed by the airline" in row.text
    operations.open("/admin/orders/order/?schedule_changed=yes", "bookings-changed")
    assert paid.record_locator in operations.text("#result_list tbody")

    operations.open(f"/admin/orders/order/{paid.pk}/change/", "booking")
    states = [c.text for c in operations.find_all("#segments-group td.field-flight_status")]
    assert sorted(states) == [
        "As scheduled",
        "⚠ SCHEDULE CHANGED by the airline, waiting for the seller",
    ]
    journeys = [c.text for c in operations.find_all("#journeys-group td.field-flight_status")]
    assert len(journeys) == 2
    assert f"⚠ {CHANGED}" in journeys


def test_the_booking_lists_the_deliveries_that_told_the_agency(
    operations, hook, paid, network, tmp_path
):
    reload_schedule(tmp_path, network, bookings.RETIMED_101)
    told = WebhookDelivery.objects.get(order=paid, event__type=DETECTED)
    WebhookDelivery.objects.filter(pk=told.pk).update(attempts=3, last_status_code=503)

    operations.open(f"/admin/orders/order/{paid.pk}/change/", "booking")

    rows = [r.text for r in operations.find_all("#deliveries tbody tr")]
    assert len(rows) == WebhookDelivery.objects.filter(order=paid).count() >= 3
    endpoint = f"{told.endpoint.seller.code} {told.endpoint.url}"
    assert any(
        r.startswith(f"{endpoint} ({told.endpoint.webhook_id}) {DETECTED}")
        and "not yet: 3 attempts, last 503 PENDING 3 503" in r
        for r in rows
    ), rows
    change = operations.find("#airline_changes-group td.field-sellers_told")
    assert "not yet: 3 attempts, last 503" in change.text, change.text
    change.find_element("link text", "all").click()
    operations.shot("deliveries-of-the-change")
    assert operations.path.startswith("/admin/webhooks/webhookdelivery/?")
    listed = operations.find_all('#result_list input[name="_selected_action"]')
    assert [int(box.get_attribute("value")) for box in listed] == [told.pk]


def test_retry_now_makes_a_failing_delivery_due_at_once(operations, hook, paid):
    backed_off = datetime.now(tz=UTC) + timedelta(hours=2)
    delivery = WebhookDelivery.objects.filter(order=paid).first()
    WebhookDelivery.objects.filter(order=paid).update(
        attempts=5, last_status_code=500, next_attempt_at=backed_off
    )

    operations.open("/admin/webhooks/webhookdelivery/?status__exact=PENDING&last_code=5xx", "due")
    operations.run_action("retry_now", [delivery.pk], "retried")

    assert operations.messages() == [
        "1 pending deliver(ies) due now; the worker sends them at its next poll."
    ]
    delivery.refresh_from_db()
    assert delivery.next_attempt_at <= datetime.now(tz=UTC)
    assert delivery.attempts == 5  # one more attempt, not a new window
    others = WebhookDelivery.objects.filter(order=paid).exclude(pk=delivery.pk)
    assert set(others.values_list("next_attempt_at", flat=True)) <= {backed_off}
