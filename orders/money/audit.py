"""The books audit (docs/operators/support.md "Books audit"): every order's money checked
against its own rows and, when asked, against the payment provider's books. Read only:
it reports, it never corrects. `manage.py audit_books` prints what it finds; the
background worker runs it nightly and keeps the count for `/metrics`
(orders.models.BooksAudit).

What must hold, per order (a disagreement names the order, the equation and the figures):

- `paid`: the order's `paid` is what its payments took less what went back of them;
- `books`: once an order is settled (confirmed, cancelled or closed), what its payments
  took less what went back equals what it is worth plus what the airline kept plus what
  became credit, less what the provider gave back outside this service
  (charged - refunded = total + retained + credited - refundedOutside);
- `refunds`: each payment's `refunded` is the sum of its refund rows;
- `credited`: the order's `credited` is the sum of the credits it issued;
- `credit`: each credit it issued holds what it was issued with less what orders spent
  of it (issued = spent + remaining);
- `provider`: what the gateway kept of the order's card charges (captured less
  refunded, by its own books: `PaymentGateway.settlement`) is what the order's card
  payments say they kept; and a charge no payment took keeps nothing there (`-` as the
  order when its reserved order is gone).

Orders are read in chunks by primary key, each chunk's figures in a handful of aggregate
queries, so memory stays flat however many orders there are; the provider is asked once
per charge. An intent still within PAYMENT_INTENT_GRACE_SECONDS is a charge under way and
is left to the next run.
"""

import logging
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from decimal import Decimal

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Q, Sum

from airline.api import clock
from airline.fares.money import ZERO
from orders.models import (
    AirlineCredit,
    BooksAudit,
    Order,
    OrderStatus,
    Payment,
    PaymentIntent,
)
from orders.money.payments import PaymentGateway, payment_gateway

SETTLED = (OrderStatus.CONFIRMED, OrderStatus.CANCELLED, OrderStatus.CLOSED)
logger = logging.getLogger("airline.audit")
KEPT_LINES = 200  # disagreements a recorded run keeps for the back office


@dataclass(frozen=True)
class Disagreement:
    """One equation that does not hold: the order's id, which equation, the figures."""

    order_id: str
    equation: str
    figures: str
    order_pk: int | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return f"{self.order_id} {self.equation}: {self.figures}"


@dataclass
class AuditCounts:
    """What a run looked at, filled in as it goes."""

    orders: int = 0
    charges: int = 0
    disagreements: int = 0
    lines: list[str] = field(default_factory=list)


def books_audit(
    *,
    since: datetime | None = None,
    provider: bool = True,
    gateway: PaymentGateway | None = None,
    now: datetime | None = None,
    chunk_size: int = 1000,
    counts: AuditCounts | None = None,
) -> Iterator[Disagreement]:
    """Every disagreement in the books of the orders changed at or after `since` (all
    orders without it); with `provider`, against the configured gateway (or `gateway`).

    Each chunk's rows are read in one snapshot; an order found disagreeing is looked at
    again, rows and provider both, and reported only if it still disagrees, so a change
    committed or a refund sent between the reads and the provider's answer is not taken
    for a fault."""
    now = now or clock.now()
    counts = counts if counts is not None else AuditCounts()
    in_flight = now - timedelta(seconds=settings.PAYMENT_INTENT_GRACE_SECONDS)
    gateway = (gateway or payment_gateway()) if provider else None
    orders = Order.objects.order_by("pk")
    if since is not None:
        orders = orders.filter(updated_at__gte=since)
    last_pk = 0
    while True:
        pks = list(orders.filter(pk__gt=last_pk).values_list("pk", flat=True)[:chunk_size])
        if not pks:
            break
        last_pk = pks[-1]
        counts.orders += len(pks)
        suspects = {found.order_pk for found in _findings(pks, gateway, in_flight, counts)}
        if suspects:
            again = _findings(sorted(suspects), gateway, in_flight, AuditCounts())
            for found in again:
                counts.disagreements += 1
                yield found
    if gateway is not None:
        for found in _orphans_without_order(gateway, since, in_flight, counts):
            counts.disagreements += 1
            yield found


def _findings(
    pks: list[int], gateway: PaymentGateway | None, in_flight: datetime, counts: AuditCounts
) -> list[Disagreement]:
    """The disagreements of the orders `pks`: their rows read in one snapshot, then the
    provider asked about their charges."""
    with _snapshot():
        chunk = list(
            Order.objects.filter(pk__in=pks)
            .order_by("pk")
            .values(
                "pk",
                "order_id",
                "status",
                "paid",
                "total",
                "retained",
                "credited",
                "refunded_outside",
            )
        )
        pk_of = {row["order_id"]: row["pk"] for row in chunk}
        found = [replace(d, order_pk=pk_of[d.order_id]) for d in _chunk_books(chunk)]
        charges = _chunk_charges(chunk, in_flight) if gateway is not None else None
    if charges is not None:
        found += _chunk_provider(charges, gateway, counts)
    return found


