"""The one-pass check of request shapes (airline/api/quick_validation.py) against DRF's
own validation, on bodies generated for every StrictSerializer the API has: whenever the
quick check answers, DRF finds the same body valid and gives the same values, of the same
types; whenever DRF refuses a body, the quick check is unsure. And the bodies the hot
requests send are answered by the quick check, so it is not unsure of everything."""

import random
import string
from collections.abc import Mapping
from datetime import date
from decimal import Decimal

import pytest
from django.urls import get_resolver
from rest_framework import serializers

from airline.api.quick_validation import Unsure, quick_validator, validated
from airline.api.serializers import IsoDateField, StrictSerializer, TypedStrictSerializer
from offers.serializers import SearchIn
from orders.requests.serializers import CreateOrderIn

BODIES_PER_SHAPE = 400

TEXTS = [
    "Ada",
    "  Ada  ",
    "",
    "   ",
    "GB",
    "gb",
    "USD",
    "PVD",
    "123",
    "MX123",
    "-5",
    "007",
    "1_000",
    "+3",
    " 42",
    "true",
    "False",
    "yes",
    "ADT",
    "INF",
    "Hold",
    "CreditCard",
    "PT",
    "P",
    "Male",
    "2026-12-05",
    "2026-2-30",
    "2026-1-5",
    "\uff12\uff10\uff12\uff16-12-05",  # fullwidth digits
    "20261205",
    "2026-W49-1",
    "2026-12-05T10:00:00",
    "x" * 65,
    "y" * 101,
    "nul\x00byte",
    "lone \ud800 surrogate",
    "Zoë",
    "ada@example.com",
]
OTHERS = [None, 0, 1, -1, 99, 100, 1000, 2**70, 1.5, 3.0, True, False, [], {}, ["Ada"], {"a": 1}]


def _shapes() -> list[type[StrictSerializer]]:
    assert get_resolver().url_patterns  # every view, and so every shape, imported
    found, todo = [], [StrictSerializer]
    while todo:
        kind = todo.pop()
        for sub in kind.__subclasses__():
            todo.append(sub)
            if sub.__module__.split(".")[0] != "tests" and sub is not TypedStrictSerializer:
                found.append(sub)
    return sorted(found, key=lambda k: f"{k.__module__}.{k.__qualname__}")


def _value(field: serializers.Field, rng: random.Random, depth: int) -> object:
    """A value for `field`: mostly one it may take, sometimes anything at all."""
    if rng.random() < 0.08:
        return rng.choice(TEXTS + OTHERS)
    if isinstance(field, serializers.ListSerializer):
        return [_body(field.child, rng, depth + 1) for _ in range(rng.choice([0, 1, 1, 2, 3]))]
    if isinstance(field, serializers.Serializer):
        return _body(field, rng, depth + 1)
    if isinstance(field, serializers.ListField):
        return [_value(field.child, rng, depth) for _ in range(rng.choice([0, 1, 2]))]
    if isinstance(field, serializers.ChoiceField):
        return rng.choice([*map(str, field.choices), "", "nope"])
    if isinstance(field, IsoDateField):
        return rng.choice(
            ["2026-12-05", "1970-01-01", "2026-1-5", "2026-02-30", "20261205", "2026-W49-1"]
        )
    if isinstance(field, serializers.IntegerField):
        return rng.choice([0, 1, 5, 10, 99, 1000, 1001, "12", "-3", " 7", "5.0", 2.0, True])
    if isinstance(field, serializers.BooleanField):
        return rng.choice([True, False, "true", "false", "1", "0", "yes", 1, None])
    if isinstance(field, serializers.DecimalField):
        return rng.choice(["12.50", 12.5, "1e3", "abc", 0])
    if isinstance(field, serializers.RegexField):
        pattern = field.validators[-1].regex
        fits = [t for t in TEXTS if pattern.search(t)]
        return rng.choice(fits or TEXTS)
    if isinstance(field, serializers.CharField):
        size = rng.choice([1, 3, 8, field.max_length or 8])
        word = "".join(rng.choice(string.ascii_letters + " ") for _ in range(size))
        return rng.choice([word, word, rng.choice(TEXTS)])
    return rng.choice(TEXTS + OTHERS)


def _body(shape: serializers.Serializer, rng: random.Random, depth: int = 0) -> object:
    if depth > 4 or rng.random() < 0.02:
        return rng.choice(OTHERS)
    fields = dict(shape.fields)
    body = {}
    if isinstance(shape, TypedStrictSerializer) and shape.own_fields and rng.random() < 0.8:
        kind = rng.choice(sorted(shape.own_fields))
        body["type"] = kind
        if rng.random() < 0.9:
            fields = {n: f for n, f in fields.items() if n in shape.own_fields[kind]}
    for name, field in fields.items():
        if name in body:
            continue
        if field.required or rng.random() < 0.5:
            body[name] = _value(field, rng, depth)
        if rng.random() < 0.03:
            body.pop(name, None)
    if rng.random() < 0.03:
        body["unknownMember"] = "x"
    return body


