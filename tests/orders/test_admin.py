"""Bookings in the back office: read-only, with one action (DESIGN.md §10)."""

import re
from datetime import datetime, time, timedelta
from io import StringIO
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.management import call_command

from airline.network.models import LegInventory
from orders.models import Order, OrderStatus, Segment, Service
from tests.network.test_admin import djangos_rows
from tests.offers.conftest import search_body
from tests.orders.conftest import CARD, book, booking_body, price_offer
from tests.orders.test_order_ancillaries import open_seat, seat_entry
from tests.orders.test_schedule_recheck import SAME_101, reload_schedule
from tests.webhooks.conftest import loopback_allowed, register  # noqa: F401
from webhooks.models import WebhookDelivery

pytestmark = pytest.mark.django_db

CHANGELIST = "/admin/orders/order/"
RETIMED_101 = {"departs": time(8, 30), "arrives": time(10, 35)}  # 90 minutes later


@pytest.fixture
def hook(api, auth, loopback_allowed):  # noqa: F811
    """A webhook endpoint of the seller's: nothing listens there, deliveries stay pending."""
    response = register(api, auth, "http://127.0.0.1:9/hooks")
    assert response.status_code == 201, response.content


@pytest.fixture
def held(api, auth, priced):
    """An unpaid hold of two adults and a child, PVD-CHS and back."""
    response = book(api, auth, booking_body(priced))
    assert response.status_code == 201, response.content
    return Order.objects.get(order_id=response.json()["data"]["order"]["orderId"])


@pytest.fixture
def paid(api, auth, travel_day, clock):
    """The same party on the same days, paid by card: a payment row and e-tickets."""
    priced = price_offer(api, auth, travel_day, back=travel_day + timedelta(days=7))
    response = book(api, auth, booking_body(priced, payment=CARD))
    assert response.status_code == 201, response.content
    return Order.objects.get(order_id=response.json()["data"]["order"]["orderId"])


def seats_sold() -> int:
    return sum(LegInventory.objects.filter(rank=0).values_list("sold", flat=True))


def cancel(client, *orders):
    return client.post(
        CHANGELIST,
        {"action": "cancel_unpaid_hold", "_selected_action": [o.pk for o in orders]},
        follow=True,
    )


def test_the_list_shows_bookings_with_their_balance(admin_client, held, paid):
    page = admin_client.get(CHANGELIST)

    assert page.status_code == 200
    text = page.content.decode()
    for order in (held, paid):
        assert order.record_locator in text
    assert str(held.total) in text  # the hold's balance is its total
    assert "ACMEAGT" in text


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"q": "lovelace"}, {"held", "paid"}),
        ({"status__exact": "ONHOLD"}, {"held"}),
        ({"channel__exact": "JSON"}, {"held", "paid"}),
        ({"channel__exact": "IMPORT"}, set()),
    ],
)
def test_search_and_filters(admin_client, held, paid, query, expected):
    text = admin_client.get(CHANGELIST, query).content.decode()

    shown = {name for name, o in (("held", held), ("paid", paid)) if o.record_locator in text}
    assert shown == expected


@pytest.mark.parametrize(
    "query",
    [{}, {"o": "-5.1", "status__exact": "CONFIRMED"}, {"q": "PVD-CHS", "schedule_changed": "yes"}],
)
def test_the_bookings_list_writes_the_rows_django_would(
    admin_client, hook, held, paid, network, travel_day, tmp_path, query
):
    # OrderAdmin's rows are written in one pass (airline.backoffice_lists.OnePassRows): the same
    # bytes as Django's items_for_result, checkbox, flags and retimed departure included.
    reload_schedule(tmp_path, network, RETIMED_101)

    page = admin_client.get(CHANGELIST, query)

    changelist = page.context["cl"]
    assert changelist.results_table is not None
    written = [row[0] for row in changelist.results_table["results"]]
    assert written == djangos_rows(changelist)
    assert len(written) == (2 if "o" not in query else 1)
    text = page.content.decode()
    for row in written:
        assert f"<tr>{row}</tr>" in text
    paid_row = next(row for row in written if f'value="{paid.pk}"' in row)
    zone = datetime.combine(travel_day, time(7), ZoneInfo("America/New_York")).strftime("%Z")
    assert f"{travel_day} 07:00 → 08:30 {zone}</td>" in paid_row