class _snapshot(transaction.Atomic):
    """A read-only transaction that sees one snapshot of the database (REPEATABLE READ on
    PostgreSQL), unless already inside a transaction (a test's), which then decides."""

    def __init__(self) -> None:
        super().__init__(using=None, savepoint=True, durable=False)

    def __enter__(self) -> None:
        outer = connection.in_atomic_block
        super().__enter__()
        if not outer and connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")


def books_audit_nightly() -> dict[str, int] | None:
    """The worker's job: when the last recorded run started WORKER_BOOKS_AUDIT_SECONDS
    ago or more (or there is none), audit the orders changed in the last
    BOOKS_AUDIT_DAYS (0: every order) and record the run; else nothing."""
    now = clock.now()
    last = BooksAudit.objects.order_by("-pk").values_list("started_at", flat=True).first()
    if last is not None and now - last < timedelta(seconds=settings.WORKER_BOOKS_AUDIT_SECONDS):
        return None
    days = settings.BOOKS_AUDIT_DAYS
    return books_audit_record(since=now - timedelta(days=days) if days else None)


def books_audit_record(*, since: datetime | None = None) -> dict[str, int]:
    """Audit, log each disagreement, and record the run (its count is the gauge
    `airline_books_disagreements`)."""
    started = clock.now()
    counts = AuditCounts()
    for found in books_audit(since=since, now=started, counts=counts):
        logger.warning(
            "books disagreement",
            extra={
                "fields": {
                    "order": found.order_id,
                    "equation": found.equation,
                    "figures": found.figures,
                }
            },
        )
        if len(counts.lines) < KEPT_LINES:
            counts.lines.append(str(found))
    with transaction.atomic():
        BooksAudit.objects.create(
            started_at=started,
            finished_at=clock.now(),
            since=since,
            orders=counts.orders,
            disagreements=counts.disagreements,
            lines=counts.lines,
        )
        # Only the latest runs are of use: the gauge reads the last one.
        keep = BooksAudit.objects.order_by("-pk").values_list("pk", flat=True)[:30]
        BooksAudit.objects.exclude(pk__in=list(keep)).delete()
    return {"orders_audited": counts.orders, "books_disagreements": counts.disagreements}


def _sums(rows, key: str, value: str) -> dict[int, Decimal]:
    return {row[key]: row[value] for row in rows}


def _chunk_books(chunk: list[dict]) -> Iterator[Disagreement]:
    """The equations that need no provider, for one chunk of orders."""
    ids = [row["pk"] for row in chunk]
    net = {
        row["order_id"]: (row["charged"], row["back"])
        for row in Payment.objects.filter(order_id__in=ids)
        .exclude(status=Payment.Status.FAILED)
        .values("order_id")
        .annotate(charged=Sum("amount"), back=Sum("refunded"))
        .values("order_id", "charged", "back")
    }
    issued = _sums(
        AirlineCredit.objects.filter(source_order_id__in=ids)
        .values("source_order_id")
        .annotate(issued=Sum("amount"))
        .values("source_order_id", "issued"),
        "source_order_id",
        "issued",
    )
    refund_rows = defaultdict(list)
    for payment in (
        Payment.objects.filter(order_id__in=ids)
        .annotate(given=Sum("refunds__amount", default=ZERO))
        .exclude(refunded=F("given"))
        .values("order_id", "ref", "refunded", "given")
    ):
        refund_rows[payment["order_id"]].append(payment)
    credit_rows = defaultdict(list)
    for credit in (
        AirlineCredit.objects.filter(source_order_id__in=ids)
        .annotate(
            spent=Sum(F("payments__amount") - F("payments__refunded"), default=ZERO),
        )
        .exclude(amount=F("spent") + F("remaining"))
        .values("source_order_id", "code", "amount", "spent", "remaining")
    ):
        credit_rows[credit["source_order_id"]].append(credit)

    for order in chunk:
        pk, order_id = order["pk"], order["order_id"]
        charged, refunded = net.get(pk, (ZERO, ZERO))
        if order["paid"] != charged - refunded:
            yield Disagreement(
                order_id,
                "paid",
                f"paid {order['paid']} != charged {charged} - refunded {refunded}"
                f" = {charged - refunded}",
            )
        worth = order["total"] + order["retained"] + order["credited"] - order["refunded_outside"]
        if order["status"] in SETTLED and charged - refunded != worth:
            yield Disagreement(
                order_id,
                "books",
                f"charged {charged} - refunded {refunded} = {charged - refunded}"
                f" != total {order['total']} + retained {order['retained']}"
                f" + credited {order['credited']} - refundedOutside"
                f" {order['refunded_outside']} = {worth}",
            )
        for payment in refund_rows.get(pk, ()):
            yield Disagreement(
                order_id,
                "refunds",
                f"payment {payment['ref']} refunded {payment['refunded']}"
                f" != its refunds {payment['given']}",
            )
        if order["credited"] != issued.get(pk, ZERO):
            yield Disagreement(
                order_id,
                "credited",
                f"credited {order['credited']} != credits issued {issued.get(pk, ZERO)}",
            )
        for credit in credit_rows.get(pk, ()):
            yield Disagreement(
                order_id,
                "credit",
                f"credit {credit['code']} issued {credit['amount']} != spent {credit['spent']}"
                f" + remaining {credit['remaining']}"
                f" = {credit['spent'] + credit['remaining']}",
            )


