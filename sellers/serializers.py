"""Input validation and output shapes of the auth endpoints (SPEC.md §2.1, §4.1, §4.2)."""

from rest_framework import serializers


class TokenRequestSerializer(serializers.Serializer):
    sellerId = serializers.UUIDField(required=False)


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
