"""Serializer pieces every JSON endpoint shares."""

import copy
import sys
from collections.abc import Callable, Mapping
from datetime import date, datetime
from decimal import Decimal
from functools import cache
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.validators import (
    MaxLengthValidator,
    MaxValueValidator,
    MinLengthValidator,
    MinValueValidator,
    ProhibitNullCharactersValidator,
    RegexValidator,
)
from rest_framework import ISO_8601, serializers
from rest_framework.exceptions import ErrorDetail
from rest_framework.fields import empty
from rest_framework.settings import api_settings
from rest_framework.validators import ProhibitSurrogateCharactersValidator

from airline.api.errors import MAX_FIELDS

# The code of an error detail that counts properties left unnamed rather than naming one:
# its text is the count (StrictSerializer; airline/api/exceptions.py adds them up).
UNLISTED = "unlisted"


class IsoDateField(serializers.DateField):
    """A date written YYYY-MM-DD in ASCII digits. strptime's %Y takes any Unicode digit,
    so a date in fullwidth digits would pass DRF's DateField."""

    def __init__(self, **kwargs):
        kwargs.setdefault("help_text", "YYYY-MM-DD")
        super().__init__(input_formats=["%Y-%m-%d"], **kwargs)

    def to_internal_value(self, value):
        if isinstance(value, str) and not value.isascii():
            self.fail("invalid", format="YYYY-MM-DD")
        return super().to_internal_value(value)


class SurrogatesRefused(ProhibitSurrogateCharactersValidator):
    """DRF's check that a text holds no lone surrogate, with its message and code, at C
    speed: DRF's looks at one character at a time in Python, 40-60 ms for a string of a
    MiB, which was most of what such a hostile body cost (the budget is 50 ms a MiB:
    docs/contributors/http-kernel.md).
    An ASCII text has none; any other fails to encode where it has one."""

    def __call__(self, value):
        text = str(value)
        if text.isascii():
            return
        try:
            text.encode()
        except UnicodeEncodeError as exc:
            raise serializers.ValidationError(
                self.message.format(code_point=ord(text[exc.start])), code=self.code
            ) from None


def _surrogates_refused_quickly(field: serializers.Field) -> None:
    """Swap DRF's surrogate check of a text field (or a list's text items) for ours."""
    for text in (field, getattr(field, "child", None)):
        if isinstance(text, serializers.CharField):
            text.validators = [
                SurrogatesRefused() if type(v) is ProhibitSurrogateCharactersValidator else v
                for v in text.validators
            ]