def test_search_by_locator_and_order_id(admin_client, held, paid):
    by_locator = admin_client.get(CHANGELIST, {"q": held.record_locator.lower()})
    by_id = admin_client.get(CHANGELIST, {"q": paid.order_id})

    assert held.record_locator in by_locator.content.decode()
    assert paid.record_locator not in by_locator.content.decode()
    assert paid.record_locator in by_id.content.decode()
    assert held.record_locator not in by_id.content.decode()


def test_the_booking_page_shows_everything_and_no_card_number(admin_client, paid):
    page = admin_client.get(f"{CHANGELIST}{paid.pk}/change/")

    assert page.status_code == 200
    text = page.content.decode()
    for expected in ("Lovelace", "Babbage", "ada@example.com", "MX101", "PVD", "created"):
        assert expected in text, expected
    for ticket in paid.tickets.all():
        assert ticket.number in text
    assert "VI ************1111 exp 1230" in text
    assert "4111111111111111" not in text
    # Read-only: no form to save, nothing to add or delete.
    assert 'name="_save"' not in text
    assert "/delete/" not in text


def test_the_booking_page_leaves_out_the_parts_a_booking_has_none_of(
    admin_client, held, paid, django_assert_max_num_queries
):
    # The inline groups by their formset prefix (the relation's name).
    def groups(order) -> set[str]:
        text = admin_client.get(f"{CHANGELIST}{order.pk}/change/").content.decode()
        return {
            name
            for name in ("passengers", "journeys", "segments", "items", "payments", "tickets")
            if f'id="{name}-group"' in text
        }

    # A hold has passengers and flights, no payment and no ticket yet.
    assert groups(held) == {"passengers", "journeys", "segments", "items"}
    assert groups(paid) == {"passengers", "journeys", "segments", "items", "payments", "tickets"}
    with django_assert_max_num_queries(30):
        assert admin_client.get(f"{CHANGELIST}{held.pk}/change/").status_code == 200


def test_the_booking_page_shows_its_seats_and_services(admin_client, api, auth, held):
    order_id = held.order_id
    seat_data = api.post(f"/json/v1/orders/{order_id}/seats", format="json", **auth).json()["data"]
    ada = held.passengers.order_by("position").first()
    unit, price = open_seat(seat_data["legSeatMaps"][0], ada.ref)
    changed = api.patch(
        f"/json/v1/orders/{order_id}",
        {"changes": [seat_entry(seat_data, unit, price)]},
        format="json",
        **auth,
    )
    assert changed.status_code == 200, changed.content
    [service] = Service.objects.filter(order=held)

    page = admin_client.get(f"{CHANGELIST}{held.pk}/change/")

    assert page.status_code == 200
    text = page.content.decode()
    assert "Seats and services" in text
    for expected in (
        service.ref,
        "STST",
        "Standard seat",
        f"{unit['designator']} PVD-CHS",
        str(ada),
        str(service.segment),
        str(service.amount),
        str(service.tax),
        service.get_status_display(),
    ):
        assert expected in text, expected


def test_bookings_cannot_be_added_changed_or_deleted(admin_client, held):
    assert admin_client.get(f"{CHANGELIST}add/").status_code == 403
    assert admin_client.get(f"{CHANGELIST}{held.pk}/delete/").status_code == 403
    admin_client.post(f"{CHANGELIST}{held.pk}/change/", {"status": "CONFIRMED"})
    held.refresh_from_db()
    assert held.status == OrderStatus.ONHOLD


