"""Delivering the outbox (DESIGN.md §10): at least once, signed, retried, per order in
sequence, by any number of workers at once.

A round (`webhooks_deliver`):
1. claims due deliveries in a short transaction: `SELECT ... FOR UPDATE SKIP LOCKED`, so
   two workers never take the same row, then marks them IN_FLIGHT with a lease. A worker
   killed mid-send leaves its rows IN_FLIGHT; when the lease runs out they are due again
   (that is the "at least once").
2. sends them outside any transaction, a few endpoints at a time on a thread pool, so
   one slow endpoint does not hold back the others;
3. records each result as it arrives: 2xx delivered; anything else is tried again after
   an exponential backoff with jitter, until WEBHOOK_RETRY_HOURS after the event, when
   the delivery is FAILED (and the endpoint, failing that long, disabled).

Only the earliest unfinished delivery of an order to an endpoint is ever due, so a later
event waits until the earlier one is delivered or given up.

The worker runs rounds back to back while they find work (`webhooks_deliver_due`, for up
to DUE_BUDGET_SECONDS, then again at once after any other job that is due), so the
throughput is not one round a second; and the HTTP connections to an endpoint's checked
address are kept open between deliveries (`_session`), so a busy endpoint is not sent
one TCP (and TLS) handshake per event.
"""

import contextvars
import hashlib
import hmac
import http.cookiejar
import logging
import random
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol
from urllib.parse import urlsplit, urlunsplit

import orjson
import requests
from django.conf import settings
from django.db import transaction
from django.db.models import Exists, F, OuterRef, Q

from airline.api import clock
from webhooks.addresses import RefusedUrl, Target, check_url
from webhooks.models import WebhookDelivery, WebhookEndpoint, WebhookEvent
from webhooks.outbox import event_data_render
from webhooks.services import endpoint_disable

logger = logging.getLogger("airline.webhooks")
Status = WebhookDelivery.Status
UNFINISHED = (Status.PENDING, Status.IN_FLIGHT)


@dataclass(frozen=True)
class Outcome:
    """What one attempt got: the HTTP status, or None and why there was none."""

    status: int | None
    error: str = ""

    @property
    def delivered(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


class Sender(Protocol):
    """Sends one signed body to an endpoint's URL (tests may pass their own)."""

    def __call__(self, url: str, body: bytes, headers: dict[str, str]) -> Outcome: ...


def signature(secret: str, timestamp: str, body: bytes) -> str:
    """`v1=` + hex HMAC-SHA256(secret, timestamp + "." + body): what Webhook-Signature
    carries and what a receiver recomputes."""
    mac = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256)
    return "v1=" + mac.hexdigest()


def http_send(url: str, body: bytes, headers: dict[str, str]) -> Outcome:
    """POST over requests to the checked address, never following a redirect (it could
    lead anywhere). The host is resolved and checked again now (DNS rebinding); the
    connection is one kept open to that same address if there is one."""
    try:
        target = check_url(url)
    except RefusedUrl as exc:
        return Outcome(None, f"refused: {exc}")
    try:
        response = _session(target).post(
            _address_url(target),
            data=body,
            headers={**headers, "Host": _host_header(target)},
            timeout=settings.WEBHOOK_TIMEOUT_SECONDS,
            allow_redirects=False,
        )
    except requests.RequestException as exc:
        return Outcome(None, type(exc).__name__)
    response.close()  # the body was read: the connection goes back to its pool
    return Outcome(response.status_code)


# Sessions by checked target, the least recently used dropped past SESSIONS_KEPT: a pool
# of kept-alive connections per endpoint address (urllib3's pools are thread-safe). A
# target is the host name *and* the address checked for it, so a host that resolves
# elsewhere gets a new session and never reuses a connection to the old address.
SESSIONS_KEPT = 256
_sessions: "OrderedDict[Target, requests.Session]" = OrderedDict()
_sessions_lock = threading.Lock()


