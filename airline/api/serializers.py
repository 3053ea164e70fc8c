"""Serializer pieces every JSON endpoint shares."""

import copy
from collections.abc import Mapping

from rest_framework import serializers


class StrictSerializer(serializers.Serializer):
    """Refuses properties it does not declare (SPEC.md §4.4: "no additional properties"),
    naming each one, so a misspelt field is an error rather than silently ignored."""

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
        return super().to_internal_value(data)
