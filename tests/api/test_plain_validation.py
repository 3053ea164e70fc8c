"""The plain reading of request bodies (airline.api.serializers.plain_valid) against DRF's
serializers: whenever it answers, the serializer finds the body valid and its
validated_data is the same dict, value for value; it never answers for a body the
serializer refuses (those errors are DRF's alone, SPEC.md §4.4). And it does answer for
the bodies clients send, or it would save nothing."""

from datetime import date

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework import serializers

from airline.api.serializers import IsoDateField, StrictSerializer, plain_valid
from offers.serializers import AncillaryIn, PriceIn, SearchIn
from orders.requests.serializers import (
    ChangeOrderIn,
    CreateOrderIn,
    OrderAncillaryIn,
    QuoteIn,
    ReshopIn,
)
from tests.orders.conftest import CARD
from webhooks.serializers import WebhookIn

BODIES = [
    AncillaryIn,
    ChangeOrderIn,
    CreateOrderIn,
    OrderAncillaryIn,
    PriceIn,
    QuoteIn,
    ReshopIn,
    SearchIn,
    WebhookIn,
]

# Values no field takes as they are, and texts at the edges of text fields.
FULLWIDTH_DATE = "\uff12\uff10\uff12\uff16-01-05"
ODD = [None, 0, 1, True, False, 1.5, [], {}, "", " ", "a\x00b", "\ud800", FULLWIDTH_DATE]
TYPES = ["Hold", "CreditCard", "AirlineCredit", "Cash"]  # PaymentIn.validate reads `type`


def valid(field: serializers.Field) -> st.SearchStrategy:
    """Values `field` takes (text with the whitespace it strips, too)."""
    if isinstance(field, serializers.ListSerializer | serializers.ListField):
        least = 0 if field.allow_empty else 1
        return st.lists(valid(field.child), min_size=least, max_size=max(least, 2))
    if isinstance(field, serializers.Serializer):
        required = {n: valid(f) for n, f in field.fields.items() if f.required}
        optional = {n: valid(f) for n, f in field.fields.items() if not f.required}
        return st.fixed_dictionaries(required, optional=optional)
    if isinstance(field, serializers.ChoiceField):
        return st.sampled_from(list(field.choices))
    if isinstance(field, IsoDateField):
        days = st.dates(min_value=date(1900, 1, 1), max_value=date(2100, 12, 31))
        return days.map(date.isoformat)
    if isinstance(field, serializers.IntegerField):
        return st.integers(field.min_value, field.max_value)
    if isinstance(field, serializers.DecimalField):
        cents = st.integers(0, 10**field.max_digits - 1).map(lambda n: n / 10**field.decimal_places)
        return cents | st.integers(0, 10**6) | st.sampled_from([0.1, 785.76, 1e-7, 1e11])
    if isinstance(field, serializers.BooleanField):
        return st.booleans()
    if isinstance(field, serializers.RegexField):
        (pattern,) = [v.regex for v in field.validators if hasattr(v, "regex")]
        return st.from_regex(pattern, fullmatch=True)
    most = min(field.max_length or 12, 12)
    words = st.text(alphabet="abcXYZ019 -.@éß", min_size=1, max_size=most)
    padded = st.tuples(st.sampled_from(["", " ", "\t"]), words, st.sampled_from(["", " "]))
    return padded.map("".join) | st.sampled_from(TYPES)


def mutated(data: st.DataObject, value):
    """`value` with one thing wrong, or right but odd, somewhere: a member replaced by an
    odd value or one at a limit, dropped, or a property added; or `value` as it is."""
    action = data.draw(st.sampled_from(["keep", "descend", "replace", "drop", "add"]))
    if action == "keep":
        return value
    if isinstance(value, dict | list) and value and action != "replace":
        keys = sorted(value) if isinstance(value, dict) else range(len(value))
        key = data.draw(st.sampled_from(list(keys)))
        copy = dict(value) if isinstance(value, dict) else list(value)
        if action == "drop":
            del copy[key]
        elif action == "add" and isinstance(copy, dict):
            copy["unknownProperty"] = "x"
        else:
            copy[key] = mutated(data, value[key])
        return copy
    edges = [*ODD, "x" * 500, " " * 3, -1, 10**6, 10**20]
    if isinstance(value, str):
        edges += [value + "x" * 100, value.upper(), value + "\x00", " " + value + " "]
    return data.draw(st.sampled_from(edges))


def answers_agree(shape: type[serializers.Serializer], data) -> None:
    plain = plain_valid(shape, data)
    serializer = shape(data=data)
    valid = serializer.is_valid()
    if plain is not None:
        assert valid, serializer.errors
        assert plain == serializer.validated_data
        assert _types(plain) == _types(serializer.validated_data)