def _session(target: Target) -> requests.Session:
    with _sessions_lock:
        session = _sessions.get(target)
        if session is not None:
            _sessions.move_to_end(target)
            return session
        session = requests.Session()
        session.cookies.set_policy(_NO_COOKIES)  # a receiver's cookie never comes back
        adapter = _PinnedAdapter(target, pool_maxsize=settings.WEBHOOK_THREADS)
        session.mount(f"{target.scheme}://", adapter)
        _sessions[target] = session
        while len(_sessions) > SESSIONS_KEPT:
            _sessions.popitem(last=False)[1].close()
        return session


def sessions_close() -> None:
    """Drop every kept connection (tests; a worker about to fork)."""
    with _sessions_lock:
        while _sessions:
            _sessions.popitem()[1].close()


_NO_COOKIES = http.cookiejar.DefaultCookiePolicy(allowed_domains=[])


class _PinnedAdapter(requests.adapters.HTTPAdapter):
    """Connects to the checked address while TLS still verifies the host name."""

    def __init__(self, target: Target, *, pool_maxsize: int) -> None:
        self._target = target
        super().__init__(max_retries=0, pool_maxsize=pool_maxsize)

    def init_poolmanager(self, *args, **kwargs) -> None:
        if self._target.scheme == "https":
            kwargs["server_hostname"] = self._target.host
            kwargs["assert_hostname"] = self._target.host
        super().init_poolmanager(*args, **kwargs)


def _address_url(target: Target) -> str:
    parts = urlsplit(target.url)
    host = f"[{target.address}]" if ":" in target.address else target.address
    return urlunsplit(parts._replace(netloc=f"{host}:{target.port}"))


def _host_header(target: Target) -> str:
    default = 443 if target.scheme == "https" else 80
    return target.host if target.port == default else f"{target.host}:{target.port}"


@dataclass(frozen=True)
class Claimed:
    """A delivery taken by this worker: `attempt` fences its result (a worker whose lease
    ran out and whose row someone else took records nothing)."""

    pk: int
    attempt: int
    endpoint_id: int
    url: str
    secret: str
    body: bytes
    content_type: str
    event_id: str


def webhooks_deliver(
    *, now: datetime | None = None, sender: Sender | None = None, limit: int | None = None
) -> dict[str, int]:
    """One round: claim the due deliveries, send them concurrently, record each result."""
    now = now or clock.now()
    claimed = deliveries_claim(now=now, limit=limit or settings.WEBHOOK_BATCH_SIZE)
    if not claimed:
        return {}
    send = sender or http_send
    # "cancelled" (an endpoint deleted mid-round) is counted only when there is one.
    done = {"delivered": 0, "retrying": 0, "failed": 0}
    with ThreadPoolExecutor(max_workers=settings.WEBHOOK_THREADS) as pool:
        # Each attempt in a copy of the round's context (a context runs in one thread at
        # a time): what the round set there, its trace when traced, is the attempt's too.
        futures = {
            pool.submit(contextvars.copy_context().run, _attempt, send, c): c for c in claimed
        }
        for future in as_completed(futures):
            result = delivery_record(futures[future], future.result(), now=clock.now())
            done[result] = done.get(result, 0) + 1
    return done


# How long the worker's job runs rounds back to back before it lets the worker's other
# jobs have their turn (it is run again at once after them while it finds work).
DUE_BUDGET_SECONDS = 5.0


def webhooks_deliver_due(
    *, budget: float = DUE_BUDGET_SECONDS, sender: Sender | None = None
) -> dict[str, int]:
    """Rounds one after another until one finds nothing due or `budget` seconds have
    gone: a backlog or a steady load goes out as fast as rounds go, not a round per
    worker interval. What failed is not due again within it (its backoff)."""
    deadline = time.monotonic() + budget
    total: dict[str, int] = {}
    while done := webhooks_deliver(sender=sender):
        for key, count in done.items():
            total[key] = total.get(key, 0) + count
        if time.monotonic() >= deadline:
            break
    return total


