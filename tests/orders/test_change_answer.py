"""Change order's answer is the order as a retrieve right after it shows it (SPEC.md
§4.10): whether the change renders it from the rows it read and wrote
(orders.servicing.changes.Changed) or reads the order again."""

import re

import pytest

from tests.conftest import statements_sent
from tests.orders.conftest import CARD
from tests.orders.test_order_ancillaries import bag_entry, open_seat, seat_entry

pytestmark = pytest.mark.django_db


def changed_as_retrieved(api, auth, order_id, body) -> dict:
    """PATCH `body`, then GET the order: the answer's data, which must be the GET's."""
    response = api.patch(f"/json/v1/orders/{order_id}", body, format="json", **auth)
    assert response.status_code == 200, response.content
    data = response.json()["data"]
    assert api.get(f"/json/v1/orders/{order_id}", **auth).json()["data"] == data
    return data


def seat_change(api, auth, view, pax_index=0, leg_index=0):
    order_id = view["order"]["orderId"]
    pax = view["pax"][pax_index]["paxId"]
    data = api.post(f"/json/v1/orders/{order_id}/seats", {}, format="json", **auth).json()["data"]
    unit, price = open_seat(data["legSeatMaps"][leg_index], pax)
    return {"changes": [seat_entry(data, unit, price)]}, unit["designator"]


def bag_change(api, auth, view, code="CB1", journey_index=0):
    order_id = view["order"]["orderId"]
    data = api.post(f"/json/v1/orders/{order_id}/services", {}, format="json", **auth)
    entry, _ = bag_entry(
        data.json()["data"],
        code,
        view["pax"][0]["paxId"],
        view["journeys"][journey_index]["journeyId"],
    )
    return {"changes": [entry]}


def test_every_change_answers_the_order_as_a_retrieve_shows_it_after(api, auth, hold):
    order_id = hold["order"]["orderId"]
    ada = hold["pax"][0]["paxId"]

    body, first = seat_change(api, auth, hold)
    view = changed_as_retrieved(api, auth, order_id, body)
    [seat] = [s for s in view["services"] if s["category"] == "seat"]
    assert (seat["attributes"]["seat"], seat["statusCode"]) == (first, "CONFIRMED")

    view = changed_as_retrieved(api, auth, order_id, bag_change(api, auth, view))
    assert [s["code"] for s in view["services"]] == [seat["code"], "CB1"]

    # Another seat on the same leg gives up the first: shown cancelled, in its place.
    body, second = seat_change(api, auth, view)
    view = changed_as_retrieved(api, auth, order_id, body)
    assert [
        (s["attributes"]["seat"], s["statusCode"])
        for s in view["services"]
        if s.get("attributes", {}).get("seat")
    ] == [
        (first, "CANCELLED"),
        (second, "CONFIRMED"),
    ]

    rename = {
        "type": "UpdatePassenger",
        "passengerId": ada,
        "patch": {"name": {"givenName": "Ada", "surname": "Byron"}},
    }
    view = changed_as_retrieved(api, auth, order_id, {"changes": [rename]})
    assert view["pax"][0]["name"]["surname"] == "Byron"

    view = changed_as_retrieved(
        api, auth, order_id, {"changes": [{"type": "ConfirmHold"}], "payment": CARD}
    )
    assert view["order"]["statusCode"] == "CONFIRMED"
    assert view["tickets"]
    assert view["emds"]

    # On the paid order a bag is paid by card with the change.
    view = changed_as_retrieved(
        api, auth, order_id, {**bag_change(api, auth, view, journey_index=1), "payment": CARD}
    )
    assert len(view["payments"]) == 2

    # No Flex is cancelled whole: every journey in one request.
    every = [{"type": "CancelJourney", "journeyRef": j["journeyId"]} for j in view["journeys"]]
    view = changed_as_retrieved(api, auth, order_id, {"changes": every})
    assert view["order"]["statusCode"] == "CANCELLED"


def test_cancel_unpaid_answers_the_order_as_a_retrieve_shows_it_after(api, auth, hold):
    order_id = hold["order"]["orderId"]
    view = changed_as_retrieved(api, auth, order_id, seat_change(api, auth, hold)[0])

    view = changed_as_retrieved(api, auth, order_id, {"changes": [{"type": "CancelUnpaidOrder"}]})

    assert view["order"]["statusCode"] == "CANCELLED"
    assert {s["statusCode"] for s in view["services"]} == {"CANCELLED"}


def test_a_seat_on_a_hold_is_answered_without_reading_the_order_again(api, auth, hold):
    order_id = hold["order"]["orderId"]
    body, _ = seat_change(api, auth, hold)

    with statements_sent() as statements:
        response = api.patch(f"/json/v1/orders/{order_id}", body, format="json", **auth)

    assert response.status_code == 200, response.content
    [update] = [n for n, sql in enumerate(statements) if sql.startswith('UPDATE "orders_order"')]
    # The order row comes back from its UPDATE; after it, only the transaction's end.
    assert "RETURNING" in statements[update]
    assert all(sql.startswith("RELEASE SAVEPOINT") for sql in statements[update + 1 :])
    # The order row is read twice: found, then locked.
    order_row = re.compile(r'^SELECT \S+ .*FROM "orders_order"( \w+)? WHERE')
    assert sum(bool(order_row.match(sql)) for sql in statements) == 2, statements