def test_the_action_cancels_an_unpaid_hold_and_frees_its_seats(admin_client, held, paid):
    with_both = seats_sold()

    response = cancel(admin_client, held, paid)

    assert shown(response) == [
        ("success", f"1 unpaid hold(s) cancelled ({held.record_locator}); their seats are free."),
        (
            "warning",
            "1 selected booking(s) were not unpaid holds and were left as they were: "
            f"{paid.record_locator}.",
        ),
    ]
    held.refresh_from_db()
    paid.refresh_from_db()
    assert (held.status, paid.status) == (OrderStatus.CANCELLED, OrderStatus.CONFIRMED)
    assert list(held.events.values_list("kind", "actor"))[-1] == ("hold_cancelled", "admin:admin")
    assert seats_sold() == with_both - 6  # two flights, three seats each
    assert not held.segments.filter(holds_inventory=True).exists()


def shown(response) -> list[tuple[str, str]]:
    return [(m.level_tag, m.message) for m in response.context["messages"]]


def test_the_action_on_a_lapsed_hold_cancels_it_once(admin_client, held, clock):
    clock.advance(hours=25)

    cancel(admin_client, held)
    again = cancel(admin_client, held)

    # Nothing cancelled is a warning, never a success (issue 18).
    [(level, message)] = shown(again)
    assert level == "warning"
    assert message.startswith(f"Nothing was cancelled: {held.record_locator} ")
    held.refresh_from_db()
    assert held.status == OrderStatus.CANCELLED
    assert held.events.filter(kind="hold_cancelled").count() == 1
    assert seats_sold() == 0


def test_view_only_staff_may_look_but_not_cancel(client, held):
    user = get_user_model().objects.create_user("agent", password="pw", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="view_order"))
    client.force_login(user)

    assert client.get(f"{CHANGELIST}{held.pk}/change/").status_code == 200
    assert "cancel_unpaid_hold" not in client.get(CHANGELIST).content.decode()
    cancel(client, held)

    held.refresh_from_db()
    assert held.status == OrderStatus.ONHOLD


def test_the_back_office_is_staff_only(client, held):
    # force_login: client.login() calls authenticate() without the request, which the
    # admin's login throttle (django-axes) needs.
    client.force_login(get_user_model().objects.create_user("traveller", is_staff=False))

    response = client.get(CHANGELIST)

    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")


def staff_with(client, *codenames):
    user = get_user_model().objects.create_user("viewer", is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(codename__in=codenames))
    client.force_login(user)
    return client


def test_view_only_staff_see_the_whole_booking(client, paid):
    viewer = staff_with(client, "view_order")

    text = viewer.get(f"{CHANGELIST}{paid.pk}/change/").content.decode()

    # Before issue 18 every inline needed its own view permission: the page was empty.
    for expected in ("Lovelace", "Babbage", "ada@example.com", "MX101", "VI ************1111"):
        assert expected in text, expected
    for ticket in paid.tickets.all():
        assert ticket.number in text
    assert "History" in text
    assert "created" in text
    # Every time says its zone: UTC for instants, the station's own for flights.
    for label in ("At (UTC)", "Issued (UTC)", "Created (UTC)", "Departs (local time)"):
        assert label in text, label


def listed(client, query) -> set[str]:
    return {o.record_locator for o in client.get(CHANGELIST, query).context["cl"].result_list}


def test_search_beyond_exact_matches(admin_client, held, paid, travel_day):
    both, ticket = {held.record_locator, paid.record_locator}, paid.tickets.first().number
    out, back = travel_day.isoformat(), (travel_day + timedelta(days=7)).isoformat()

    assert listed(admin_client, {"q": "lovel"}) == both  # part of a surname
    assert listed(admin_client, {"q": "CHARL"}) == both  # part of a given name
    assert listed(admin_client, {"q": "ada lovelace"}) == both  # every word matches
    assert listed(admin_client, {"q": "ada turing"}) == set()
    assert listed(admin_client, {"q": "ada@example"}) == both  # email
    assert listed(admin_client, {"q": ticket}) == {paid.record_locator}
    assert listed(admin_client, {"q": f"{ticket[:3]}-{ticket[3:]}"}) == {paid.record_locator}
    assert listed(admin_client, {"q": "acmeagt"}) == both  # agency code
    assert listed(admin_client, {"q": "onhold"}) == {held.record_locator}  # status
    assert listed(admin_client, {"q": f"MX101 {out}"}) == both
    assert listed(admin_client, {"q": f"MX102 {back}"}) == both
    # A flight and a date are one segment's: MX101 does not fly on the way back.
    assert listed(admin_client, {"q": f"MX101 {back}"}) == set()
    assert listed(admin_client, {"q": "MX501"}) == set()