def _attempt(send: Sender, c: Claimed) -> Outcome:
    # Runs on a pool thread: no database here, only the network.
    timestamp = str(int(clock.now().timestamp()))
    headers = {
        "Content-Type": c.content_type,
        "User-Agent": "airline-webhooks/1",
        "Webhook-Id": c.event_id,
        "Webhook-Timestamp": timestamp,
        "Webhook-Signature": signature(c.secret, timestamp, c.body),
    }
    try:
        return send(c.url, c.body, headers)
    except Exception as exc:  # a sender's bug must not lose the claim's record
        logger.exception("webhook send failed")
        return Outcome(None, type(exc).__name__)


def _due(now: datetime) -> Q:
    # A disabled endpoint's deliveries wait; a deleted one's are due, to be cancelled.
    return Q(status__in=UNFINISHED, next_attempt_at__lte=now) & (
        Q(endpoint__active=True) | Q(endpoint__deleted_at__isnull=False)
    )


def deliveries_claim(*, now: datetime, limit: int) -> list[Claimed]:
    """Take up to `limit` due deliveries for this worker (at most WEBHOOK_PER_ENDPOINT per
    endpoint, so one endpoint's backlog cannot fill the pool): IN_FLIGHT until now +
    WEBHOOK_LEASE_SECONDS. Due deliveries of a deleted endpoint are CANCELLED instead:
    those a booking wrote while the endpoint was being deleted
    (webhooks.services.endpoints_delete), or left IN_FLIGHT by a worker that died."""
    earlier_unfinished = WebhookDelivery.objects.filter(
        endpoint_id=OuterRef("endpoint_id"),
        order_id=OuterRef("order_id"),
        sequence__lt=OuterRef("sequence"),
        status__in=UNFINISHED,
    )
    lease_until = now + timedelta(seconds=settings.WEBHOOK_LEASE_SECONDS)
    with transaction.atomic():
        # SKIP LOCKED: rows another worker is claiming right now are left to it. Its
        # WHERE is checked again on the locked row, so a row claimed and committed
        # meanwhile (IN_FLIGHT, lease in the future) is not taken twice.
        rows = list(
            WebhookDelivery.objects.select_for_update(skip_locked=True, of=("self",))
            .filter(_due(now))
            .filter(Q(order__isnull=True) | ~Exists(earlier_unfinished))
            .order_by("next_attempt_at", "id")
            .values("pk", "attempts", "endpoint_id", "endpoint__deleted_at")[: limit * 2]
        )
        per_endpoint: dict[int, int] = {}
        taken, cancelled = [], []
        for row in rows:
            if row["endpoint__deleted_at"] is not None:
                cancelled.append(row["pk"])
                continue
            count = per_endpoint.get(row["endpoint_id"], 0)
            if count < settings.WEBHOOK_PER_ENDPOINT and len(taken) < limit:
                per_endpoint[row["endpoint_id"]] = count + 1
                taken.append(row["pk"])
        WebhookDelivery.objects.filter(pk__in=taken).update(
            status=Status.IN_FLIGHT,
            attempts=F("attempts") + 1,
            lease_until=lease_until,
            next_attempt_at=lease_until,  # due again if this worker never reports back
            last_attempt_at=now,
        )
        if cancelled:
            WebhookDelivery.objects.filter(pk__in=cancelled).update(
                status=Status.CANCELLED, lease_until=None
            )
    claims = (
        WebhookDelivery.objects.filter(pk__in=taken)
        .select_related("endpoint", "event__seller")
        .order_by("next_attempt_at", "id")
    )
    return [_claimed(d) for d in claims]


def _claimed(d: WebhookDelivery) -> Claimed:
    event = d.event
    data = event.data or event_data_render(event.pk)
    body, content_type = _BODIES.get(d.endpoint.format, _json_body)(event, data)
    return Claimed(
        pk=d.pk,
        attempt=d.attempts,
        endpoint_id=d.endpoint_id,
        url=d.endpoint.url,
        secret=d.endpoint.secret,
        body=body,
        content_type=content_type,
        event_id=event.event_id,
    )


