"""Tracing (OpenTelemetry) and error reports (Sentry), each off unless configured
(docs/operators/monitoring.md).

Tracing is on when TRACING_ENABLED is, which it is by default whenever an OTLP endpoint
is named (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT); everything
else is read by the SDK from the standard OTEL_* variables. Off, nothing of OpenTelemetry
is even imported: no middleware, no wrapped connection, no thread.

On, it takes two steps, because gunicorn loads the application in its master and forks
the workers from it (gunicorn.conf.py, preload_app):
- `tracing_instrument`, before the WSGI handler is built (airline/wsgi.py, in the master):
  Django's middleware list is read once, then, and the libraries (psycopg, requests,
  redis) are patched once for every process forked after. Their spans go to the global
  tracer provider, which is nothing yet: what the master does is not traced;
- `tracing_start`, in each process that serves or works (gunicorn's post_fork, manage.py
  run_worker): the provider and its BatchSpanProcessor, whose export thread would not
  survive a fork, so it must be started in the child.

Neither a span nor an error report carries a query string, a request body, a header
other than a few harmless ones, or a card number: the same rule as the access log
(airline/api/middleware.py), which names only chosen fields.
"""

import logging
import os
import re
from typing import Any

from django.conf import settings

logger = logging.getLogger("airline.telemetry")

# This process's tracer provider, once tracing_start made one.
_provider: Any = None

# The access log's request id, on the request's span (searchable beside the log line).
REQUEST_ID_ATTRIBUTE = "airline.request_id"
# A span attribute that may hold a URL or its query string, by either version of
# OpenTelemetry's HTTP conventions: the query is cut off (OrderList's ?lastName=).
_URL_ATTRIBUTES = ("http.url", "http.target", "url.full")
_QUERY_ATTRIBUTE = "url.query"


def tracing_instrument() -> bool:
    """Patch Django, psycopg, requests and redis to record spans, once per process,
    before the WSGI handler is built (it reads MIDDLEWARE then). Returns whether tracing
    is on; off, it imports nothing."""
    if not settings.TRACING_ENABLED:
        return False
    from opentelemetry.instrumentation.django import DjangoInstrumentor
    from opentelemetry.instrumentation.psycopg import PsycopgInstrumentor
    from opentelemetry.instrumentation.redis import RedisInstrumentor
    from opentelemetry.instrumentation.requests import RequestsInstrumentor

    django = DjangoInstrumentor()
    if not django.is_instrumented_by_opentelemetry:
        # After the request id and the Host check: a foreign Host is refused before the
        # span would ask for the host (and fail), and the span can carry the request id.
        django.instrument(
            request_hook=_request_span_started,
            middleware_position=_after("airline.api.middleware.HostCheckMiddleware"),
        )
    # Statements without their parameters (capture_parameters is off by default): a
    # passenger's name or a card's last four are parameters.
    for instrumentor in (PsycopgInstrumentor(), RequestsInstrumentor(), RedisInstrumentor()):
        if not instrumentor.is_instrumented_by_opentelemetry:
            if isinstance(instrumentor, RequestsInstrumentor):
                instrumentor.instrument(request_hook=_outbound_span_started)
            else:
                instrumentor.instrument()
    return True


def tracing_start(*, role: str, exporter: Any = None) -> Any:
    """This process's tracer provider, exporting in batches over OTLP/HTTP (or to
    `exporter`), installed as the global one; None when tracing is off. `role` (web,
    worker) is a resource attribute, to tell a node's processes apart."""
    global _provider
    if not settings.TRACING_ENABLED:
        return None
    if _provider is not None:
        return _provider
    from opentelemetry import trace
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    if exporter is None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        exporter = OTLPSpanExporter()  # its endpoint, headers and timeout from OTEL_*
    attributes = {"airline.process": role}
    if not _service_name_given():
        attributes[SERVICE_NAME] = settings.TRACING_SERVICE_NAME
    # The sampler (OTEL_TRACES_SAMPLER, ..._ARG) and the batching (OTEL_BSP_*) are the
    # SDK's, from the environment.
    _provider = TracerProvider(resource=Resource.create(attributes))
    _provider.add_span_processor(BatchSpanProcessor(exporter))
    trace.set_tracer_provider(_provider)
    return _provider


def tracing_stop() -> None:
    """Export what this process still holds (a gunicorn worker leaving: max_requests,
    a stop). The SDK does it at exit too, which a killed worker never reaches."""
    if _provider is not None:
        _provider.shutdown()


def tracing_span(name: str):
    """A span around a piece of background work (a worker job's round), so that its SQL
    and calls form one trace; a context manager doing nothing when tracing is off."""
    if _provider is None:
        from contextlib import nullcontext

        return nullcontext()
    from opentelemetry import trace

    return trace.get_tracer("airline.worker").start_as_current_span(name)


def _service_name_given() -> bool:
    if os.environ.get("OTEL_SERVICE_NAME"):
        return True
    resource = os.environ.get("OTEL_RESOURCE_ATTRIBUTES", "")
    return any(part.strip().startswith("service.name=") for part in resource.split(","))


def _after(middleware: str) -> int:
    names = list(settings.MIDDLEWARE)
    return names.index(middleware) + 1 if middleware in names else 0


