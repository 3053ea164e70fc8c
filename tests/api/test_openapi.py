"""The OpenAPI description and its docs pages, served offline (issue: OpenAPI)."""

import re
from unittest.mock import ANY

import pytest
import yaml
from django.core.management import call_command

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("version", ["v0", "v1", "v2"])
def test_the_description_is_served_under_every_version(client, version):
    response = client.get(f"/json/{version}/schema")

    assert response.status_code == 200
    document = yaml.safe_load(response.content)
    assert document["openapi"].startswith("3.")
    assert {"/auth/token", "/auth/sellers"} <= set(document["paths"])
    assert any(path.endswith("/whoami") for path in document["paths"])
    schemes = document["components"]["securitySchemes"]
    assert schemes["bearerAuth"]["scheme"] == "bearer"
    assert schemes["apiKey"] == {"type": "apiKey", "in": "header", "name": "x-api-key"}


def test_it_documents_the_error_bodies(client):
    document = yaml.safe_load(client.get("/json/v1/schema").content)

    token = document["paths"]["/auth/token"]["post"]
    assert {"200", "401", "403", "422", "429", "503"} <= set(token["responses"])
    schemas = document["components"]["schemas"]
    assert {"message", "errorKey", "error", "requestId"} <= set(schemas["AuthError"]["properties"])
    assert {"code", "title", "description", "path", "fields", "requestId"} <= set(
        schemas["Error"]["properties"]
    )


def test_the_description_is_available_as_json(client):
    response = client.get("/json/v1/schema", HTTP_ACCEPT="application/vnd.oai.openapi+json")

    assert response.status_code == 200
    assert response.json()["info"]["title"] == "Offer and Order Service"


@pytest.mark.parametrize("page", ["schema/swagger-ui", "schema/redoc"])
def test_docs_pages_load_all_their_assets_from_this_server(client, page):
    html = client.get(f"/json/v1/{page}").content.decode()

    assets = re.findall(r'(?:src|href)="(/static/[^"]+)"', html)
    assert assets, html
    for asset in assets:
        assert client.get(asset).status_code == 200, asset
    assert not re.search(r'(?:src|href)="https?://', html)  # nothing fetched from the internet


def test_the_description_generates_without_a_warning(tmp_path):
    """Every endpoint's request, responses and authentication are fully described."""
    call_command(
        "spectacular",
        "--api-version",
        "v1",
        "--validate",
        "--fail-on-warn",
        "--file",
        str(tmp_path / "schema.yaml"),
    )

    document = yaml.safe_load((tmp_path / "schema.yaml").read_text())
    assert {
        "/json/v1/offers",
        "/json/v1/offers/byJourney",
        "/json/v1/offers/price",
        "/json/v1/orders",
        "/json/v1/orders/{orderId}",
    } <= set(document["paths"])
    create = document["paths"]["/json/v1/orders"]["post"]
    # Every operation that changes an order or registers a webhook (DESIGN.md §11).
    for path, method in [
        ("/json/v1/orders", "post"),
        ("/json/v1/orders/{orderId}", "patch"),
        ("/json/v1/webhooks", "post"),
    ]:
        parameters = document["paths"][path][method]["parameters"]
        assert {"name": "Idempotency-Key", "in": "header"}.items() <= next(
            p for p in parameters if p["name"] == "Idempotency-Key"
        ).items(), (path, method)
    assert set(create["requestBody"]["content"]["application/json"]["examples"]) == {
        "Hold",
        "Card",
        "HoldWithASeatAndABag",
        "AirlineCredit",
        "AirlineCreditAndACardForTheRest",
    }
    view = document["components"]["schemas"]["OrderViewData"]["properties"]
    assert view["services"]["items"]["$ref"].endswith("/OrderService")


def test_money_is_described_as_served_and_both_credentials_are_declared(client):
    document = yaml.safe_load(client.get("/json/v1/schema").content)

    amount = document["components"]["schemas"]["MonetaryAmount"]["properties"]["amount"]
    assert amount["type"] == "number"  # served as a JSON number, not a string
    create = document["paths"]["/json/v1/orders"]["post"]
    # SPEC.md §5: a bearer token, or else a partner key directly: alternatives.
    assert create["security"] == [{"bearerAuth": []}, {"apiKey": []}]
    create = create["responses"]
    assert {"201", "400", "401", "403", "404", "409", "422", "429", "500", "503"} <= set(create)


def schema_of(client) -> dict:
    return yaml.safe_load(client.get("/json/v1/schema").content)