def test_a_connection_is_found_by_its_journey_s_ends_and_by_any_station(
    admin_client, api, auth, held, travel_day
):
    # PVD-MSY is served by connections only, through CLT (tests/offers/conftest.py).
    offers = api.post(
        "/json/v1/offers", search_body(("PVD", "MSY", travel_day)), format="json", **auth
    ).json()["data"]["offers"]
    offer = offers[0]
    priced = api.post(
        "/json/v1/offers/price",
        {
            "selections": [
                {
                    "offerId": offer["offerId"],
                    "offerItemIds": [offer["offerItems"][0]["offerItemId"]],
                }
            ],
            "passengers": [{"type": "ADT"}],
        },
        format="json",
        **auth,
    ).json()["data"]
    connection = Order.objects.get(
        order_id=book(api, auth, booking_body(priced)).json()["data"]["order"]["orderId"]
    )
    assert sorted(Segment.objects.filter(order=connection).values_list("origin", flat=True)) == [
        "CLT",
        "PVD",
    ]
    both = {held.record_locator, connection.record_locator}

    assert listed(admin_client, {"q": "PVD-MSY"}) == {connection.record_locator}  # its journey
    assert listed(admin_client, {"q": "PVD-CLT"}) == {connection.record_locator}  # a segment
    assert listed(admin_client, {"q": "MSY-PVD"}) == set()  # not the other way
    assert listed(admin_client, {"q": "pvd"}) == both  # a bare station, any stop
    assert listed(admin_client, {"q": "CLT"}) == {connection.record_locator}
    assert listed(admin_client, {"q": "PVD MSY"}) == {connection.record_locator}
    assert listed(admin_client, {"q": "PVD CHS"}) == {held.record_locator}


def test_the_list_shows_passenger_route_departure_and_deadline(admin_client, held, travel_day):
    departure = datetime.combine(travel_day, time(7, 0), ZoneInfo("America/New_York"))

    page = admin_client.get(CHANGELIST)

    text = page.content.decode()
    for column in ("Lead passenger", "Route", "Departure (local time)", "Payment deadline (UTC)"):
        assert column in text, column
    assert "Lovelace/Ada" in text
    assert "PVD-CHS-PVD" in text
    assert departure.strftime("%Y-%m-%d %H:%M %Z") in text  # e.g. "2026-12-01 07:00 EST"
    assert held.payment_time_limit.strftime("%Y-%m-%d %H:%M UTC") in text


def test_the_holds_expiring_filter(admin_client, held, paid, clock):
    assert listed(admin_client, {"hold_expires": "24h"}) == {held.record_locator}
    assert listed(admin_client, {"hold_expires": "1h"}) == set()

    clock.advance(hours=23, minutes=30)
    assert listed(admin_client, {"hold_expires": "1h"}) == {held.record_locator}

    clock.advance(hours=1)
    assert listed(admin_client, {"hold_expires": "lapsed"}) == {held.record_locator}
    assert listed(admin_client, {"hold_expires": "1h"}) == set()


