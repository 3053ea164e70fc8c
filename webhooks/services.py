"""Webhook endpoint use cases: register, delete, ping, disable, resend (the API and the
admin call these)."""

import logging
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet

from airline.api.errors import ApiError, Err
from sellers.models import Seller
from webhooks.addresses import RefusedUrl, check_url
from webhooks.models import WebhookDelivery, WebhookEndpoint, WebhookEvent
from webhooks.outbox import PUBLIC_TYPES, ping_record
from webhooks.selectors import endpoint_get

logger = logging.getLogger("airline.webhooks")


@dataclass(frozen=True)
class Registered:
    """A new endpoint and its signing secret, which is shown this once."""

    endpoint: WebhookEndpoint
    secret: str


def check_webhook_url(url: str) -> None:
    """ERR-1005 at `url` for a URL we will not send to (webhooks.addresses)."""
    try:
        check_url(url)
    except RefusedUrl as exc:
        raise ApiError(Err.VALIDATION, f"The webhook URL {exc}", path="url") from None


def check_event_types(events: Sequence[str]) -> None:
    unknown = sorted(set(events) - set(PUBLIC_TYPES))
    if unknown:
        raise ApiError(Err.VALIDATION, f"Unknown event types: {', '.join(unknown)}", path="events")


def endpoint_register(
    *,
    seller: Seller,
    url: str,
    events: Sequence[str],
    now: datetime,
    format: str = WebhookEndpoint.Format.JSON,
) -> Registered:
    """A new active endpoint for the seller, with a fresh secret; `format` says whether it
    gets the JSON event or IATA_OrderChangeNotifRQ."""
    check_webhook_url(url)
    check_event_types(events)
    if format not in WebhookEndpoint.Format.values:
        raise ApiError(Err.VALIDATION, f"Unknown webhook format: {format}", path="format")
    secret = "whsec_" + secrets.token_urlsafe(32)
    endpoint = WebhookEndpoint.objects.create(
        webhook_id="whk_" + secrets.token_hex(12),
        seller=seller,
        url=url,
        events=list(dict.fromkeys(events)),
        format=format,
        secret=secret,
        created_at=now,
    )
    return Registered(endpoint=endpoint, secret=secret)


def endpoint_delete(*, seller: Seller, webhook_id: str, now: datetime) -> None:
    """Delete the seller's endpoint: gone from its list, its ping and the outbox; its
    pending deliveries CANCELLED, never sent; its deliveries' history kept."""
    endpoint = endpoint_get(seller=seller, webhook_id=webhook_id)
    endpoints_delete(endpoints=WebhookEndpoint.objects.filter(pk=endpoint.pk), now=now)


def endpoints_delete(*, endpoints: QuerySet[WebhookEndpoint], now: datetime) -> int:
    """Mark the endpoints deleted (a soft delete) and cancel their pending deliveries; how
    many were deleted now.

    The row stays because bookings write deliveries to an endpoint without locking it: a
    transaction that read it for its fan-out (webhooks.outbox) before this commits, and
    commits after, still commits, its foreign key (checked at commit) finding the row.
    The row is locked FOR NO KEY UPDATE, which that check's key-share lock never waits
    for, nor the other way round. Such a delivery is PENDING to a deleted endpoint,
    unseen by the cancel below: the worker's claim cancels it when it comes due
    (webhooks.delivery.deliveries_claim). A delivery IN_FLIGHT is left to its worker,
    which records that attempt and cancels it rather than retry."""
    with transaction.atomic():
        # Locked until commit: a concurrent delete of the same endpoint waits, then finds
        # it deleted and does nothing.
        pks = list(
            WebhookEndpoint.objects.filter(pk__in=endpoints.values("pk"), deleted_at=None)
            .select_for_update(no_key=True)
            .values_list("pk", flat=True)
        )
        WebhookEndpoint.objects.filter(pk__in=pks).update(active=False, deleted_at=now)
        WebhookDelivery.objects.filter(
            endpoint_id__in=pks, status=WebhookDelivery.Status.PENDING
        ).update(status=WebhookDelivery.Status.CANCELLED)
    return len(pks)


def endpoint_ping(*, seller: Seller, webhook_id: str, now: datetime) -> WebhookEvent:
    """Queue a `ping` event to the seller's endpoint (sent like any other event)."""
    endpoint = endpoint_get(seller=seller, webhook_id=webhook_id)
    with transaction.atomic():
        return ping_record(endpoint, now=now)


def endpoint_disable(*, endpoint: WebhookEndpoint, now: datetime, reason: str) -> None:
    """Stop sending to an endpoint; its seller is named in the log so that someone tells
    them. Pending deliveries wait, and resume if it is enabled again."""
    updated = WebhookEndpoint.objects.filter(pk=endpoint.pk, active=True).update(
        active=False, disabled_at=now, disabled_reason=reason[:200]
    )
    if updated:
        seller = endpoint.seller
        logger.warning(
            "webhook endpoint disabled",
            extra={
                "fields": {
                    "webhookId": endpoint.webhook_id,
                    "url": endpoint.url,
                    "seller": seller.code,
                    "partner": f"{seller.partner.code} ({seller.partner.name})",
                    "reason": reason,
                }
            },
        )


def endpoint_enable(*, endpoint: WebhookEndpoint) -> None:
    """Send to a disabled endpoint again, its failure clock reset (a deleted one stays
    deleted)."""
    WebhookEndpoint.objects.filter(pk=endpoint.pk, deleted_at=None).update(
        active=True, disabled_at=None, disabled_reason="", failing_since=None
    )


def deliveries_resend(*, deliveries: QuerySet[WebhookDelivery], now: datetime) -> int:
    """Failed deliveries due again now, with a new 72-hour window counted from now; not
    those of a deleted endpoint, which are never sent again."""
    failed = deliveries.filter(
        status=WebhookDelivery.Status.FAILED, endpoint__deleted_at__isnull=True
    )
    return WebhookDelivery.objects.filter(pk__in=failed.values("pk")).update(
        status=WebhookDelivery.Status.PENDING,
        next_attempt_at=now,
        give_up_at=now + timedelta(hours=settings.WEBHOOK_RETRY_HOURS),
        attempts=0,
    )


def deliveries_retry_now(*, deliveries: QuerySet[WebhookDelivery], now: datetime) -> int:
    """Pending deliveries due now rather than at their backoff's next attempt (the back
    office's "retry now", once the agency says its endpoint is fixed). Their attempts
    and give-up time stay: a retry is one more attempt, not a new window. A delivery in
    flight is left to its worker; one of a disabled endpoint waits for it to be enabled
    (the worker's claim skips it)."""
    pending = deliveries.filter(status=WebhookDelivery.Status.PENDING)
    return WebhookDelivery.objects.filter(
        pk__in=pending.values("pk"), status=WebhookDelivery.Status.PENDING
    ).update(next_attempt_at=now)
