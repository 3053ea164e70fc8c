"""The JSON request shapes checked in one pass of plain Python, with DRF's validation
kept for every input the pass cannot vouch for (and so for every error and its wording).

DRF validates a body field by field through five to ten method calls each (empty
values, blanks, conversion, validators, error collection); a booking of three
passengers is about sixty fields, which through DRF cost a fifth of a hold's CPU.
`quick_validator(shape)` reads a StrictSerializer's declared fields once per process
and returns a function that either gives exactly what `shape(data=...).validated_data`
would, or raises Unsure. It never decides that an input is wrong: on anything it is not
certain of (a value of another type, a text too long, a field of a kind it does not
know, a missing member) it says Unsure, and DRF runs as before, so an error keeps its
code, path and message.

What it knows, field by field, are the kinds the API's shapes use and the way DRF 3.x
runs them (rest_framework.fields and serializers): CharField and RegexField (blank,
trimming, their validators), ChoiceField, IntegerField, BooleanField, our IsoDateField,
ListField, and nested StrictSerializers one or many. A field of another kind is vouched
for only by its absence. A serializer whose class changes how DRF validates (its own
to_internal_value or run_validation, validate_<field> methods, serializer validators,
read-only fields, a source other than the field's name, a callable default) gets no
quick check at all. tests/api/test_quick_validation.py compares both paths on generated
bodies for every StrictSerializer of the API, and fails on a DRF upgrade that changes
what it relies on.
"""

import re
from collections.abc import Callable, Mapping
from datetime import date
from functools import cache
from typing import Any

from django.core import validators as django_validators
from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.fields import empty
from rest_framework.validators import ProhibitSurrogateCharactersValidator

from airline.api.serializers import (
    IsoDateField,
    StrictSerializer,
    SurrogatesRefused,
    TypedStrictSerializer,
)

Check = Callable[[Any], Any]


class Unsure(Exception):
    """The quick check cannot vouch for this input: DRF's validation decides."""


class _Unsupported(Exception):
    """A shape (or a field of it) validated in a way the quick check does not copy."""


@cache
def quick_validator(shape: type[serializers.Serializer]) -> Check | None:
    """The one-pass check of `shape`'s input, or None when `shape` has none."""
    try:
        return _serializer_check(shape())
    except _Unsupported:
        return None


def _serializer_check(serializer: serializers.Serializer) -> Check:
    kind = type(serializer)
    if kind.to_internal_value not in (
        StrictSerializer.to_internal_value,
        TypedStrictSerializer.to_internal_value,
    ):
        raise _Unsupported(kind)
    if kind.run_validation is not serializers.Serializer.run_validation or list(
        serializer.validators
    ):
        raise _Unsupported(kind)
    members = []
    for name, field in serializer.fields.items():
        if field.read_only or field.source != name or hasattr(serializer, f"validate_{name}"):
            raise _Unsupported(kind, name)
        if field.default is not empty and callable(field.default):
            raise _Unsupported(kind, name)
        members.append((name, _field_check(field), field.required, field.default, field.allow_null))
    names = frozenset(serializer.fields)
    own_fields = serializer.own_fields if isinstance(serializer, TypedStrictSerializer) else {}
    validate = serializer.validate if kind.validate is not serializers.Serializer.validate else None

    def check(data: Any) -> dict:
        if type(data) is not dict or not names.issuperset(data):
            raise Unsure
        kind_of = data.get("type")
        if own_fields and type(kind_of) is str:
            own = own_fields.get(kind_of)
            if own is not None and any(
                name != "type" and name not in own and name in names for name in data
            ):
                raise Unsure
        valid = {}
        for name, field_check, required, default, allow_null in members:
            value = data.get(name, empty)
            if value is empty:
                if required:
                    raise Unsure
                if default is not empty:
                    valid[name] = default
            elif value is None:
                if not allow_null:
                    raise Unsure
                valid[name] = None
            else:
                valid[name] = field_check(value)
        if validate is not None:
            try:
                return validate(valid)
            except Exception:
                # Its refusal, or anything it reads of a bound serializer that this
                # shared one has not got (initial_data, context): DRF runs it properly.
                raise Unsure from None
        return valid

    return check


def _field_check(field: serializers.Field) -> Check:
    kind = type(field)
    if kind in (serializers.CharField, serializers.RegexField):
        return _text_check(field)
    if kind is serializers.ChoiceField:
        return _choice_check(field)
    if kind is serializers.IntegerField:
        return _converted(field, _integer)
    if kind is serializers.BooleanField:
        return _boolean_check(field)
    if kind is IsoDateField:
        return _converted(field, _iso_date)
    if kind is serializers.ListField:
        return _list_check(field, _field_check(field.child), field.allow_empty)
    if kind is serializers.ListSerializer:
        if list(field.validators):
            raise _Unsupported(kind)
        return _list_check(
            field,
            _serializer_check(field.child),
            field.allow_empty,
            max_length=field.max_length,
            min_length=field.min_length,
        )
    if isinstance(field, StrictSerializer):
        return _serializer_check(field)
    return _never_sure


def _never_sure(value: Any) -> Any:
    raise Unsure