# A body format other than JSON (WebhookEndpoint.Format): (event, its order view as JSON
# text) -> (body, content type). Registered by the app that renders it, in its
# AppConfig.ready (ndc: IATA_OrderChangeNotifRQ), so that webhooks never import it.
BodyRenderer = Callable[[WebhookEvent, str], tuple[bytes, str]]
_BODIES: dict[str, BodyRenderer] = {}


def body_format_register(endpoint_format: str, render: BodyRenderer) -> None:
    """Deliveries to endpoints of `endpoint_format` carry `render(event, data)`."""
    _BODIES[endpoint_format] = render


def _json_body(event: WebhookEvent, data: str) -> tuple[bytes, str]:
    body = orjson.dumps(
        {
            "id": event.event_id,
            "type": event.type,
            "createdAt": clock.format_utc(event.created_at),
            "apiVersion": settings.WEBHOOK_API_VERSION,
            "sequence": event.sequence,
            "data": orjson.Fragment(data),
        }
    )
    return body, "application/json"


def delivery_record(claim: Claimed, outcome: Outcome, *, now: datetime) -> str:
    """Write one attempt's result: delivered, retrying (backoff), failed (72 h gone), or
    cancelled (its endpoint was deleted while it was sent: no retry). Says which."""
    mine = WebhookDelivery.objects.filter(
        pk=claim.pk, status=Status.IN_FLIGHT, attempts=claim.attempt
    )
    common = {
        "lease_until": None,
        "last_status_code": outcome.status,
        "last_error": outcome.error[:200],
    }
    if outcome.delivered:
        mine.update(status=Status.DELIVERED, delivered_at=now, **common)
        WebhookEndpoint.objects.filter(pk=claim.endpoint_id).exclude(failing_since=None).update(
            failing_since=None
        )
        return "delivered"
    row = (
        WebhookDelivery.objects.filter(pk=claim.pk)
        .values_list("give_up_at", "endpoint__deleted_at")
        .first()
    )
    if row is None or row[1] is not None:
        # The endpoint was deleted after the claim (or removed with its seller, its
        # deliveries with it): nothing is retried, and the rest of the round goes on.
        mine.update(status=Status.CANCELLED, next_attempt_at=now, **common)
        logger.info(
            "webhook delivery cancelled: endpoint deleted",
            extra={"fields": {"delivery": claim.pk, "eventId": claim.event_id}},
        )
        return "cancelled"
    give_up_at = row[0]
    retry_at = now + backoff(claim.attempt)
    if retry_at >= give_up_at:
        mine.update(status=Status.FAILED, next_attempt_at=now, **common)
        result = "failed"
    else:
        mine.update(status=Status.PENDING, next_attempt_at=retry_at, **common)
        result = "retrying"
    _endpoint_failed(claim.endpoint_id, now=now)
    return result


def backoff(attempt: int, *, rand: Callable[[], float] = random.random) -> timedelta:
    """The wait after the `attempt`-th failure: WEBHOOK_BACKOFF_SECONDS doubled each time,
    at most an hour, less up to a quarter at random so that many deliveries failing
    together do not all come back at one instant."""
    base = settings.WEBHOOK_BACKOFF_SECONDS * 2 ** min(attempt - 1, 20)
    seconds = min(base, 3600)
    return timedelta(seconds=seconds * (1 - 0.25 * rand()))


def _endpoint_failed(endpoint_id: int, *, now: datetime) -> None:
    WebhookEndpoint.objects.filter(pk=endpoint_id, failing_since=None).update(failing_since=now)
    limit = now - timedelta(hours=settings.WEBHOOK_RETRY_HOURS)
    for endpoint in WebhookEndpoint.objects.filter(
        pk=endpoint_id, active=True, failing_since__lte=limit
    ).select_related("seller__partner"):
        endpoint_disable(
            endpoint=endpoint,
            now=now,
            reason=f"failing since {clock.format_utc(endpoint.failing_since)}",
        )
