"""Every endpoint answers a clean 503 ERR-9000 with Retry-After, in JSON or NDC XML, when
the database cannot be reached: the process's connections closed and the database's
address a closed port, so that every new connection is refused (psycopg's
OperationalError on connect), as during a failover or a pooler restart. Search and price
included: ERR-2002 is the availability read failing, not the database being away."""

import socket
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from django.db import connections
from lxml import etree

from tests.conftest import error_of
from tests.ndc.conftest import CNS, air_shopping, offer_price, post
from tests.offers.conftest import search_body
from tests.orders import conftest as orders
from tests.orders.conftest import book, booking_body

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

network, auth, travel_day, priced = orders.network, orders.auth, orders.travel_day, orders.priced


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # nothing listens on it once the socket closes


@contextmanager
def database_unreachable() -> Iterator[None]:
    connection = connections["default"]
    saved = dict(connection.settings_dict)
    connection.close()
    connection.settings_dict.update(HOST="127.0.0.1", PORT=str(closed_port()))
    try:
        yield
    finally:
        connection.close()
        connection.settings_dict.update(HOST=saved["HOST"], PORT=saved["PORT"])


def unavailable(response) -> None:
    """A JSON 503 ERR-9000 with Retry-After."""
    error_of(response, 503, "ERR-9000")
    assert response["Retry-After"] == "5"


def ndc_unavailable(response) -> None:
    assert response.status_code == 503, response.content
    assert response["Content-Type"].startswith("application/xml")
    assert response["Retry-After"] == "5"
    document = etree.fromstring(response.content)
    assert document.findtext(f".//{{{CNS}}}Code") == "ERR-9000"


def test_every_json_endpoint_answers_503_err_9000(api, auth, priced, travel_day):
    booked = book(api, auth, booking_body(priced)).json()["data"]["order"]["orderId"]
    search = search_body(("PVD", "CHS", travel_day))
    offer = api.post("/json/v1/offers", search, format="json", **auth).json()["data"]["offers"][0]
    price = {
        "selections": [
            {"offerId": offer["offerId"], "offerItemIds": [offer["offerItems"][0]["offerItemId"]]}
        ],
        "passengers": [{"type": "ADT"}],
    }
    api.get("/json/v1/whoami", **auth)  # the token is known to this process for 30 s

    with database_unreachable():
        answers = {
            "search": api.post("/json/v1/offers", search, format="json", **auth),
            "price": api.post("/json/v1/offers/price", price, format="json", **auth),
            "list": api.get("/json/v1/orders", **auth),
            "retrieve": api.get(f"/json/v1/orders/{booked}", **auth),
            "create": book(api, auth, booking_body(priced), HTTP_IDEMPOTENCY_KEY="k-1"),
            "cancel": api.patch(
                f"/json/v1/orders/{booked}",
                {"changes": [{"type": "CancelUnpaidOrder"}]},
                format="json",
                **auth,
            ),
        }

    for name, response in answers.items():
        assert response.status_code == 503, (name, response.content)
        unavailable(response)
    # The database back: all is as before.
    assert api.get(f"/json/v1/orders/{booked}", **auth).status_code == 200
    assert api.post("/json/v1/offers", search, format="json", **auth).status_code == 201


def test_ndc_search_and_price_answer_503_err_9000(api, auth, travel_day):
    shopped = post(api, "AirShopping", air_shopping(("PVD", "CHS", travel_day)), auth)
    assert shopped.status_code == 200, shopped.content
    document = etree.fromstring(shopped.content)
    offer = document.find(f".//{{{CNS}}}Offer")
    offer_id = offer.findtext(f"{{{CNS}}}OfferID")
    item_id = offer.findtext(f"{{{CNS}}}OfferItem/{{{CNS}}}OfferItemID")

    with database_unreachable():
        shopping = post(api, "AirShopping", air_shopping(("PVD", "CHS", travel_day)), auth)
        pricing = post(api, "OfferPrice", offer_price((offer_id, item_id)), auth)

    ndc_unavailable(shopping)
    ndc_unavailable(pricing)


def test_a_token_unknown_to_the_process_is_8002_not_500(api, partner_key, network):
    with database_unreachable():
        response = api.post("/auth/token", HTTP_X_API_KEY=partner_key.raw)

    assert response.status_code == 503
    assert response.json()["error"]["code"] == "ERR-8002"