def _request_span_started(span: Any, request: Any) -> None:
    if not span.is_recording():
        return
    _without_query(span)
    request_id = getattr(request, "request_id", None)
    if request_id:
        span.set_attribute(REQUEST_ID_ATTRIBUTE, request_id)
    # For the access log line (airline/api/middleware.py): from a log line to its trace.
    request.trace_id = format(span.get_span_context().trace_id, "032x")


def _outbound_span_started(span: Any, request: Any) -> None:
    # A partner's webhook URL may carry its own secret in the query string.
    if span.is_recording():
        _without_query(span)


def _without_query(span: Any) -> None:
    attributes = getattr(span, "attributes", None) or {}
    for key in _URL_ATTRIBUTES:
        value = attributes.get(key)
        if isinstance(value, str) and "?" in value:
            span.set_attribute(key, value.split("?", 1)[0])
    if attributes.get(_QUERY_ATTRIBUTE):
        span.set_attribute(_QUERY_ATTRIBUTE, "[Filtered]")


# --- Error reports (Sentry) -------------------------------------------------------------

FILTERED = "[Filtered]"
# A card number as a client may write it: 12 to 19 digits, spaces or dashes between.
_CARD_NUMBER = re.compile(r"(?<!\d)(?:\d[ -]?){11,18}\d(?!\d)")
# Keys whose values are never sent, wherever in a report they appear (compared in lower
# case, without - and _): the card fields of SPEC.md's Payment, credentials, and the
# personal data of travellers.
_SECRET_KEYS = frozenset(
    {
        "cardnumber",
        "securitycode",
        "expirydate",
        "cvc",
        "cvv",
        "pan",
        "cardholdername",
        "authorization",
        "xapikey",
        "apikey",
        "token",
        "accesstoken",
        "password",
        "secret",
        "cookie",
        "email",
        "phone",
        "phonenumber",
        "surname",
        "lastname",
        "givenname",
        "firstname",
        "birthdate",
        "documentnumber",
    }
)
# A value given under a key in text (an echoed dict, JSON, a form body): `'surname':
# 'Doe'`, `"securityCode": 737`, `token=abc`; the value is filtered when the key is secret.
_KEYED_VALUE = re.compile(
    r"""(?P<key>['"]?(?P<name>[A-Za-z][A-Za-z_-]*)['"]?\s*[:=]\s*)"""
    r"""(?P<value>'[^']*'|"[^"]*"|[^\s,;&}\]'"]+)"""
)
# Ids a report needs as they are, hex or digits that could pass for a card number.
_IDS = frozenset({"event_id", "trace_id", "span_id", "parent_span_id", "timestamp"})
# The only request headers a report keeps.
_KEPT_HEADERS = frozenset({"content-type", "content-length", "user-agent", "x-request-id"})


def error_reports_start() -> bool:
    """Send unhandled errors (and ERROR log lines) to Sentry when SENTRY_DSN is set;
    returns whether it is on. Sentry's sending thread is started by the first report in
    each process, so this may run before gunicorn forks."""
    if not settings.SENTRY_DSN:
        return False
    import sentry_sdk
    from sentry_sdk.integrations.django import DjangoIntegration

    sentry_sdk.init(
        dsn=settings.SENTRY_DSN,
        environment=settings.SENTRY_ENVIRONMENT,
        integrations=[DjangoIntegration()],
        # No user, address, cookie or request body; no frame's local variables (a
        # request's Card holds its number); no performance data (tracing is OTel's).
        send_default_pii=False,
        include_local_variables=False,
        max_request_body_size="never",
        traces_sample_rate=None,
        # No sentry-trace or baggage header on calls to Stripe or to partners' webhooks.
        trace_propagation_targets=[],
        before_send=error_report_scrub,
        before_breadcrumb=lambda crumb, hint: _scrubbed(crumb),
    )
    return True


def error_report_scrub(event: dict, hint: Any = None) -> dict:
    """An error report as it may leave: the request reduced to its method, path and a
    few headers (its id kept as a tag), every value under a secret key filtered, and
    anything that looks like a card number in any text replaced."""
    request = event.get("request")
    if isinstance(request, dict):
        headers = {
            name: value
            for name, value in (request.get("headers") or {}).items()
            if name.lower() in _KEPT_HEADERS
        }
        event["request"] = {
            "method": request.get("method"),
            "url": str(request.get("url", "")).split("?", 1)[0],
            "headers": headers,
        }
        request_id = next((v for k, v in headers.items() if k.lower() == "x-request-id"), None)
        if request_id:
            event.setdefault("tags", {})["request_id"] = request_id
    return _scrubbed(event)


def _scrubbed(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            key: FILTERED if _is_secret_key(key) else item if key in _IDS else _scrubbed(item)
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [_scrubbed(item) for item in value]
    if isinstance(value, str):
        return _CARD_NUMBER.sub(FILTERED, _KEYED_VALUE.sub(_keyed_value_scrubbed, value))
    return value


def _keyed_value_scrubbed(match: re.Match) -> str:
    if not _is_secret_key(match["name"]):
        return match[0]
    return f"{match['key']}{FILTERED!r}"


def _is_secret_key(key: Any) -> bool:
    return isinstance(key, str) and key.lower().replace("-", "").replace("_", "") in _SECRET_KEYS
