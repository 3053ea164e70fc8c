"""StrictSerializer's own checks beside DRF's: a lone surrogate is refused with DRF's
message and code (SurrogatesRefused, at C speed)."""

from rest_framework import serializers

from airline.api.serializers import StrictSerializer


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
