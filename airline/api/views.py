"""Kernel endpoints: health, and the enveloped answers for routes no view claims."""

import sys

import redis.exceptions
from django.conf import settings
from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse
from django.views.csrf import csrf_failure as django_csrf_failure
from django.views.decorators.csrf import csrf_exempt
from django.views.defaults import bad_request as django_bad_request

from airline.api import clock
from airline.api.errors import ApiError, Err
from airline.api.exceptions import to_api_error
from airline.api.readiness import pending_checks
from airline.api.responses import error_response, json_response
from airline.redisclient import redis_state

API_PATHS = ("/json/", "/auth/", "/ndc/", "/health")


@csrf_exempt
def health(request: HttpRequest) -> HttpResponse:
    """GET /health (SPEC.md §4.3): public, not enveloped, 503 while loading. A dependency
    the node can do without for most requests (Redis) is reported in `dependencies`, with
    `degraded`, while the answer stays 200: every node shares that Redis, so taking this
    one out of the balancer would help nobody (docs/operators/production.md
    "When Redis is down")."""
    if request.method not in ("GET", "HEAD"):
        return error_response(
            request,
            ApiError(
                Err.METHOD_NOT_ALLOWED,
                f"{request.method} is not allowed on /health; use GET",
                headers={"Allow": "GET, HEAD"},
            ),
        )
    if pending_checks():
        response = json_response({"status": "loading"}, status=503)
        response._has_been_logged = (
            True  # loading is a state, not an error: keep it out of error logs
        )
        return response
    redis = redis_state()
    dependencies = {} if redis is None else {"redis": redis}
    return json_response(
        {
            "status": "ok",
            "timestamp": clock.format_utc(clock.now(), milliseconds=True),
            "degraded": "down" in dependencies.values(),
            "dependencies": dependencies,
        }
    )


@csrf_exempt  # an API path: answered in the API's shape whatever the method
def unknown_route(request: HttpRequest, rest: str = "") -> HttpResponse:
    """Any `/json/...`, `/ndc/...` or `/auth/...` path no route matched, whatever the
    method: ERR-1002 when the version segment is unsupported (SPEC.md §9), else ERR-1000."""
    if request.path.startswith(("/json/", "/ndc/")):
        version = rest.split("/", 1)[0]
        if version not in settings.API_VERSIONS:
            return error_response(
                request,
                ApiError(
                    Err.UNSUPPORTED_VERSION,
                    f"Version {version!r} is not supported; use one of "
                    + ", ".join(settings.API_VERSIONS),
                    path="version",
                ),
            )
    return error_response(
        request, ApiError(Err.NOT_FOUND, f"No route for {request.method} {request.path}")
    )


def server_error(request: HttpRequest) -> HttpResponse:
    """handler500: failures outside DRF views still answer in the envelope; the database
    or Redis unreachable in a middleware (a session, a throttle) is 503 ERR-9000 with
    Retry-After there too, as it is in a view. Django calls this while handling the
    exception, so it is sys.exc_info()'s."""
    # Django has already logged the exception (logger django.request).
    exc = sys.exc_info()[1]
    if isinstance(exc, DatabaseError | redis.exceptions.ConnectionError):
        return error_response(request, to_api_error(exc))
    return error_response(request, ApiError(Err.INTERNAL))


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """handler400: what Django refuses before any view (a Host header not in
    ALLOWED_HOSTS) answers in the API's shape on API paths, Django's page elsewhere."""
    if not request.path.startswith(API_PATHS):
        return django_bad_request(request, exception)
    return error_response(request, ApiError(Err.INVALID_VALUE, "The request was malformed"))


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """CSRF_FAILURE_VIEW: the admin keeps Django's page; an API path (which takes no
    cookies and is exempt, so this is only a backstop) answers in the API's shape."""
    if request.path.startswith(API_PATHS):
        return error_response(request, ApiError(Err.FORBIDDEN, "Request refused"))
    return django_csrf_failure(request, reason)
