"""Shared OpenAPI pieces: the envelope and the error bodies every endpoint documents."""

from typing import Any

from drf_spectacular.utils import OpenApiResponse, inline_serializer
from rest_framework import serializers

_error_fields = {
    "code": serializers.RegexField(r"^ERR-\d+$", help_text="Stable error code, e.g. ERR-1005"),
    "title": serializers.CharField(),
    "description": serializers.CharField(),
    "fields": serializers.DictField(
        child=serializers.CharField(), required=False, help_text="Messages per field path"
    ),
}
ErrorObject = inline_serializer(
    "Error",
    {
        **_error_fields,
        "path": serializers.CharField(
            required=False, help_text="Offending field, no array positions"
        ),
        "requestId": serializers.CharField(help_text="Equals the x-request-id header"),
    },
)
ErrorEnvelope = inline_serializer(
    "ErrorEnvelope",
    {"data": serializers.JSONField(allow_null=True, help_text="Always null"), "error": ErrorObject},
)
AuthError = inline_serializer(
    "AuthError",
    {
        "message": serializers.CharField(),
        "errorKey": serializers.ChoiceField(
            choices=[
                "Unauthenticated",
                "Forbidden",
                "AuthUnavailable",
                "ValidationFailed",
                "TooManyRequests",
            ]
        ),
        "error": inline_serializer("AuthErrorObject", _error_fields),
        "requestId": serializers.CharField(),
    },
)


def enveloped(name: str, fields: dict[str, serializers.Field] | serializers.Serializer) -> Any:
    """`{data: <name>, error: null}` for a success response."""
    data = (
        fields
        if isinstance(fields, serializers.BaseSerializer)
        else inline_serializer(name, fields)
    )
    return inline_serializer(
        f"{name}Envelope",
        {
            "data": data,
            "error": serializers.JSONField(allow_null=True, help_text="null on success"),
        },
    )


ERROR_RESPONSES = {
    401: OpenApiResponse(
        AuthError, "ERR-8000: missing or invalid token (auth shape, with data: null)"
    ),
    403: OpenApiResponse(AuthError, "ERR-8001: key cannot act as requested (auth shape)"),
    404: OpenApiResponse(ErrorEnvelope, "ERR-1002 unsupported version, ERR-1000 no such route"),
    422: OpenApiResponse(ErrorEnvelope, "ERR-1005: validation failed"),
    429: OpenApiResponse(ErrorEnvelope, "ERR-8003: request volume exceeded; see Retry-After"),
    500: OpenApiResponse(ErrorEnvelope, "ERR-9003: the request could not be processed"),
    503: OpenApiResponse(AuthError, "ERR-8002: authentication store unavailable"),
}
AUTH_ERROR_RESPONSES = {
    401: OpenApiResponse(AuthError, "ERR-8000: missing or unknown API key"),
    403: OpenApiResponse(AuthError, "ERR-8001: revoked key, or a seller outside the key's reach"),
    422: OpenApiResponse(AuthError, "ERR-1005: invalid body, e.g. sellerId not a UUID"),
    429: OpenApiResponse(AuthError, "ERR-8003: request volume exceeded; see Retry-After"),
    503: OpenApiResponse(AuthError, "ERR-8002: authentication store unavailable"),
}
