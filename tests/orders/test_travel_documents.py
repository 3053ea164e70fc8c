"""Travel document types: JSON takes the SSR DOCS/APIS codes NDC takes (P, PP, PA, I,
ID, V) and keeps them as the type they stand for, in create and change order alike."""

from datetime import timedelta

import pytest

from orders.models import Passenger
from tests.conftest import error_of
from tests.orders.conftest import HOLD, book, booking_body
from tests.orders.test_amend import change
from tests.orders.test_create import with_passenger
from tests.orders.test_exchange import booked

pytestmark = pytest.mark.django_db


def documents(*kinds):
    return [{"documentType": kind, "documentNumber": f"X{n}"} for n, kind in enumerate(kinds)]


def test_create_order_keeps_an_alias_as_the_type_it_stands_for(api, auth, priced):
    body = with_passenger(
        booking_body(priced), "ADT-1", travelDocuments=documents("PP", "ID", "V", "DL")
    )

    response = book(api, auth, body)

    assert response.status_code == 201, response.content
    shown = response.json()["data"]["pax"][0]["travelDocuments"]
    assert [d["documentType"] for d in shown] == ["PT", "NI", "VI", "DL"]
    kept = Passenger.objects.get(ref=response.json()["data"]["pax"][0]["paxId"])
    assert [d["documentType"] for d in kept.travel_documents] == ["PT", "NI", "VI", "DL"]


def test_an_unknown_document_type_is_still_refused(api, auth, priced):
    body = with_passenger(booking_body(priced), "ADT-1", travelDocuments=documents("XX"))

    error_of(book(api, auth, body), 422, "ERR-1005", "passengers.travelDocuments.documentType")


def test_update_passenger_takes_the_aliases_too(api, auth, network, clock):
    hold = booked(api, auth, network + timedelta(days=10), payment=HOLD)
    pax = hold["pax"][0]["paxId"]

    response = change(
        api,
        auth,
        hold["order"]["orderId"],
        {"passengers": [{"passengerId": pax, "travelDocuments": documents("P", "I")}]},
    )

    assert response.status_code == 200, response.content
    kept = Passenger.objects.get(ref=pax)
    assert [d["documentType"] for d in kept.travel_documents] == ["PT", "NI"]
