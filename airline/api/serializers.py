"""Serializer pieces every JSON endpoint shares."""

from collections.abc import Mapping

from rest_framework import serializers


class StrictSerializer(serializers.Serializer):
    """Refuses properties it does not declare (SPEC.md §4.4: "no additional properties"),
    naming each one, so a misspelt field is an error rather than silently ignored."""

    def to_internal_value(self, data):
        if isinstance(data, Mapping):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError({name: ["Unknown property."] for name in unknown})
        return super().to_internal_value(data)