def test_a_booking_on_a_flight_the_schedule_cancelled_is_flagged(
    admin_client, paid, network, tmp_path
):
    reload_schedule(tmp_path, network, None)  # MX101 dropped; its sales keep it, cancelled

    listing = admin_client.get(CHANGELIST).content.decode()
    booking = admin_client.get(f"{CHANGELIST}{paid.pk}/change/").content.decode()

    paid.refresh_from_db()
    assert paid.status == OrderStatus.CONFIRMED  # the record is unchanged; the page warns
    assert "CONFIRMED, flight cancelled by schedule" in listing
    assert listed(admin_client, {"flight_cancelled": "yes"}) == {paid.record_locator}
    assert "CANCELLED by schedule" in booking  # on the segment, beside its green tick
    assert "The passengers hold seats on cancelled flights:" in booking
    leg = paid.segments.get(flight_number=101).legs.get().flight_leg
    assert str(leg) in booking


def test_a_booking_on_a_kept_flight_is_not_flagged(admin_client, paid, network, tmp_path):
    reload_schedule(tmp_path, network, SAME_101)

    assert "CONFIRMED, flight cancelled" not in admin_client.get(CHANGELIST).content.decode()
    assert listed(admin_client, {"flight_cancelled": "yes"}) == set()


def test_a_pending_retime_shows_on_the_segment_and_in_the_list_as_the_api_says(
    api, auth, admin_client, paid, network, tmp_path, hook
):
    reload_schedule(tmp_path, network, RETIMED_101)  # MX101 leaves 90 minutes later

    view = api.get(f"/json/v1/orders/{paid.order_id}", **auth).json()["data"]
    booking = admin_client.get(f"{CHANGELIST}{paid.pk}/change/")

    states = {
        s["segmentId"]: s["operationalStatus"] for j in view["journeys"] for s in j["segments"]
    }
    assert sorted(states.values()) == ["CONFIRMED", "SCHEDULE_CHANGED"]
    segments = booking.context["inline_admin_formsets"][3]
    assert segments.opts.model is Segment
    shown = {
        form.original.ref: dict(
            (field.field["name"], field.contents())
            for fieldset in form
            for line in fieldset
            for field in line
        )["flight_status"]
        for form in segments
    }
    assert {ref: "SCHEDULE CHANGED" in text for ref, text in shown.items()} == {
        ref: state == "SCHEDULE_CHANGED" for ref, state in states.items()
    }
    assert "As scheduled" in shown.values()
    assert (
        "CONFIRMED, schedule changed by the airline"
        in admin_client.get(CHANGELIST).content.decode()
    )
    assert listed(admin_client, {"schedule_changed": "yes"}) == {paid.record_locator}
    # The seller accepts: no longer pending, no longer flagged.
    [change] = view["airlineInitiatedChanges"]
    body = {"changes": [{"type": "AcceptAirlineChange", "airlineChangeId": change["id"]}]}
    assert (
        api.patch(f"/json/v1/orders/{paid.order_id}", body, format="json", **auth).status_code
        == 200
    )
    assert "CONFIRMED, schedule changed" not in admin_client.get(CHANGELIST).content.decode()
    assert listed(admin_client, {"schedule_changed": "yes"}) == set()
    assert (
        "SCHEDULE CHANGED"
        not in admin_client.get(f"{CHANGELIST}{paid.pk}/change/").content.decode()
    )


def test_the_booking_page_lists_its_webhook_deliveries_and_the_change_links_them(
    admin_client, hook, paid, network, tmp_path
):
    reload_schedule(tmp_path, network, RETIMED_101)
    detected = WebhookDelivery.objects.get(event__type="order.airline_initiated_change_detected")
    WebhookDelivery.objects.filter(pk=detected.pk).update(
        status="PENDING", attempts=4, last_status_code=503
    )

    page = admin_client.get(f"{CHANGELIST}{paid.pk}/change/").content.decode()

    table = page[page.index('<table id="deliveries">') :]
    table = table[: table.index("</table>")]
    types = set(WebhookDelivery.objects.filter(order=paid).values_list("event__type", flat=True))
    assert {"order.created", "order.paid", "order.airline_initiated_change_detected"} <= types
    for event_type in types:
        assert f"<td>{event_type}</td>" in table
    assert "<td>not yet: 4 attempts, last 503</td><td>PENDING</td><td>4</td><td>503</td>" in table
    endpoint = detected.endpoint
    seller_and_url = f"{endpoint.seller.code} http://127.0.0.1:9/hooks"
    assert f"{seller_and_url}</a> ({endpoint.webhook_id})" in table
    # The change row says who was told, in words, and links to those deliveries.
    told = page[page.index('<td class="field-sellers_told">') :]
    told = told[: told.index("</td>")]
    assert f">{seller_and_url}</a>: not yet: 4 attempts, last 503" in told
    assert endpoint.webhook_id not in told
    assert (
        f"/admin/webhooks/webhookdelivery/?q={paid.record_locator}"
        "&amp;event_type=order.airline_initiated_change_detected"
    ) in page
    listing = admin_client.get(
        "/admin/webhooks/webhookdelivery/",
        {"q": paid.record_locator, "event_type": "order.airline_initiated_change_detected"},
    )
    assert [d.pk for d in listing.context["cl"].result_list] == [detected.pk]


