"""Serializer pieces every JSON endpoint shares."""

import copy
from collections.abc import Mapping

from rest_framework import serializers
from rest_framework.exceptions import ErrorDetail
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
    MiB, which would be most of what such a hostile body costs (the budget is 50 ms a MiB:
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
        # DRF deep-copies every declared field for every serializer instance, which is
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