def test_the_auth_calls_take_the_api_key_not_a_bearer_token(client):
    """Issue 25 item 4: a generator types an operation with a security requirement as
    needing an authenticated (bearer) client; the auth calls take the key itself."""
    paths = schema_of(client)["paths"]

    for path, method in (("/auth/token", "post"), ("/auth/sellers", "get")):
        operation = paths[path][method]
        assert not operation.get("security"), path
        [header] = [p for p in operation["parameters"] if p["in"] == "header"]
        assert (header["name"], header["required"]) == ("x-api-key", True)


def test_it_names_the_host_that_served_it(client):
    assert schema_of(client)["servers"] == [{"url": "http://testserver", "description": ANY}]


def test_payment_changes_and_reshop_instructions_are_one_variant_per_type(client):
    schemas = schema_of(client)["components"]["schemas"]

    payment = schemas["PaymentInRequest"]
    assert payment["discriminator"]["propertyName"] == "type"
    assert set(payment["discriminator"]["mapping"]) == {"Hold", "CreditCard", "AirlineCredit"}
    card = schemas["CreditCardPaymentRequest"]
    assert set(card["required"]) == {"type", "cardType", "cardNumber", "expiryDate", "securityCode"}
    assert card["additionalProperties"] is False
    assert set(schemas["AirlineCreditPaymentRequest"]["required"]) == {"type", "creditCode"}
    # The card beside a credit: the CreditCard payment's fields, `type` optional.
    card_in = schemas["CardInRequest"]
    [kind] = card_in["properties"]["type"]["allOf"]
    assert schemas[kind["$ref"].rsplit("/", 1)[1]]["enum"] == ["CreditCard"]
    assert "type" not in card_in["required"]
    assert set(card_in["properties"]) == set(card["properties"]) - {"creditCode", "card", "amount"}
    assert card_in["additionalProperties"] is False
    assert schemas["HoldPaymentRequest"]["required"] == ["type"]

    changes = schemas["ChangeInRequest"]["discriminator"]["mapping"]
    assert len(changes) == 9
    assert set(schemas["AcceptReshopOfferChangeRequest"]["required"]) == {
        "type",
        "offerId",
        "offerItemIds",
    }
    assert set(schemas["NameChangeInstructionRequest"]["required"]) == {
        "type",
        "paxRefId",
        "surname",
    }
    assert set(schemas["ReshopItineraryInstructionRequest"]["required"]) == {
        "type",
        "originDestinations",
    }


@pytest.mark.parametrize(
    "name",
    [
        "CreateOrderInRequest",
        "PatchedChangeOrderInRequest",
        "PriceInRequest",
        "QuoteInRequest",
        "ReshopInRequest",
        "OrderAncillaryInRequest",
        "AncillaryInRequest",
        "WebhookInRequest",
        "SearchInRequest",
    ],
)
def test_request_bodies_refuse_unknown_properties_as_the_validation_does(client, name):
    schemas = schema_of(client)["components"]["schemas"]

    assert schemas[name]["additionalProperties"] is False


def test_lists_the_validation_bounds_are_bounded_in_the_description(client):
    schemas = schema_of(client)["components"]["schemas"]

    create = schemas["CreateOrderInRequest"]["properties"]
    assert create["offerItemIds"]["minItems"] == 1
    assert (create["passengers"]["minItems"], create["passengers"]["maxItems"]) == (1, 18)
    assert (create["ancillaries"]["minItems"], create["ancillaries"]["maxItems"]) == (1, 200)
    price = schemas["PriceInRequest"]["properties"]
    assert price["selections"]["minItems"] == 1


def test_fare_sub_structures_are_typed_as_spec_section_2_2_shapes(client):
    schemas = schema_of(client)["components"]["schemas"]

    fare = schemas["Fare"]["properties"]
    for name, component in (
        ("benefits", "Benefit"),
        ("baggageDisclosures", "BaggageDisclosure"),
        ("penalties", "Penalty"),
        ("seatProfiles", "SeatProfile"),
    ):
        assert fare[name]["items"]["$ref"] == f"#/components/schemas/{component}"
    assert set(schemas["Benefit"]["required"]) == {"label", "included"}
    assert set(schemas["Penalty"]["required"]) == {"code", "description", "typeCode"}
    restriction = schemas["PenaltyRestriction"]["properties"]
    assert len(restriction) == 11
    assert restriction["creditPercent"]["type"] == "number"
    assert schemas["DimensionAllowance"]["required"] == ["lengthUnitOfMeasurement"]
