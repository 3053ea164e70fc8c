"""Auth endpoints (unversioned, not enveloped) and the caller's own context."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.views import APIView

from airline.api import clock
from airline.api.openapi import AUTH_ERROR_RESPONSES, ERROR_RESPONSES, enveloped
from airline.api.responses import ApiResponse, ok
from sellers.authentication import (
    STORE_ERRORS,
    ApiKeyAuthentication,
    auth_store_unavailable,
    seller_or_forbidden,
)
from sellers.permissions import HasApiKey
from sellers.selectors import sellers_for_key
from sellers.serializers import (
    SellerEntrySerializer,
    TokenRequestSerializer,
    TokenResponseSerializer,
    seller_entry,
)
from sellers.services import token_issue

# The auth endpoints take the API key itself (SPEC.md §4.1, §4.2), never a bearer token.
# Declared as a header parameter with no security requirement, generated clients type
# these calls as taking the key (a plain client and an `x_api_key` argument); a security
# requirement would have them ask for an authenticated (bearer) client.
API_KEY_HEADER = OpenApiParameter(
    "x-api-key",
    str,
    OpenApiParameter.HEADER,
    required=True,
    description="Your API key (`<prefix>.<secret>`)",
)


class AuthEndpoint(APIView):
    """The unversioned auth endpoints: x-api-key only, auth body shape on errors."""

    authentication_classes = [ApiKeyAuthentication]
    permission_classes = [HasApiKey]
    versioning_class = None  # SPEC.md §9: auth endpoints carry no version segment


class TokenView(AuthEndpoint):
    @extend_schema(
        operation_id="createToken",
        tags=["auth"],
        auth=[],
        parameters=[API_KEY_HEADER],
        request=TokenRequestSerializer,
        responses={200: TokenResponseSerializer, **AUTH_ERROR_RESPONSES},
        description="Exchange an API key for a bearer token acting as one seller (SPEC.md §4.1).",
    )
    def post(self, request):
        body = TokenRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        key = request.user.key
        seller = seller_or_forbidden(key, body.validated_data.get("sellerId"))
        issued = token_issue(key=key, seller=seller, now=clock.now())
        return ApiResponse(
            {
                "access_token": issued.access_token,
                "token_type": "Bearer",
                "expires_in": issued.expires_in,
            }
        )


class SellersView(AuthEndpoint):
    @extend_schema(
        operation_id="listSellers",
        tags=["auth"],
        auth=[],
        parameters=[API_KEY_HEADER],
        responses={200: SellerEntrySerializer(many=True), **AUTH_ERROR_RESPONSES},
        description="The sellers this API key may act for; exactly one is the default "
        "(SPEC.md §4.2).",
    )
    def get(self, request):
        try:
            sellers = sellers_for_key(key=request.user.key)
        except STORE_ERRORS as exc:
            raise auth_store_unavailable() from exc
        return ApiResponse([seller_entry(seller, is_default) for seller, is_default in sellers])


class WhoAmIView(APIView):
    @extend_schema(
        operation_id="whoAmI",
        tags=["auth"],
        responses={
            200: enveloped(
                "WhoAmI",
                {
                    "sellerId": serializers.UUIDField(),
                    "sellerCode": serializers.CharField(),
                    "partnerCode": serializers.CharField(),
                    "apiKeyPrefix": serializers.CharField(),
                    "accessLevel": serializers.ChoiceField(choices=["full", "read"]),
                    "agencyCode": serializers.CharField(required=False),
                    "requestsPerMinute": serializers.IntegerField(),
                },
            ),
            **ERROR_RESPONSES,
        },
        description="The seller, key and permissions this token acts with: a first call to "
        "check a token, and what support asks for when a partner reports a problem.",
    )
    def get(self, request, version):
        key, seller = request.user.key, request.user.seller
        data = {
            "sellerId": str(seller.pk),
            "sellerCode": seller.code,
            "partnerCode": key.partner.code,
            "apiKeyPrefix": key.prefix,
            "accessLevel": key.access_level,
            "requestsPerMinute": key.requests_per_minute,
        }
        if key.agency_code:
            data["agencyCode"] = key.agency_code
        return ok(data)
