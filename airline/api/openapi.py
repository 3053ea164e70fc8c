"""Shared OpenAPI pieces: the envelope and the error bodies every endpoint documents."""

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.plumbing import ResolvedComponent
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, inline_serializer
from rest_framework import serializers

from airline.api.errors import Reason

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
        "reason": serializers.ChoiceField(
            choices=[r.value for r in Reason],
            required=False,
            help_text="Why a change was refused, within ERR-4002 (reshop, quote and change "
            "order); absent on every other error",
        ),
        "requestId": serializers.CharField(
            required=False,
            help_text="Equals the x-request-id header (the auth shape has it beside `error`)",
        ),
    },
)
# Every error of a /json/ endpoint: the envelope `{data: null, error}`, or, for ERR-8000,
# 8001 and 8002, the auth shape, which on /json also carries `data: null` (DESIGN.md
# §11). One schema holds both, so that every status can name its body exactly.
ErrorEnvelope = inline_serializer(
    "ErrorEnvelope",
    {
        "data": serializers.JSONField(allow_null=True, help_text="Always null"),
        "error": ErrorObject,
        "message": serializers.CharField(required=False, help_text="Auth shape only"),
        "errorKey": serializers.CharField(required=False, help_text="Auth shape only"),
        "requestId": serializers.CharField(required=False, help_text="Auth shape only"),
    },
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


def _answers(body, meanings: dict[int, str]) -> dict[int, OpenApiResponse]:
    return {status: OpenApiResponse(body, meaning) for status, meaning in meanings.items()}


# Every status a /json/ operation can answer with (the sweep and schemathesis hold the
# service to it): the kernel's own (404, 405, 413, 415, 429, 500), authentication's,
# and the domain's, which an operation's docstring and SPEC.md §4 detail.
ERROR_RESPONSES = _answers(
    ErrorEnvelope,
    {
        400: "ERR-1004 invalid value; ERR-3002/3003 offer items; ERR-3004/3005 wrong pricing "
        "flow; ERR-4001/4002/4006 order not created or changed; ERR-6002 payment rejected",
        401: "ERR-8000: missing or invalid token (auth shape, with data: null)",
        403: "ERR-8001: key cannot act as requested (auth shape, with data: null)",
        404: "ERR-1000 no such route, ERR-1002 unsupported version, ERR-3000/3001 offer "
        "not found or expired, ERR-4000 order not found",
        405: "ERR-1001: method not allowed (see Allow)",
        409: "ERR-1012: a request with this Idempotency-Key is still running, or its card "
        "payment's outcome is being settled (reason OUTCOME_PENDING; see Retry-After)",
        413: "ERR-1009: body over 1 MiB",
        415: "ERR-1003: body not application/json",
        422: "ERR-1005 validation failed; ERR-1006 invalid market; ERR-1011 Idempotency-Key "
        "reused; ERR-6000/6001 payment method or card brand not supported",
        429: "ERR-8003: request volume or request-body bytes exceeded; see Retry-After",
        500: "ERR-2002 availability read failed; ERR-9001 unexpected upstream; ERR-9003 the "
        "request could not be processed",
        503: "Always with Retry-After. ERR-8002 authentication store, ERR-9000 a required "
        "service (the database unreachable, a flight or order of the request being "
        "updated by the airline, the request past the service's deadline), ERR-9002 "
        "offer cache unavailable; ERR-6005 payment timed out. With reason OUTCOME_PENDING "
        "a card payment of the request may yet go through: retry with the same "
        "Idempotency-Key to get the order (201/200) or the error",
    },
)
AUTH_ERROR_RESPONSES = _answers(
    AuthError,
    {
        401: "ERR-8000: missing or unknown API key",
        403: "ERR-8001: revoked key, or a seller outside the key's reach",
        405: "ERR-1001: method not allowed (see Allow)",
        413: "ERR-1009: body over 1 MiB",
        415: "ERR-1003: body not application/json",
        422: "ERR-1005: invalid body, e.g. sellerId not a UUID",
        429: "ERR-8003: request volume or request-body bytes exceeded; see Retry-After",
        500: "ERR-9003: the request could not be processed",
        503: "ERR-8002: authentication store unavailable",
    },
)


# --- Request bodies as strict as their validation --------------------
#
# Generated clients and schemathesis read the request schemas; they must refuse what the
# service refuses. drf-spectacular does not say that a StrictSerializer refuses unknown
# properties, nor that a list may not be empty or is bounded when the list is a nested
# serializer (`many=True`). The extension adds both. `_map_serializer(...,
# bypass_extensions=True)` is how drf-spectacular's own contrib extensions reuse the
# default mapping; tests/api/test_openapi.py fails if an upgrade changes what it gives.


def _list_bounds(field: serializers.Field, schema: dict[str, Any]) -> None:
    if getattr(field, "allow_empty", True) is False:
        schema["minItems"] = max(schema.get("minItems", 0), 1)
    if getattr(field, "min_length", None) is not None:
        schema["minItems"] = max(schema.get("minItems", 0), field.min_length)
    if getattr(field, "max_length", None) is not None:
        schema["maxItems"] = field.max_length


def strict_request_schema(
    auto_schema: Any, serializer: serializers.Serializer, direction: str
) -> dict[str, Any]:
    """The default schema of a StrictSerializer, plus what its validation enforces:
    no unknown properties (requests only) and the bounds of its lists."""
    schema = auto_schema._map_serializer(serializer, direction, bypass_extensions=True)
    if direction != "request":
        return schema
    schema["additionalProperties"] = False
    for name, field in serializer.fields.items():
        prop = schema.get("properties", {}).get(name)
        if prop is not None and prop.get("type") == "array":
            _list_bounds(field, prop)
    return schema


class StrictSerializerScheme(OpenApiSerializerExtension):
    target_class = "airline.api.serializers.StrictSerializer"
    match_subclasses = True

    def map_serializer(self, auto_schema, direction):
        return strict_request_schema(auto_schema, self.target, direction)


def typed_variants(
    auto_schema: Any,
    serializer: serializers.Serializer,
    direction: str,
    *,
    kinds: Sequence[str],
    needs: Mapping[str, Sequence[str]],
    own: Mapping[str, Sequence[str]],
    suffix: str,
) -> dict[str, Any]:
    """A request object whose `type` decides which members it needs (a change order
    entry, a payment, a reshop instruction) as `oneOf` one component per type,
    discriminated by `type`: each variant lists only its type's own members (`own`, as
    the validation takes them: TypedStrictSerializer) and requires those it needs, so a
    generated client gets one class per type (`CancelJourneyChangeRequest`) whose
    constructor asks for exactly those and offers no other type's."""
    base = strict_request_schema(auto_schema, serializer, direction)
    if direction != "request":
        return base
    refs = {}
    for kind in kinds:
        variant = copy.deepcopy(base)
        members = {"type", *own[kind]}
        variant["properties"] = {
            name: schema for name, schema in variant["properties"].items() if name in members
        }
        variant["properties"]["type"] = {"type": "string", "enum": [kind]}
        variant["required"] = ["type", *needs.get(kind, ())]
        component = ResolvedComponent(
            name=f"{kind}{suffix}Request",
            type=ResolvedComponent.SCHEMA,
            schema=variant,
            object=f"{type(serializer).__name__}.{kind}",
        )
        auto_schema.registry.register_on_missing(component)
        refs[kind] = component.ref
    return {
        "oneOf": list(refs.values()),
        "discriminator": {
            "propertyName": "type",
            "mapping": {kind: ref["$ref"] for kind, ref in refs.items()},
        },
    }


def add_servers(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict:
    """A `servers` entry: the host that served this document (a client generated from
    it talks to the same place); `/` when the document is written offline
    (`manage.py spectacular`), which OpenAPI reads as the document's own host."""
    url = request.build_absolute_uri("/").rstrip("/") if request is not None else "/"
    result["servers"] = [{"url": url or "/", "description": "This service"}]
    return result


# Every operation that changes an order or registers a webhook takes it (DESIGN.md §11
# "Idempotent changes"; airline/api/idempotency.py).
IDEMPOTENCY_HEADER = OpenApiParameter(
    "Idempotency-Key",
    str,
    OpenApiParameter.HEADER,
    required=False,
    description=(
        "1-255 printable characters, scoped to your API key and the seller your token acts "
        "for. The same key and body within 24 h replays the first successful response "
        "(status and body, header Idempotent-Replayed: true) without doing anything again; "
        "another body is ERR-1011 (422); one still running is ERR-1012 (409). A request "
        "that failed keeps nothing, so it may be retried with the same key; one cut short "
        "while paying by card (503, reason OUTCOME_PENDING) is settled by the service, "
        "and its retry gets that outcome: the order, or the error. Send one "
        "whenever you may retry: after a timeout or a dropped connection you cannot tell "
        "whether the change was made, and the retry tells you."
    ),
)
