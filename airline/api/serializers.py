"""Serializer pieces every JSON endpoint shares."""

import copy
from collections.abc import Mapping

from rest_framework import serializers


class IsoDateField(serializers.DateField):
    """A date written YYYY-MM-DD in ASCII digits. strptime's %Y takes any Unicode digit,
    so a date in fullwidth digits would pass DRF's DateField (issue 14 item 12)."""

    def __init__(self, **kwargs):
        kwargs.setdefault("help_text", "YYYY-MM-DD")
        super().__init__(input_formats=["%Y-%m-%d"], **kwargs)

    def to_internal_value(self, value):
        if isinstance(value, str) and not value.isascii():
            self.fail("invalid", format="YYYY-MM-DD")
        return super().to_internal_value(value)


class StrictSerializer(serializers.Serializer):
    """Refuses properties it does not declare (SPEC.md §4.4: "no additional properties"),
    naming each one, so a misspelt field is an error rather than silently ignored; and a
    number or a boolean where a string is declared (DRF's CharField would take `42` as
    "42"), so the request matches the OpenAPI description to the letter."""

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
                raise serializers.ValidationError({name: ["Unknown property."] for name in unknown})
            not_text = {
                name: ["Not a valid string."]
                for name, field in self.fields.items()
                if name in data and not _text_as_declared(field, data[name])
            }
            if not_text:
                raise serializers.ValidationError(not_text)
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