def _types(value):
    """`value`'s shape with every leaf replaced by its type: == alone holds 1 == True."""
    if isinstance(value, dict):
        return {k: _types(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_types(v) for v in value]
    return type(value)


@pytest.mark.parametrize("shape", BODIES, ids=lambda shape: shape.__name__)
@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_it_answers_only_what_the_serializer_would(shape, data):
    answers_agree(shape, mutated(data, data.draw(valid(shape()))))


def create_body(**changes) -> dict:
    body = {
        "offerId": "aY9rCJ-xDYWyHBa3.1",
        "offerItemIds": ["aY9rCJ-xDYWyHBa3.1.1", "aY9rCJ-xDYWyHBa3.1.2"],
        "passengers": [
            {
                "passengerId": "ADT-1",
                "type": "ADT",
                "name": {"givenName": "Ada", "surname": "Lovelace"},
                "dateOfBirth": "1985-12-10",
                "gender": "Female",
                "loyaltyProgram": {"programCode": "MX", "accountNumber": "123456"},
                "travelDocuments": [
                    {
                        "documentType": "PT",
                        "documentNumber": "X1234567",
                        "issuingCountry": "GB",
                        "expiryDate": "2031-04-30",
                    }
                ],
                "contacts": {"emailAddress": "ada@example.com"},
                "infantPassengerId": "INF-1",
            },
            {"passengerId": "CHD-1", "type": "CHD", "name": {"givenName": "A", "surname": "B"}},
            {"passengerId": "INF-1", "type": "INF", "name": {"givenName": "C", "surname": "B"}},
        ],
        "contact": {"emailAddress": "ada@example.com", "phoneNumber": "+1 401 555 0123"},
        "payment": {"type": "Hold"},
        "ancillaries": [
            {
                "offerId": "s1",
                "offerItemId": "s1.1",
                "passengerIds": ["ADT-1"],
                "seat": {"row": 12, "column": "C"},
            }
        ],
    }
    body.update(changes)
    return body


@pytest.mark.parametrize(
    "body",
    [
        create_body(),
        create_body(payment=CARD),
        create_body(
            payment={
                "type": "AirlineCredit",
                "creditCode": "CR1",
                "card": {k: v for k, v in CARD.items() if k != "type"},
            }
        ),
        create_body(payment={"type": "Cash"}),  # refused by the service (ERR-6000), not here
        create_body(remarks=""),
        create_body(payment={**CARD, "amount": {"amount": 785.76, "currency": "USD"}}),
        create_body(payment={**CARD, "amount": {"amount": 12, "currency": "USD"}}),
        create_body(contact={"emailAddress": "  ada@example.com  "}),
    ],
)
def test_it_reads_the_bodies_clients_send(body):
    read = plain_valid(CreateOrderIn, body)

    assert read is not None
    serializer = CreateOrderIn(data=body)
    assert serializer.is_valid(), serializer.errors
    assert read == serializer.validated_data
    assert read["passengers"][0]["dateOfBirth"] == date(1985, 12, 10)


@pytest.mark.parametrize(
    "body",
    [
        create_body(payment={"type": "CreditCard"}),  # PaymentIn.validate: card fields
        create_body(passengers=[]),
        create_body(offerId=None),
        create_body(contact={"emailAddress": "a@b.c", "name": {"givenName": 42}}),
        create_body(extra="x"),
    ],
)
def test_it_leaves_refusals_to_the_serializer(body):
    assert plain_valid(CreateOrderIn, body) is None
    assert not CreateOrderIn(data=body).is_valid()


def test_it_leaves_serializers_with_defaults_to_drf():
    """A field with a default (WebhookIn's events and format) is not read plainly: the
    serializer fills the default in."""
    assert plain_valid(WebhookIn, {"url": "https://example.com/hook"}) is None


def test_it_reads_only_strict_serializers():
    class Lenient(serializers.Serializer):
        name = serializers.CharField()

    assert not issubclass(Lenient, StrictSerializer)
    assert plain_valid(Lenient, {"name": "x"}) is None


def test_a_lone_surrogate_is_refused_with_drfs_own_message_and_code():
    class Named(StrictSerializer):
        name = serializers.CharField()
        aliases = serializers.ListField(child=serializers.CharField())

    class DrfNamed(serializers.Serializer):
        name = serializers.CharField()
        aliases = serializers.ListField(child=serializers.CharField())

    body = {"name": "Ada \ud800", "aliases": ["ok", "L\udc00ve"]}
    ours, drfs = Named(data=body), DrfNamed(data=body)

    assert not ours.is_valid()
    assert not drfs.is_valid()
    assert ours.errors == drfs.errors
    assert ours.errors["name"][0].code == "surrogate_characters_not_allowed"
    assert Named(data={"name": "Ada Lovelace \U0001f600", "aliases": ["é"]}).is_valid()