class StrictSerializer(serializers.Serializer):
    """Refuses properties it does not declare (SPEC.md §4.4: "no additional properties"),
    naming each one, so a misspelt field is an error rather than silently ignored; and a
    number or a boolean where a string is declared (DRF's CharField would take `42` as
    "42"), so the request matches the OpenAPI description to the letter."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # Once per class, on the fields every instance shallow-copies (get_fields).
        for field in cls._declared_fields.values():
            _surrogates_refused_quickly(field)

    def get_fields(self):
        # DRF deep-copies every declared field for every serializer instance, which was
        # half the cost of validating a search request. A shallow copy is enough: each
        # copy is bound to this instance, and declared fields keep no per-request state
        # (their validators and messages are only read).
        return {name: copy.copy(field) for name, field in self._declared_fields.items()}

    def to_internal_value(self, data):
        if isinstance(data, Mapping):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                # Named up to MAX_FIELDS, the rest counted (DESIGN.md §11 "Error detail
                # size"): an error detail per property of a hostile body was most of
                # its cost. The count travels as an UNLISTED detail of the
                # object, which validation_error adds up instead of echoing.
                detail: dict[str, list] = {
                    name: ["Unknown property."] for name in unknown[:MAX_FIELDS]
                }
                if len(unknown) > MAX_FIELDS:
                    detail[api_settings.NON_FIELD_ERRORS_KEY] = [
                        ErrorDetail(str(len(unknown) - MAX_FIELDS), code=UNLISTED)
                    ]
                raise serializers.ValidationError(detail)
            not_text = {
                name: ["Not a valid string."]
                for name, field in self.fields.items()
                if name in data and not _text_as_declared(field, data[name])
            }
            if not_text:
                raise serializers.ValidationError(not_text)
        return super().to_internal_value(data)


class TypedStrictSerializer(StrictSerializer):
    """A StrictSerializer whose `type` decides which of its members an object may have
    (a payment, a change order entry, a reshop instruction): `own_fields` maps each type
    to its own members, and a member of another type is refused, named, as an unknown
    one is, rather than silently ignored. A type not in `own_fields` is left to the
    service (e.g. a payment type we do not take is ERR-6000). The OpenAPI document
    lists the same members per variant (airline.api.openapi.typed_variants)."""

    own_fields: Mapping[str, tuple[str, ...]] = {}

    def to_internal_value(self, data):
        if isinstance(data, Mapping) and isinstance(data.get("type"), str):
            own = self.own_fields.get(data["type"])
            if own is not None:
                others = sorted(
                    name for name in data if name in self.fields and name not in {"type", *own}
                )
                if others:
                    raise serializers.ValidationError(
                        {name: [f"Not a member of {data['type']}."] for name in others[:MAX_FIELDS]}
                    )
        return super().to_internal_value(data)


def _text_as_declared(field: serializers.Field, value) -> bool:
    """False when `field` declares text (or a list of text) and `value` holds another
    JSON type there; anything else is left to the field itself."""
    if value is None:
        return True
    if isinstance(field, serializers.CharField | serializers.ChoiceField):
        return isinstance(value, str)
    if isinstance(field, serializers.ListField) and isinstance(
        field.child, serializers.CharField | serializers.ChoiceField
    ):
        return not isinstance(value, list) or all(isinstance(v, str) for v in value)
    return True


# --- Plainly valid input, read without DRF ---------------------------------------------
#
# Validating a create-order body through DRF's serializers cost ~1 ms: a dozen calls per
# value (empty checks, coercion, each validator, field copies, error bookkeeping). Most
# requests are plainly valid: every value of the JSON type its field takes as it is,
# within its limits. `plain_valid` reads those directly, giving the very dict DRF's
# validated_data would be; at the first value it is not sure of (a wrong type, a null, a
# blank, a limit passed, a field kind or validator it does not know) it gives up, and the
# serializer validates the request from the start. So every error is still DRF's, worded
# and placed as before (SPEC.md §4.4); only success takes the short way.
# tests/api/test_plain_validation.py holds the two to the same answers;
# tests/api/test_framework_shortcuts.py fails on a DRF upgrade that changes the field
# attributes read here (`source_attrs`, `choice_strings_to_values`, `datetime_parser`,
# `trim_whitespace`, the validators' kinds and `limit_value`). Measured gain: a
# create-order body read in 6 µs against DRF's 283 µs, about 6% of a hold's CPU in the
# service (9.7 against 10.3 ms; `python -m benchmarks.shortcuts`, 60 holds each way).
# API_PLAIN_VALIDATION=0 (settings) validates every body with DRF.


class _NotPlain(Exception):
    """This input is not one the plain reading is sure of."""


class _Unsupported(Exception):
    """A serializer with a field, validator or hook the plain reading does not know."""


Reader = Callable[[Any], Any]


def plain_valid(shape: type[serializers.Serializer], data: Any) -> dict[str, Any] | None:
    """`data` as `shape(data=data)`'s validated_data when it is plainly valid; None when
    the serializer must decide (it may still find the data valid), and always None with
    settings.API_PLAIN_VALIDATION off."""
    if not settings.API_PLAIN_VALIDATION:
        return None
    read = _reader_of(shape)
    if read is None:
        return None
    try:
        return read(data)
    except _NotPlain:
        return None


@cache
def _reader_of(shape: type[serializers.Serializer]) -> Reader | None:
    if not issubclass(shape, StrictSerializer):
        return None  # a serializer that ignores unknown properties
    try:
        return _object_reader(shape())
    except _Unsupported:
        return None


def _object_reader(serializer: serializers.Serializer) -> Reader:
    """A StrictSerializer's object: no property it does not declare, every required one,
    each read by its field; then the serializer's own `validate`, if it has one."""
    if not isinstance(serializer, StrictSerializer) or serializer.validators:
        raise _Unsupported
    members = []
    for name, field in serializer.fields.items():
        if (
            field.read_only
            or field.default is not empty
            or field.source_attrs != [name]
            or hasattr(serializer, f"validate_{name}")
        ):
            raise _Unsupported
        members.append((name, _reader(field), field.required))
    names = frozenset(serializer.fields)
    # A TypedStrictSerializer's object with another type's member: DRF words the error.
    own = {
        kind: frozenset({"type", *members})
        for kind, members in getattr(serializer, "own_fields", {}).items()
    }
    validate = (
        serializer.validate
        if type(serializer).validate is not serializers.Serializer.validate
        else None
    )

    def read(value: Any) -> dict[str, Any]:
        if type(value) is not dict or not names.issuperset(value):
            raise _NotPlain
        kind = value.get("type")
        if own and type(kind) is str and not own.get(kind, names).issuperset(value):
            raise _NotPlain
        out = {}
        for name, read_member, required in members:
            member = value.get(name, empty)
            if member is empty:
                if required:
                    raise _NotPlain
            elif member is None:
                raise _NotPlain
            else:
                out[name] = read_member(member)
        if validate is not None:
            try:
                out = validate(out)
            except (serializers.ValidationError, DjangoValidationError):
                raise _NotPlain from None
        return out

    return read