def _same(quick: object, drf: object) -> bool:
    """Equal, and of the same types all the way down (1 == True == 1.0 does not do)."""
    if type(quick) is not type(drf) and not (
        isinstance(quick, Mapping) and isinstance(drf, Mapping)
    ):
        return False
    if isinstance(quick, Mapping):
        return list(quick) == list(drf) and all(_same(quick[k], drf[k]) for k in quick)
    if isinstance(quick, list):
        return len(quick) == len(drf) and all(map(_same, quick, drf))
    return quick == drf


def _drf(shape, body):
    serializer = shape(data=body)
    return serializer.validated_data if serializer.is_valid() else None


SHAPES = _shapes()
QUICK = [shape for shape in SHAPES if quick_validator(shape) is not None]


@pytest.mark.parametrize("shape", QUICK, ids=lambda s: s.__qualname__)
def test_the_quick_check_answers_only_what_drf_would(shape):
    quick = quick_validator(shape)
    rng = random.Random(shape.__qualname__)
    answered = refused = 0
    for _ in range(BODIES_PER_SHAPE):
        body = _body(shape(), rng)
        drf = _drf(shape, body)
        try:
            mine = quick(body)
        except Unsure:
            refused += drf is None
            continue
        assert drf is not None, f"quick check took what DRF refuses: {body!r}"
        assert _same(mine, drf), (body, mine, drf)
        answered += 1
    assert answered + refused > BODIES_PER_SHAPE // 4, (answered, refused)


def test_shapes_the_quick_check_leaves_to_drf_are_few_and_known():
    left = sorted(s.__qualname__ for s in SHAPES if s not in QUICK)
    assert left == ["OrderListQuery", "WebhookIn"]


BOOKING = {
    "offerId": "OFR-2f1c0a",
    "offerItemIds": ["OFR-2f1c0a-1", "OFR-2f1c0a-2"],
    "passengers": [
        {
            "passengerId": "ADT-1",
            "type": "ADT",
            "name": {"givenName": "Ada", "surname": "Lovelace"},
            "dateOfBirth": "1985-12-10",
            "travelDocuments": [
                {"documentType": "PT", "documentNumber": "X123", "expiryDate": "2031-01-01"}
            ],
            "infantPassengerId": "INF-1",
        },
        {"passengerId": "INF-1", "type": "INF", "name": {"givenName": "Bo", "surname": "L"}},
    ],
    "contact": {"emailAddress": "ada@example.com", "phoneNumber": "+1 401 555 0123"},
    "payment": {"type": "CreditCard", "cardType": "VI", "cardNumber": "4111111111111111",
                "expiryDate": "1230", "securityCode": "123"},
    "ancillaries": [
        {"offerId": "SEA-1", "offerItemId": "SEA-1-1", "passengerIds": ["ADT-1"],
         "seat": {"row": 12, "column": "C"}}
    ],
}  # fmt: skip
SEARCH = {
    "originDestinations": [
        {"origin": "PVD", "destination": "CHS", "departureDate": "2026-12-05"},
        {"origin": "CHS", "destination": "PVD", "departureDate": "2026-12-12"},
    ],
    "passengers": [{"type": "ADT"}, {"type": "ADT"}, {"type": "CHD"}],
    "cabinTypeCode": "Y",
}


@pytest.mark.parametrize(("shape", "body"), [(CreateOrderIn, BOOKING), (SearchIn, SEARCH)])
def test_the_hot_bodies_are_answered_by_the_quick_check(shape, body):
    answer = quick_validator(shape)(body)
    assert _same(answer, _drf(shape, body))
    assert answer is not body


def test_a_refused_body_gets_drfs_error():
    body = {**BOOKING, "passengers": [{**BOOKING["passengers"][0], "dateOfBirth": "1985-1-41"}]}
    with pytest.raises(serializers.ValidationError) as refused:
        validated(CreateOrderIn, body)
    serializer = CreateOrderIn(data=body)
    assert not serializer.is_valid()
    assert refused.value.detail == serializer.errors


def test_a_member_of_a_kind_it_does_not_know_is_left_to_drf():
    amount = {"amount": "120.50", "currency": "USD"}
    body = {**BOOKING, "payment": {**BOOKING["payment"], "amount": amount}}
    with pytest.raises(Unsure):
        quick_validator(CreateOrderIn)(body)
    payment = validated(CreateOrderIn, body)["payment"]
    assert payment["amount"]["amount"] == Decimal("120.50")


def test_a_shape_changing_how_drf_validates_gets_no_quick_check():
    class Checked(StrictSerializer):
        name = serializers.CharField()

        def validate_name(self, value):
            return value.upper()

    class Defaulted(StrictSerializer):
        day = IsoDateField(default=date.today)

    assert quick_validator(Checked) is None
    assert quick_validator(Defaulted) is None


def test_a_validate_reading_the_bound_serializer_is_left_to_drf():
    class Echoed(StrictSerializer):
        name = serializers.CharField()

        def validate(self, attrs):
            return {**attrs, "sent": dict(self.initial_data)}

    with pytest.raises(Unsure):
        quick_validator(Echoed)({"name": "Ada"})
    assert validated(Echoed, {"name": "Ada"}) == {"name": "Ada", "sent": {"name": "Ada"}}