def test_a_delivered_change_reads_told_with_its_time_and_code(
    admin_client, hook, paid, network, tmp_path
):
    reload_schedule(tmp_path, network, RETIMED_101)
    detected = WebhookDelivery.objects.get(event__type="order.airline_initiated_change_detected")
    at = datetime(2026, 6, 1, 22, 33, tzinfo=ZoneInfo("UTC"))
    WebhookDelivery.objects.filter(pk=detected.pk).update(
        status="DELIVERED", attempts=1, last_status_code=200, last_attempt_at=at, delivered_at=at
    )

    page = admin_client.get(f"{CHANGELIST}{paid.pk}/change/").content.decode()

    told = page[page.index('<td class="field-sellers_told">') :]
    told = told[: told.index("</td>")]
    assert "http://127.0.0.1:9/hooks</a>: told 2026-06-01 22:33 UTC (200)" in told


def test_the_booking_command_prints_the_webhook_deliveries_in_words(hook, paid, network, tmp_path):
    reload_schedule(tmp_path, network, RETIMED_101)
    detected = WebhookDelivery.objects.get(event__type="order.airline_initiated_change_detected")
    WebhookDelivery.objects.filter(pk=detected.pk).update(
        status="PENDING", attempts=6, last_status_code=404
    )
    WebhookDelivery.objects.filter(event__type="order.created").update(
        status="FAILED", attempts=40, last_status_code=None, last_error="connection refused"
    )
    out = StringIO()

    call_command("booking", paid.record_locator, stdout=out)

    printed = out.getvalue()
    section = printed[printed.index("Webhook deliveries (newest first)") :]
    section = section[: section.index("\n\n")].splitlines()[1:]
    seller = detected.endpoint.seller.code
    assert len(section) == WebhookDelivery.objects.filter(order=paid).count()
    assert any(
        "order.airline_initiated_change_detected  to "
        f"{seller} http://127.0.0.1:9/hooks  not yet: 6 attempts, last 404" in line
        for line in section
    )
    assert any(
        line.endswith(
            "order.created  to "
            f"{seller} http://127.0.0.1:9/hooks  gave up: 40 attempts, last connection refused"
        )
        for line in section
    )


def test_the_booking_command_says_none_without_deliveries(held):
    out = StringIO()

    call_command("booking", held.record_locator, stdout=out)

    printed = out.getvalue()
    assert "Webhook deliveries (newest first)\n  none\n" in printed


def test_search_reads_flights_as_staff_write_them(admin_client, held, paid, travel_day):
    out = travel_day.isoformat()
    both = {held.record_locator, paid.record_locator}

    assert listed(admin_client, {"q": "MX 101"}) == both
    assert listed(admin_client, {"q": f"MX 101 {out}"}) == both
    assert listed(admin_client, {"q": "101"}) == both
    assert listed(admin_client, {"q": "XY101"}) == set()  # another carrier's 101
    assert listed(admin_client, {"q": "PVD-CHS"}) == both
    assert listed(admin_client, {"q": "PVD-TPA"}) == set()