def _reader(field: serializers.Field) -> Reader:
    kind = type(field)
    if kind is serializers.ListSerializer:
        return _many_reader(field, _object_reader(field.child), field.max_length, field.min_length)
    if isinstance(field, StrictSerializer):
        return _object_reader(field)
    if kind is serializers.ListField:
        limits = _limits(field.validators, (MinLengthValidator, MaxLengthValidator))
        return _many_reader(field, _reader(field.child), limits[1], limits[0])
    if kind in (serializers.CharField, serializers.RegexField):
        return _text_reader(field)
    if kind is serializers.ChoiceField and not field.validators:
        return _choice_reader(field)
    if kind is IsoDateField and not field.validators:
        return _date_reader(field.input_formats, field.datetime_parser)
    if kind is serializers.IntegerField:
        low, high = _limits(field.validators, (MinValueValidator, MaxValueValidator))
        return _integer_reader(low, high)
    if kind is serializers.DecimalField and not field.validators:
        return _decimal_reader(field)
    raise _Unsupported


def _many_reader(
    field: serializers.Field, read_item: Reader, most: int | None, least: int | None
) -> Reader:
    """A list (ListField, or a serializer with many=True), each item read by `read_item`."""
    if field.validators and type(field) is serializers.ListSerializer:
        raise _Unsupported
    allow_empty = field.allow_empty
    most = sys.maxsize if most is None else most
    least = 0 if least is None else least

    def read(value: Any) -> list:
        if type(value) is not list or not least <= len(value) <= most:
            raise _NotPlain
        if not value and not allow_empty:
            raise _NotPlain
        return [read_item(item) for item in value]

    return read


def _limits(validators: list, kinds: tuple[type, type]) -> tuple[Any, Any]:
    """(lower, upper) limits of a field whose validators are at most one of each of
    `kinds` (None where there is none): any other validator is not plain."""
    found = {}
    for validator in validators:
        if type(validator) not in kinds or callable(validator.limit_value):
            raise _Unsupported
        found[type(validator)] = validator.limit_value
    return found.get(kinds[0]), found.get(kinds[1])


def _text_reader(field: serializers.CharField) -> Reader:
    """A str, stripped as the field strips it, within its length and patterns."""
    least, most, patterns = 0, sys.maxsize, []
    for validator in field.validators:
        kind = type(validator)
        if kind is MaxLengthValidator and not callable(validator.limit_value):
            most = validator.limit_value
        elif kind is MinLengthValidator and not callable(validator.limit_value):
            least = validator.limit_value
        elif kind is RegexValidator:
            patterns.append((validator.regex, validator.inverse_match))
        elif kind not in (
            ProhibitNullCharactersValidator,
            ProhibitSurrogateCharactersValidator,
            SurrogatesRefused,
        ):
            raise _Unsupported
    allow_blank, trim = field.allow_blank, field.trim_whitespace

    def read(value: Any) -> str:
        if type(value) is not str:
            raise _NotPlain
        text = value.strip() if trim else value
        if not text:  # "" or, stripped, only whitespace: DRF's blank
            if allow_blank:
                return ""
            raise _NotPlain
        if not least <= len(text) <= most or "\x00" in text:
            raise _NotPlain
        if not text.isascii():
            try:
                text.encode()
            except UnicodeEncodeError:  # a lone surrogate
                raise _NotPlain from None
        for regex, inverse in patterns:
            if (regex.search(text) is None) != inverse:
                raise _NotPlain
        return text

    return read


def _choice_reader(field: serializers.ChoiceField) -> Reader:
    choices, allow_blank = dict(field.choice_strings_to_values), field.allow_blank

    def read(value: Any) -> Any:
        if type(value) is not str:
            raise _NotPlain
        if value == "" and allow_blank:
            return ""
        if value not in choices:
            raise _NotPlain
        return choices[value]

    return read


def _date_reader(formats: list[str], parse: Callable[[str, str], datetime]) -> Reader:
    if any(f.lower() == ISO_8601 for f in formats):
        raise _Unsupported

    def read(value: Any) -> date:
        if type(value) is not str or not value.isascii():
            raise _NotPlain
        for form in formats:
            try:
                return parse(value, form).date()
            except ValueError:
                continue
        raise _NotPlain

    return read


def _decimal_reader(field: serializers.DecimalField) -> Reader:
    """A JSON number with at most the field's decimal places and digits, as the Decimal
    DRF makes of it (from its str, quantized to the field's places)."""
    places, digits = field.decimal_places, field.max_digits
    if places is None or digits is None:
        raise _Unsupported
    step = Decimal(1).scaleb(-places)
    bound = Decimal(10) ** (digits - places)  # DRF: at most digits - places whole digits

    def read(value: Any) -> Decimal:
        if type(value) not in (int, float):
            raise _NotPlain
        number = Decimal(str(value))
        if not number.is_finite():
            raise _NotPlain
        if -number.as_tuple().exponent > places or abs(number) >= bound:
            raise _NotPlain
        return number.quantize(step)

    return read


def _integer_reader(low: int | None, high: int | None) -> Reader:
    low = -sys.maxsize - 1 if low is None else low
    high = sys.maxsize if high is None else high

    def read(value: Any) -> int:
        if type(value) is not int or not low <= value <= high:
            raise _NotPlain
        return value

    return read
