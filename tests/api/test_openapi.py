"""The OpenAPI description and its docs pages, served offline (issue: OpenAPI)."""

import re

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
    assert "Idempotency-Key" in {p["name"] for p in create["parameters"]}
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
