"""Input validation and output shapes of the auth endpoints (SPEC.md §2.1, §4.1, §4.2)."""

from rest_framework import serializers


class StrictUUIDField(serializers.UUIDField):
    """A UUID sent as a string. DRF's UUIDField also takes an integer (42 becomes
    00000000-...-002a), which SPEC.md §4.1 calls invalid: ERR-1005, not a 403 for an
    unknown seller."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid", value=data)
        return super().to_internal_value(data)


class TokenRequestSerializer(serializers.Serializer):
    sellerId = StrictUUIDField(required=False)


class TokenResponseSerializer(serializers.Serializer):
    access_token = serializers.CharField(help_text="JWT bearer token")
    token_type = serializers.ChoiceField(choices=["Bearer"])
    expires_in = serializers.IntegerField(help_text="Seconds until the token expires")


class SellerEntrySerializer(serializers.Serializer):
    sellerId = serializers.UUIDField()
    sellerCode = serializers.CharField()
    name = serializers.CharField()
    isDefault = serializers.BooleanField()


def seller_entry(seller, is_default: bool) -> dict:
    return {
        "sellerId": str(seller.pk),
        "sellerCode": seller.code,
        "name": seller.name,
        "isDefault": is_default,
    }
