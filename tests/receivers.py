"""Real HTTP endpoints standing in for what the service reports to (docs/operators/monitoring.md
"Monitoring"), each in a thread of the test process on a free loopback port:

- an OpenTelemetry collector's OTLP/HTTP traces endpoint (POST /v1/traces, protobuf),
  whose requests are decoded with opentelemetry-proto, OpenTelemetry's own message
  definitions;
- a Sentry server's envelope endpoint (POST /api/<project>/envelope/), whose envelopes
  are split into their items as Sentry's format has them.
"""

import gzip
import json
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

WAIT_SECONDS = 30  # for what a server exports in the background to arrive


@dataclass
class Span:
    """One exported span, its ids in hex, its attributes and its resource's as dicts."""

    trace_id: str
    span_id: str
    parent_id: str
    name: str
    kind: str
    attributes: dict[str, Any]
    resource: dict[str, Any]


@dataclass
class _Inbox:
    """What a receiver got, and a condition to wait on it."""

    items: list = field(default_factory=list)
    bodies: list[bytes] = field(default_factory=list)
    changed: threading.Condition = field(default_factory=threading.Condition)

    def add(self, body: bytes, items: list) -> None:
        with self.changed:
            self.bodies.append(body)
            self.items.extend(items)
            self.changed.notify_all()

    def wait_for(self, found: Callable[[list], Any], what: str) -> Any:
        """The first truthy `found(items)`, as items arrive, for up to WAIT_SECONDS."""
        deadline = time.monotonic() + WAIT_SECONDS
        with self.changed:
            while not (result := found(list(self.items))):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no {what} in {WAIT_SECONDS} s: {self.items!r}")
                self.changed.wait(left)
            return result


def _body(handler: BaseHTTPRequestHandler) -> bytes:
    raw = handler.rfile.read(int(handler.headers.get("Content-Length", 0)))
    encoding = handler.headers.get("Content-Encoding", "")
    if encoding == "gzip":
        return gzip.decompress(raw)
    if encoding == "deflate":
        return zlib.decompress(raw)
    if encoding == "br":
        import brotli

        return brotli.decompress(raw)
    return raw


@contextmanager
def _serving(handler_class: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler_class)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


# --- OTLP ---------------------------------------------------------------------------------


def _value(any_value) -> Any:
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in any_value.array_value.values]
    return getattr(any_value, kind) if kind else None


def _spans(request) -> list[Span]:
    from opentelemetry.proto.trace.v1.trace_pb2 import Span as ProtoSpan

    spans = []
    for resource_spans in request.resource_spans:
        resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                spans.append(
                    Span(
                        trace_id=span.trace_id.hex(),
                        span_id=span.span_id.hex(),
                        parent_id=span.parent_span_id.hex(),
                        name=span.name,
                        kind=ProtoSpan.SpanKind.Name(span.kind),
                        attributes={a.key: _value(a.value) for a in span.attributes},
                        resource=resource,
                    )
                )
    return spans


class OtlpReceiver:
    """The spans received so far, and waits on them."""

    def __init__(self, url: str, inbox: _Inbox) -> None:
        self.url, self._inbox = url, inbox

    @property
    def spans(self) -> list[Span]:
        return list(self._inbox.items)

    def wait_for_span(self, matches: Callable[[Span], bool], what: str) -> Span:
        return self._inbox.wait_for(lambda spans: next(filter(matches, spans), None), what)

    def trace(self, trace_id: str) -> list[Span]:
        return [s for s in self.spans if s.trace_id == trace_id]


@contextmanager
def otlp_receiver() -> Iterator[OtlpReceiver]:
    """An OTLP/HTTP traces endpoint: point OTEL_EXPORTER_OTLP_ENDPOINT at `.url`."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
        ExportTraceServiceResponse,
    )

    inbox = _Inbox()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            if self.path != "/v1/traces":
                self.send_error(404)
                return
            body = _body(self)
            request = ExportTraceServiceRequest()
            request.ParseFromString(body)
            inbox.add(body, _spans(request))
            answer = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args):
            pass

    with _serving(Handler) as url:
        yield OtlpReceiver(url, inbox)


# --- Sentry -------------------------------------------------------------------------------


def _envelope_items(body: bytes) -> list[tuple[dict, bytes]]:
    """(item header, payload) of each item of a Sentry envelope: a header line, then per
    item a header line and its payload (of `length` bytes, or up to the next newline)."""
    lines = body.split(b"\n", 1)
    rest = lines[1] if len(lines) > 1 else b""
    items = []
    while rest.strip():
        header_line, rest = rest.split(b"\n", 1)
        header = json.loads(header_line)
        if "length" in header:
            payload, rest = rest[: header["length"]], rest[header["length"] + 1 :]
        else:
            payload, _, rest = rest.partition(b"\n")
        items.append((header, payload))
    return items


class SentryReceiver:
    """The envelopes received so far (raw, decompressed) and the events in them."""

    def __init__(self, url: str, inbox: _Inbox) -> None:
        self.url, self._inbox = url, inbox
        self.dsn = url.replace("http://", "http://public-key@") + "/1"

    @property
    def raw(self) -> list[bytes]:
        return list(self._inbox.bodies)

    def wait_for_event(self, matches: Callable[[dict], bool], what: str) -> dict:
        return self._inbox.wait_for(lambda events: next(filter(matches, events), None), what)


@contextmanager
def sentry_receiver() -> Iterator[SentryReceiver]:
    """A Sentry server's envelope endpoint for project 1: give `.dsn` as SENTRY_DSN."""
    inbox = _Inbox()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            if self.path.rstrip("/") != "/api/1/envelope":
                self.send_error(404)
                return
            body = _body(self)
            events = [
                json.loads(payload)
                for header, payload in _envelope_items(body)
                if header.get("type") == "event"
            ]
            inbox.add(body, events)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *args):
            pass

    with _serving(Handler) as url:
        yield SentryReceiver(url, inbox)