def test_the_booking_command_prints_a_pending_change_apart_and_history_as_lines(
    paid, network, tmp_path
):
    reload_schedule(tmp_path, network, RETIMED_101)
    change = paid.airline_changes.get()
    out = StringIO()

    call_command("booking", paid.record_locator, stdout=out)

    printed = out.getvalue()
    section = printed[printed.index("Airline changes waiting for the seller") :]
    section = section[: section.index("\n\n")]
    assert f"{change.ref}  RETIMED  detected" in section
    assert "as booked  MX101 PVD" in section
    assert " 07:00 -> CHS" in section.splitlines()[3]
    assert " 08:30 -> CHS" in section.splitlines()[4]  # flies now, local time
    assert "may answer AcceptAirlineChange" in section
    journeys = printed[printed.index("Journeys (local times)") : printed.index("\nItems")]
    assert "SCHEDULE_CHANGED" in journeys  # the outbound, as the API says
    assert journeys.count("SCHEDULE_CHANGED") == 1  # the return flies as booked
    history = printed[printed.index("\nHistory") :]
    assert "airline_change_detected  by schedule" in history
    assert f"      change: {change.ref}" in history
    assert "      reasons: RETIMED" in history
    assert "{" not in history  # no raw JSON


def test_the_booking_page_never_builds_the_schedule_index(admin_client, paid, monkeypatch):
    """The booking page reads station time zones as reference data, never through the
    schedule index (a fresh process would build the whole of it first)."""

    def refuse():
        raise AssertionError("the booking page built the schedule index")

    monkeypatch.setattr("airline.network.itineraries.network_index", refuse)
    monkeypatch.setattr("airline.network.itineraries.build_index", refuse)

    assert admin_client.get(f"{CHANGELIST}{paid.pk}/change/").status_code == 200
    assert admin_client.get(CHANGELIST).status_code == 200


def test_each_row_has_djangos_own_checkbox(admin_client, held, paid):
    # airline.backoffice_lists.RowCheckbox writes it without a template per row: the same bytes
    # as Django's widget, which the actions bar's script and the browser tests select.
    from django.contrib.admin import ModelAdmin, site

    page = admin_client.get(CHANGELIST).content.decode()

    for order in Order.objects.all():
        assert ModelAdmin.action_checkbox(site.get_model_admin(Order), order) in page


def test_a_word_naming_many_bookings_finds_the_same_ones_tested_booking_by_booking(
    admin_client, held, paid, travel_day, monkeypatch
):
    # Past FEW ids a word is tested on each booking (word_tested) rather than listed by
    # id: FEW at 0 sends every word there.
    both, ticket = {held.record_locator, paid.record_locator}, paid.tickets.first().number
    queries = {
        "lovel": both,
        "CHARL": both,
        "ada lovelace": both,
        "ada turing": set(),
        "ada@example": both,
        ticket: {paid.record_locator},
        "acmeagt": both,
        "onhold": {held.record_locator},
        "MX101": both,
        "PVD": both,
        "MX501": set(),
    }
    monkeypatch.setattr("orders.admin.search.FEW", 0)

    for query, expected in queries.items():
        assert listed(admin_client, {"q": query}) == expected, query


def test_a_searched_list_is_counted_up_to_its_cap(admin_client, held, paid, monkeypatch):
    monkeypatch.setattr("orders.admin.bookings.COUNTED_UP_TO", 1)

    searched = admin_client.get(CHANGELIST, {"q": "lovelace"})
    one = admin_client.get(CHANGELIST, {"q": held.record_locator})
    every = admin_client.get(CHANGELIST)

    text = searched.content.decode()
    assert {held.record_locator, paid.record_locator} <= set(re.findall(r"\b\w{6}\b", text))
    assert re.search(r"more than 1 result\b", text)  # the search box's count
    assert re.search(r"more than 1 order\b", text)  # the paginator's
    assert "more than" not in one.content.decode()
    assert "1 result" in one.content.decode()
    assert "more than" not in every.content.decode()
