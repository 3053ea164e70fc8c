"""Query parameters (DESIGN.md §11 "Query parameters", issue 28 item 7): an unknown one,
or a known one out of its range, is ERR-1005 naming it, on every endpoint that takes
query parameters (OrderList, retrieve order); never silently ignored."""

import pytest

from tests.conftest import bearer, token_for
from tests.orders.conftest import error_of
from tests.orders.factories import order_with_trip

pytestmark = pytest.mark.django_db


@pytest.fixture
def auth(api, partner_key, default_seller, clock):
    return bearer(token_for(api, partner_key.raw))


@pytest.mark.parametrize(
    ("query", "path"),
    [
        ({"limit": "-1"}, "limit"),
        ({"pagesize": "10"}, "pagesize"),  # names are case-sensitive
        ({"pageSize": "-1"}, "pageSize"),
        ({"pageSize": "9"}, "pageSize"),
        ({"pageSize": "1001"}, "pageSize"),
        ({"pageSize": "ten"}, "pageSize"),
        ({"lastIndex": "-1"}, "lastIndex"),
        ({"lastIndex": str(2**63)}, "lastIndex"),
        ({"departureDate": "2027-02-30"}, "departureDate"),
        ({"origin": "PVDX"}, "origin"),
        ({"organizationCode": "X" * 11}, "organizationCode"),
        ({"lastName": "Doe", "offset": "5"}, "offset"),
    ],
)
def test_order_list_refuses_unknown_and_out_of_range_parameters(api, auth, query, path):
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


def test_many_unknown_parameters_name_at_most_twenty(api, auth):
    query = {f"p{n:02d}": "1" for n in range(30)}

    error = error_of(api.get("/json/v1/orders", query, **auth), 422, "ERR-1005")

    assert len(error["fields"]) == 20
    assert "10 more fields" in error["description"]
