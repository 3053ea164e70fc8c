"""Query parameters (DESIGN.md §11 "Query parameters", issue 28 item 7): a known one out
of its range is ERR-1005 naming it, on every endpoint that takes query parameters; an
unknown one is ERR-1005 on retrieve order, and ignored on OrderList, as SPEC.md §4.8
says ("unrecognized ones are ignored"), which wins over DESIGN.md §11 there."""

import pytest

from tests.conftest import bearer, error_of, token_for
from tests.orders.factories import order_with_trip

pytestmark = pytest.mark.django_db


@pytest.fixture
def auth(api, partner_key, default_seller, clock):
    return bearer(token_for(api, partner_key.raw))


@pytest.mark.parametrize(
    ("query", "path"),
    [
        ({"pageSize": "-1"}, "pageSize"),
        ({"pageSize": "9"}, "pageSize"),
        ({"pageSize": "1001"}, "pageSize"),
        ({"pageSize": "ten"}, "pageSize"),
        ({"lastIndex": "-1"}, "lastIndex"),
        ({"lastIndex": str(2**63)}, "lastIndex"),
        ({"departureDate": "2027-02-30"}, "departureDate"),
        ({"origin": "PVDX"}, "origin"),
        ({"organizationCode": "X" * 11}, "organizationCode"),
        ({"lastName": "Doe", "pageSize": "5", "offset": "5"}, "pageSize"),
    ],
)
def test_order_list_refuses_out_of_range_parameters(api, auth, query, path):
    response = api.get("/json/v1/orders", query, **auth)

    assert error_of(response, 422, "ERR-1005")["path"] == path


def test_order_list_takes_its_known_parameters(api, auth):
    response = api.get("/json/v1/orders", {"pageSize": "10", "lastName": "Doe"}, **auth)

    assert response.status_code == 200, response.content
    assert response.json()["data"]["page"]["pageSize"] == 10


def test_retrieve_order_refuses_an_unknown_parameter(api, auth, default_seller):
    order = order_with_trip(seller=default_seller)

    response = api.get(f"/json/v1/orders/{order.order_id}", {"expand": "all"}, **auth)

    assert error_of(response, 422, "ERR-1005")["path"] == "expand"
    ok = api.get(f"/json/v1/orders/{order.order_id}", {"ownerCode": "MX"}, **auth)
    assert ok.status_code == 200, ok.content


@pytest.mark.parametrize(
    "query",
    [
        {"limit": "-1"},
        {"pagesize": "5"},  # names are case-sensitive: not pageSize
        {"offset": "5", "lastName": "Doe"},
        {f"p{n:02d}": "1" for n in range(30)},
    ],
)
def test_order_list_ignores_parameters_it_does_not_know(api, auth, query):
    """SPEC.md §4.8: "All query parameters optional; unrecognized ones are ignored"."""
    response = api.get("/json/v1/orders", query, **auth)

    assert response.status_code == 200, response.content
    assert response.json()["data"]["page"]["pageSize"] == 1000  # the default, not limit/pagesize


def test_many_unknown_parameters_of_retrieve_name_at_most_twenty(api, auth, default_seller):
    order = order_with_trip(seller=default_seller)
    query = {f"p{n:02d}": "1" for n in range(30)}

    response = api.get(f"/json/v1/orders/{order.order_id}", query, **auth)

    error = error_of(response, 422, "ERR-1005")
    assert len(error["fields"]) == 20
    assert "10 more fields" in error["description"]