def _kept(gateway: PaymentGateway, reference: str) -> Decimal:
    """What the gateway kept for one of our references: captured less refunded."""
    held = gateway.settlement(reference=reference)
    if held is None or not held.charge.captured:
        return ZERO
    return held.outstanding


@dataclass
class _Charges:
    """What the rows of one chunk say of its card charges, for the provider check."""

    by_pk: dict[int, str]
    ours: dict[int, Decimal]
    intents: list[dict]
    under_way: set[int]


def _chunk_charges(chunk: list[dict], in_flight: datetime) -> _Charges:
    by_pk = {row["pk"]: row["order_id"] for row in chunk}
    ours = _sums(
        Payment.objects.filter(order_id__in=by_pk, method=Payment.Method.CARD, intent__isnull=False)
        .values("order_id")
        .annotate(kept=Sum(F("amount") - F("refunded")))
        .values("order_id", "kept"),
        "order_id",
        "kept",
    )
    intents, under_way = [], set()
    for intent in (
        PaymentIntent.objects.filter(Q(order_id__in=by_pk) | Q(payment__order_id__in=by_pk))
        .order_by("pk")
        .values("ref", "state", "created_at", "order_id", "payment__order_id")
    ):
        intent["owner"] = intent["payment__order_id"] or intent["order_id"]
        if intent["state"] == PaymentIntent.State.PENDING and intent["created_at"] > in_flight:
            under_way.add(intent["owner"])  # a charge under way: its order is left alone
        else:
            intents.append(intent)
    return _Charges(by_pk, ours, intents, under_way)


def _chunk_provider(
    charges: _Charges, gateway: PaymentGateway, counts: AuditCounts
) -> list[Disagreement]:
    """The orders of one chunk against the provider: per order, what it kept of the
    order's card charges; per charge no payment took, nothing."""
    found = []
    theirs: dict[int, Decimal] = defaultdict(lambda: ZERO)
    for intent in charges.intents:
        owner = intent["owner"]
        if owner in charges.under_way:
            continue
        counts.charges += 1
        kept = _kept(gateway, intent["ref"])
        if intent["payment__order_id"] is not None:
            theirs[owner] += kept
        elif kept:
            found.append(_orphan(charges.by_pk.get(owner, "-"), intent["ref"], kept, owner))
    for pk in sorted(set(charges.ours) | set(theirs)):
        if pk in charges.under_way or pk not in charges.by_pk:
            continue
        ours = charges.ours.get(pk, ZERO)
        if ours != theirs.get(pk, ZERO):
            found.append(
                Disagreement(
                    charges.by_pk[pk],
                    "provider",
                    f"card payments kept {ours} != provider captured - refunded {theirs[pk]}",
                    pk,
                )
            )
    return found


def _orphans_without_order(
    gateway: PaymentGateway, since: datetime | None, in_flight: datetime, counts: AuditCounts
) -> Iterator[Disagreement]:
    """Charges whose reserved order is gone and that no payment took: nothing kept."""
    intents = PaymentIntent.objects.filter(order__isnull=True, payment__isnull=True).exclude(
        state=PaymentIntent.State.PENDING, created_at__gt=in_flight
    )
    if since is not None:
        intents = intents.filter(updated_at__gte=since)
    for ref in intents.order_by("pk").values_list("ref", flat=True).iterator(chunk_size=1000):
        counts.charges += 1
        kept = _kept(gateway, ref)
        if kept:
            yield _orphan("-", ref, kept)


def _orphan(order_id: str, ref: str, kept: Decimal, order_pk: int | None = None) -> Disagreement:
    return Disagreement(
        order_id,
        "provider",
        f"charge {ref} taken by no payment keeps {kept} at the provider",
        order_pk,
    )
