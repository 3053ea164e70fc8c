"""Input types exactly as the OpenAPI description states them (issue 14 item 12): a number
where text is declared, or a date in other than ASCII digits, is ERR-1005, not quietly
converted."""

import pytest

from tests.offers.conftest import search_body

pytestmark = pytest.mark.django_db


def search(api, auth, body):
    return api.post("/json/v1/offers", body, format="json", **auth)


@pytest.mark.parametrize(
    ("passenger", "path"),
    [
        ({"type": "ADT", "paxId": 0}, "passengers.paxId"),
        ({"type": "ADT", "paxId": True}, "passengers.paxId"),
        ({"type": 1}, "passengers.type"),
    ],
)
def test_a_number_where_text_is_declared_is_err_1005(api, auth, network, passenger, path):
    body = search_body(("PVD", "CHS", network), passengers=[passenger])

    response = search(api, auth, body)

    assert response.status_code == 422, response.content
    assert (response.json()["error"]["code"], response.json()["error"]["path"]) == (
        "ERR-1005",
        path,
    )


def test_a_date_in_fullwidth_digits_is_err_1005(api, auth, network):
    body = search_body(("PVD", "CHS", network))
    fullwidth = str.maketrans("0123456789", "".join(chr(0xFF10 + d) for d in range(10)))
    body["originDestinations"][0]["departureDate"] = network.isoformat().translate(fullwidth)

    response = search(api, auth, body)

    assert response.status_code == 422, response.content
    assert response.json()["error"]["path"] == "originDestinations.departureDate"


def test_an_empty_query_value_is_refused_like_any_bad_one(api, partner_key, default_seller, clock):
    from tests.conftest import bearer, token_for

    lister = bearer(token_for(api, partner_key.raw))

    response = api.get("/json/v1/orders?origin=", **lister)

    assert response.status_code == 422, response.content
    assert response.json()["error"]["path"] == "origin"
