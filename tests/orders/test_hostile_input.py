"""Hostile input is refused early and in the documented shape (issue 14 items 4, 5, 7):
deep nesting, NUL characters, tokens with absurd claims. Never a 500 or a 503."""

import json
from datetime import timedelta

import pytest
from rest_framework_simplejwt.tokens import AccessToken

from orders.models import Order
from sellers.services import KEY_CLAIM, SELLER_CLAIM
from tests.conftest import bearer, error_of
from tests.orders.conftest import book, booking_body

pytestmark = pytest.mark.django_db


def nested(depth: int, leaf="x"):
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("depth", [65, 254, 990, 5000])
def test_a_body_nested_too_deep_is_err_1005_even_with_an_idempotency_key(api, auth, priced, depth):
    # Written out by hand: no JSON encoder of ours would write so deep a document.
    raw = json.dumps(booking_body(priced, remarks="@")).replace(
        '"@"', "[" * depth + '"x"' + "]" * depth
    )

    response = api.post(
        "/json/v1/orders",
        raw,
        content_type="application/json",
        HTTP_IDEMPOTENCY_KEY="deep-1",
        **auth,
    )

    error_of(response, 422, "ERR-1005")
    assert not Order.objects.exists()


def test_a_body_nested_in_an_object_names_where(api, auth):
    body = {"originDestinations": [{"origin": {"a": nested(80)}}], "passengers": []}

    error = error_of(api.post("/json/v1/offers", body, format="json", **auth), 422, "ERR-1005")
    assert error["path"] == "originDestinations.origin.a"


def test_sixty_four_levels_are_parsed_and_judged_by_the_fields(api, auth):
    body = {"originDestinations": nested(62), "passengers": [{"type": "ADT"}]}

    error = error_of(api.post("/json/v1/offers", body, format="json", **auth), 422, "ERR-1005")
    assert "nests deeper" not in error["description"]


@pytest.mark.parametrize(
    "where",
    ["contact.emailAddress", "passengers.name.surname", "remarks", "key"],
)
def test_a_nul_character_in_a_field_is_err_1005_with_its_path(api, auth, priced, where):
    body = booking_body(priced)
    if where == "contact.emailAddress":
        body["contact"]["emailAddress"] = "ada\x00@example.com"
    elif where == "passengers.name.surname":
        body["passengers"][0]["name"]["surname"] = "Love\x00lace"
    elif where == "remarks":
        body["remarks"] = "\x00"
    else:
        body["contact"]["x\x00"] = "y"
        where = "contact"

    error = error_of(book(api, auth, body), 422, "ERR-1005")
    assert error["path"] == where
    assert not Order.objects.exists()


@pytest.mark.parametrize("method", ["get", "patch", "seats", "services"])
def test_a_nul_in_an_order_id_is_not_found(api, auth, method):
    path = "/json/v1/orders/ABC%00DEF"
    if method == "get":
        response = api.get(path, **auth)
    elif method == "patch":
        response = api.patch(path, {"changes": [{"type": "ConfirmHold"}]}, format="json", **auth)
    else:
        response = api.post(f"{path}/{method}", format="json", **auth)

    error_of(response, 404, "ERR-4000")


def test_a_nul_in_an_offer_id_is_not_found(api, auth):
    response = api.post(
        "/json/v1/offers/abc%00.1/seats", {"offerItemIds": ["abc.1.1"]}, format="json", **auth
    )

    error_of(response, 404, "ERR-3000")


def test_a_nul_in_a_query_value_is_err_1005(api, partner_key, clock):
    from tests.conftest import token_for

    lister = bearer(token_for(api, partner_key.raw))

    error_of(api.get("/json/v1/orders", {"lastName": "Love\x00lace"}, **lister), 422, "ERR-1005")


@pytest.mark.parametrize("exp", [1e30, 10**20, -(10**20), "soon", None])
def test_a_token_signed_with_the_real_key_and_an_absurd_exp_is_401(
    api, partner_key, default_seller, exp
):
    token = AccessToken()
    token[KEY_CLAIM] = partner_key.key.prefix
    token[SELLER_CLAIM] = str(default_seller.pk)
    token.set_exp(lifetime=timedelta(hours=1))
    token.payload["exp"] = exp

    response = api.get("/json/v1/whoami", **bearer(str(token)))

    assert response.status_code == 401, response.content
    assert response.json()["error"]["code"] == "ERR-8000"