def _text_check(field: serializers.CharField) -> Check:
    trim, allow_blank = field.trim_whitespace, field.allow_blank
    valid = _validators_check(field)

    def check(value: Any) -> str:
        if type(value) is not str:
            raise Unsure
        text = value.strip() if trim else value
        if not text:
            if allow_blank:
                return ""
            raise Unsure
        valid(text)
        return text

    return check


def _converted(field: serializers.Field, convert: Check) -> Check:
    """`convert` (the field's own reading of a value, raising Unsure where it is not
    certain), then the field's validators, as DRF runs them on what it read."""
    valid = _validators_check(field)

    def check(value: Any) -> Any:
        answer = convert(value)
        valid(answer)
        return answer

    return check


def _choice_check(field: serializers.ChoiceField) -> Check:
    choices, allow_blank = field.choice_strings_to_values, field.allow_blank

    def choice(value: Any) -> Any:
        if type(value) is not str:
            raise Unsure
        if value == "" and allow_blank:
            return ""
        if value not in choices:
            raise Unsure
        return choices[value]

    return _converted(field, choice)


# Digits as DRF's IntegerField takes them from a string (int() after dropping a trailing
# ".0"); anything else in a string (a sign, spaces, underscores, decimals) is left to it.
_INTEGER_TEXT = re.compile(r"-?[0-9]{1,18}")


def _integer(value: Any) -> int:
    if type(value) is int:
        return value
    if type(value) is str and _INTEGER_TEXT.fullmatch(value):
        return int(value)
    raise Unsure


def _boolean_check(field: serializers.BooleanField) -> Check:
    true = {v for v in field.TRUE_VALUES if type(v) is str}
    false = {v for v in field.FALSE_VALUES if type(v) is str}

    def boolean(value: Any) -> bool:
        if value is True or value is False:
            return value
        if type(value) is str and value in true:
            return True
        if type(value) is str and value in false:
            return False
        raise Unsure

    return _converted(field, boolean)


def _iso_date(value: Any) -> date:
    # YYYY-MM-DD exactly, which strptime's %Y-%m-%d reads as fromisoformat does;
    # strptime also takes "2026-1-5", left to it.
    if type(value) is not str or len(value) != 10 or not value.isascii():
        raise Unsure
    if value[4] != "-" or value[7] != "-":
        raise Unsure
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise Unsure from None


def _list_check(
    field: serializers.Field,
    item: Check,
    allow_empty: bool,
    *,
    max_length: int | None = None,
    min_length: int | None = None,
) -> Check:
    valid = _validators_check(field)

    def check(value: Any) -> list:
        if type(value) is not list:
            raise Unsure
        count = len(value)
        if (
            (not count and not allow_empty)
            or (max_length is not None and count > max_length)
            or (min_length is not None and count < min_length)
        ):
            raise Unsure
        items = [item(v) for v in value]
        valid(items)
        return items

    return check


def _validators_check(field: serializers.Field) -> Check:
    """A field's validators as one function raising Unsure where any would fail: the
    ones DRF's fields add themselves in a line each, any other called as DRF does."""
    checks = [_validator_check(v, field) for v in field.validators]
    if not checks:
        return _nothing_to_check
    if len(checks) == 1:
        return checks[0]

    def check(value: Any) -> None:
        for one in checks:
            one(value)

    return check


def _nothing_to_check(value: Any) -> None:
    return None


def _validator_check(validator: Any, field: serializers.Field) -> Check:
    kind = type(validator)
    limit = getattr(validator, "limit_value", None)
    if kind is django_validators.MaxLengthValidator and type(limit) is int:
        return _refusing(lambda value: len(value) > limit)
    if kind is django_validators.MinLengthValidator and type(limit) is int:
        return _refusing(lambda value: len(value) < limit)
    if kind is django_validators.MaxValueValidator and type(limit) is int:
        return _refusing(lambda value: value > limit)
    if kind is django_validators.MinValueValidator and type(limit) is int:
        return _refusing(lambda value: value < limit)
    if kind is django_validators.ProhibitNullCharactersValidator:
        return _refusing(lambda value: "\x00" in str(value))
    if kind in (SurrogatesRefused, ProhibitSurrogateCharactersValidator):
        return _refusing(_has_surrogate)
    if kind is django_validators.RegexValidator:
        regex = re.compile(validator.regex.pattern, validator.regex.flags)
        if validator.inverse_match:
            return _refusing(lambda value: regex.search(str(value)) is not None)
        return _refusing(lambda value: regex.search(str(value)) is None)
    with_field = getattr(validator, "requires_context", False)

    def check(value: Any) -> None:
        try:
            validator(value, field) if with_field else validator(value)
        except (ValidationError, DjangoValidationError):
            raise Unsure from None

    return check


def _refusing(wrong: Callable[[Any], bool]) -> Check:
    def check(value: Any) -> None:
        if wrong(value):
            raise Unsure

    return check


def _has_surrogate(value: Any) -> bool:
    text = str(value)
    if text.isascii():
        return False
    try:
        text.encode()
    except UnicodeEncodeError:
        return True
    return False


def validated(shape: type[serializers.Serializer], data: Any) -> Mapping[str, Any]:
    """`data` valid against `shape`: the quick check's answer when it can give one, else
    DRF's (whose ValidationError is the registry's ERR-1005 with its paths)."""
    quick = quick_validator(shape)
    if quick is not None:
        try:
            return quick(data)
        except Unsure:
            pass
    serializer = shape(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data
