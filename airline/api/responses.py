"""How success and failure look on the wire (SPEC.md §1 Conventions, §7).

- `/json/...` success: `{data, error: null}`; failure: `{data: null, error: {...}}`.
- Auth failures (ERR-8000/8001/8002) everywhere, and every error on `/auth/...`, use the
  auth shape `{message, errorKey, error, requestId}`; on `/json/...` it also carries
  `data: null`, so it is an envelope too (DESIGN.md §11).
- `/ndc/...`: every error, whoever raised it (the NDC view, this kernel's 404 and 405,
  authentication, throttling), is the message's RS document with `Error` elements
  (DESIGN.md §9), rendered by ndc/errors.py from the same ApiError (registered with
  error_renderer_register by the ndc app).
"""

from collections.abc import Callable
from decimal import Decimal
from typing import Any

import orjson
from django.http import HttpRequest, HttpResponse
from rest_framework.response import Response

from airline.api.errors import AUTH_SHAPE_CODES, ApiError, Err

AUTH_PREFIX = "/auth/"
NDC_PREFIX = "/ndc/"


class ApiResponse(Response):
    """DRF's Response, which lets go of its data once rendered.

    DRF puts each response into its own renderer context, and the view, itself in a
    cycle with its request, keeps the response too: every response and all its data
    outlived the request until the cyclic collector came by. A page of 1000 order
    summaries is ~10,000 objects; they piled up over requests and went in full
    collections of ~25 ms, in whatever request was running then. Rendered, the bytes
    are all the response needs, and reference counting frees the data at once."""

    @property
    def rendered_content(self) -> bytes:
        content = super().rendered_content
        self.renderer_context.pop("response", None)
        self.data = None
        return content


def ok(data: Any, status: int = 200) -> ApiResponse:
    """A successful enveloped `/json/...` response."""
    return ApiResponse({"data": data, "error": None}, status=status)


def json_response(
    body: Any, status: int = 200, headers: dict[str, str] | None = None
) -> HttpResponse:
    """A plain JSON response outside DRF (health, kernel error handlers)."""
    return HttpResponse(
        orjson.dumps(body, default=_default),
        status=status,
        headers=headers,
        content_type="application/json",
    )


XML_CONTENT_TYPE = "application/xml; charset=utf-8"


def request_id_of(request: HttpRequest) -> str | None:
    return getattr(request, "request_id", None)


def error_body(request: HttpRequest, err: ApiError) -> dict[str, Any]:
    """The body for `err` on the channel `request` came in on."""
    request_id = request_id_of(request)
    on_auth_endpoint = request.path.startswith(AUTH_PREFIX)
    if on_auth_endpoint or err.code in AUTH_SHAPE_CODES:
        error = {k: v for k, v in err.body().items() if k != "path"}
        body: dict[str, Any] = {
            "message": err.description,
            "errorKey": err.spec.error_key,
            "error": error,
            "requestId": request_id,
        }
        if not on_auth_endpoint:
            body = {"data": None, **body}
        return body
    error = err.body()
    error["requestId"] = request_id
    return {"data": None, "error": error}


# Renderers of errors for a path prefix whose errors are not JSON: each registered by
# the app that owns the prefix, in its AppConfig.ready (ndc: NDC_PREFIX), so that the
# kernel never imports the apps built on it. A renderer is called as
# render(err, path=..., request_id=...) and returns the body's bytes.
ErrorRenderer = Callable[..., bytes]
_ERROR_RENDERERS: dict[str, tuple[ErrorRenderer, str]] = {}


def error_renderer_register(prefix: str, render: ErrorRenderer, *, content_type: str) -> None:
    """Errors of paths under `prefix` are rendered by `render`."""
    _ERROR_RENDERERS[prefix] = (render, content_type)


def error_response(request: HttpRequest, err: ApiError) -> HttpResponse:
    headers = dict(err.headers)
    if err.spec.status == 401:
        headers.setdefault("WWW-Authenticate", 'Bearer realm="api"')
    for prefix, (render, content_type) in _ERROR_RENDERERS.items():
        if request.path.startswith(prefix):
            return HttpResponse(
                render(err, path=request.path, request_id=request_id_of(request)),
                status=err.spec.status,
                headers=headers,
                content_type=content_type,
            )
    return json_response(error_body(request, err), status=err.spec.status, headers=headers)


def _default(value: Any) -> Any:
    """orjson hook for the types it does not know: Decimal money goes out as a number."""
    if isinstance(value, Decimal):
        return float(value)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def dumps(value: Any) -> bytes:
    return orjson.dumps(value, default=_default)


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """handler404 (airline/urls.py), and any path that answers as if it did not exist."""
    return error_response(
        request, ApiError(Err.NOT_FOUND, f"No route for {request.method} {request.path}")
    )
