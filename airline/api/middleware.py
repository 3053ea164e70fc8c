"""Request ids and the access log: one structured line per request."""

import logging
import re
import time
import uuid

logger = logging.getLogger("airline.request")

NO_STORE_PREFIXES = ("/json/", "/auth/", "/ndc/")

# An incoming id is echoed only if it is safe to put in a header and a log line.
_VALID_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


class RequestIdMiddleware:
    """Gives every request an id (the client's `x-request-id` when valid, else a UUID4),
    returns it on every response and logs the request once it is answered."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        started = time.perf_counter()
        incoming = request.headers.get("x-request-id", "")
        request.request_id = incoming if _VALID_REQUEST_ID.match(incoming) else str(uuid.uuid4())

        response = self.get_response(request)

        response["x-request-id"] = request.request_id
        if request.path.startswith(NO_STORE_PREFIXES):
            # API answers are per seller and many carry personal data (order views and
            # lists, tokens): no browser, proxy or CDN may keep a copy.
            response["Cache-Control"] = "no-store"
        rate = getattr(request, "rate_limit", None)
        if rate is not None:
            response["X-RateLimit-Limit"] = str(rate.limit)
            response["X-RateLimit-Remaining"] = str(rate.remaining)
            response["X-RateLimit-Reset"] = str(rate.reset_at)
        self._log(request, response, time.perf_counter() - started)
        return response

    @staticmethod
    def _log(request, response, seconds: float) -> None:
        # Only these fields: never headers, bodies or query strings, which carry keys,
        # tokens, card data and passenger names.
        principal = getattr(request, "user", None)
        match = getattr(request, "resolver_match", None)
        fields = {
            "request_id": request.request_id,
            "method": request.method,
            "route": match.route if match else None,
            "path": request.path,
            "status": response.status_code,
            "duration_ms": round(seconds * 1000, 2),
            "seller": getattr(getattr(principal, "seller", None), "code", None),
            "api_key": getattr(getattr(principal, "key", None), "prefix", None),
        }
        logger.info("request", extra={"fields": fields})
