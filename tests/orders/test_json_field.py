"""The order models' JSON documents are written and read with orjson
(orders.models.fields.JSONField): the same documents as the json module would store and
give back, whichever way a row is written."""

import json
from datetime import UTC, datetime
from decimal import Decimal

import pytest
from django.db import connection, transaction

from orders.core.rows import row_new, rows_insert
from orders.models import Contact, Order

DOCUMENTS = [
    {"line1": "12 Orchard Street", "city": "Providence"},
    {"amount": 563.97, "taxes": [{"amount": 42.3}, {"amount": 0.1}], "count": 2**63 - 1},
    {"given": "Zoë", "note": '日本 ✈ \u00e9\n"quoted" \\ back', "empty": {}, "none": None},
    {1: "an integer key", "flags": [True, False, None, 0, -1, 1e-7, 1.5e10]},
    [],
    "a bare string",
]


@pytest.fixture
def order(default_seller) -> Order:
    at = datetime(2026, 1, 5, 9, tzinfo=UTC)
    return rows_insert(
        [
            row_new(
                Order,
                order_id="ORD-JSON1",
                record_locator="JSON01",
                owner_code="MX",
                seller=default_seller,
                channel="JSON",
                status="ONHOLD",
                created_at=at,
                updated_at=at,
                total=Decimal("10.5"),
                paid=Decimal(0),
                source_offer_id="offer-json",
            )
        ]
    )[0]


def stored_text(contact: Contact) -> str:
    """The document as the database holds it (PostgreSQL's jsonb text, SQLite's text)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT postal_address FROM orders_contact WHERE id = %s", [contact.pk])
        return cursor.fetchone()[0]


def as_the_json_module_stores(document) -> object:
    """What the database holds for the json module's text of `document`, read back."""
    if connection.vendor != "postgresql":
        return json.loads(json.dumps(document))
    with connection.cursor() as cursor:
        cursor.execute("SELECT %s::jsonb::text", [json.dumps(document)])
        return json.loads(cursor.fetchone()[0])


@pytest.mark.parametrize("document", DOCUMENTS, ids=range(len(DOCUMENTS)))
@pytest.mark.parametrize("direct", [True, False], ids=["rows_insert", "orm"])
def test_a_document_is_stored_and_read_back_as_the_json_module_would(order, document, direct):
    if direct:
        contact = rows_insert(
            [row_new(Contact, order=order, ref="CTC-1", postal_address=document)]
        )[0]
    else:
        contact = Contact.objects.create(order=order, ref="CTC-1", postal_address=document)

    expected = json.loads(json.dumps(document))  # integer keys become strings
    assert json.loads(stored_text(contact)) == as_the_json_module_stores(document)
    assert Contact.objects.get(pk=contact.pk).postal_address == expected
    if direct:  # rows_insert keeps the document as the database gave it back
        assert contact.postal_address == expected


def test_what_the_json_module_refuses_is_refused(order):
    with pytest.raises(TypeError), transaction.atomic():
        Contact.objects.create(order=order, ref="CTC-1", postal_address={"amount": Decimal("1")})
    assert not Contact.objects.exists()


def test_an_integer_past_64_bits_is_refused_rather_than_read_back_as_a_float(order):
    # orjson reads such an integer as a float; writing none keeps every read exact.
    with pytest.raises(TypeError), transaction.atomic():
        Contact.objects.create(order=order, ref="CTC-1", postal_address={"n": 2**64})
    assert not Contact.objects.exists()
