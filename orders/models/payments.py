"""Money that moved for an order (DESIGN.md §11 "Payments"): payments and refunds, the card
charges' intents, the gateway's ledger, the provider's own events and the books audit."""

from django.db import models
from django.db.models import Q

from orders.models.credits import AirlineCredit
from orders.models.fields import JSONField
from orders.models.order import Order
from sellers.models import Seller


class Payment(models.Model):
    """Money taken (or given back). The card's full number and CVV are never stored:
    brand, last four and expiry are (DESIGN.md §8). A payment by airline credit names
    the credit it spent."""

    class Status(models.TextChoices):
        SUCCESSFUL = "SUCCESSFUL"
        REFUNDED = "REFUNDED"
        FAILED = "FAILED"

    class Method(models.TextChoices):
        CARD = "CreditCard"
        CREDIT = "Credit"  # airline credit (DESIGN.md §11): `credit` names it
        EXTERNAL = "External"  # collected by the channel an imported booking came from

    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="payments")
    ref = models.CharField(max_length=24)
    created_at = models.DateTimeField()
    amount = models.DecimalField(max_digits=12, decimal_places=2)
    currency = models.CharField(max_length=3, default="USD")
    status = models.CharField(max_length=10, choices=Status.choices)
    method = models.CharField(max_length=13, choices=Method.choices, default=Method.CARD)
    # What of `amount` went back (orders.money.refunds); REFUNDED once it all has.
    refunded = models.DecimalField(max_digits=12, decimal_places=2, default=0, db_default=0)
    credit = models.ForeignKey(
        AirlineCredit, on_delete=models.PROTECT, null=True, blank=True, related_name="payments"
    )
    card_brand = models.CharField(max_length=2, blank=True)
    card_last4 = models.CharField(max_length=4, blank=True)
    card_expiry = models.CharField(max_length=4, blank=True, help_text="MMYY")
    gateway_reference = models.CharField(max_length=64, blank=True)
    # The cardholder disputed the charge with their bank (the provider's webhook,
    # orders.money.provider_events): the dispute's status and reason as the provider says.
    dispute = models.CharField(max_length=80, blank=True, default="", db_default="")

    class Meta:
        ordering = ["order_id", "id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(refunded__gte=0) & Q(refunded__lte=models.F("amount")),
                name="payment_refunded_within_amount",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.ref} {self.amount} {self.status}"


class Refund(models.Model):
    """Money owed back to a card, written in the transaction of the change that owes it
    and sent to the gateway once that commits (orders.money.refunds): a worker that dies in
    between leaves a PENDING row the reconciler sends. The gateway refunds a `ref` at
    most once, so sending twice gives back once."""

    class State(models.TextChoices):
        PENDING = "PENDING", "Owed; not yet confirmed by the gateway"
        SENT = "SENT", "Given back by the gateway"
        # Found already given back when the reconciler came to send it again: all or
        # part of it (`covered`) by refunds made at the provider outside this service.
        COVERED = "COVERED", "Given back, in part or whole by a refund made at the provider"

    ref = models.CharField(max_length=32, unique=True)
    payment = models.ForeignKey(Payment, on_delete=models.PROTECT, related_name="refunds")
    amount = models.DecimalField(max_digits=12, decimal_places=2)
    state = models.CharField(max_length=7, choices=State.choices, default=State.PENDING)
    why = models.CharField(max_length=200)
    created_at = models.DateTimeField()
    sent_at = models.DateTimeField(null=True, blank=True)
    # Only on a refund the provider made outside this service (its dashboard), recorded
    # from its `charge.refunded` event (orders.money.provider_events): the provider's id of it.
    gateway_reference = models.CharField(max_length=64, blank=True, default="", db_default="")
    # Set by the reconciler when it settles a refund it found given back (orders.money.refunds
    # `refunds_retry`): how much of `amount` a refund made outside this service covered
    # (the rest went under our reference), and what it found.
    covered = models.DecimalField(max_digits=12, decimal_places=2, default=0, db_default=0)
    note = models.CharField(max_length=200, blank=True, default="", db_default="")

    class Meta:
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["created_at"], name="refund_pending", condition=Q(state="PENDING"))
        ]
        constraints = [
            models.CheckConstraint(condition=Q(amount__gt=0), name="refund_amount_positive"),
            # A provider's refund is recorded once, however often its event comes.
            models.UniqueConstraint(
                fields=["gateway_reference"],
                condition=~Q(gateway_reference=""),
                name="refund_one_per_provider_refund",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.ref} {self.amount} {self.state}"


class PaymentIntent(models.Model):
    """A card charge, recorded and committed before the gateway is called (DESIGN.md §11
    "Payments"), so no money moves without a durable record: a worker that dies between
    the charge and the booking's commit leaves an intent the reconciler settles, by the
    gateway's own word on `ref` (orders.money.payments.payments_reconcile).

    Create order reserves first: the order is written PENDING with its seats and this
    intent in one transaction, the card is charged, then the order is confirmed and the
    intent ATTACHED to its payment row. A change charges against an intent committed on
    its own and attaches it in the change's transaction."""

    class State(models.TextChoices):
        PENDING = "PENDING", "Recorded; the gateway may have been called"
        ATTACHED = "ATTACHED", "Charged; its charge is an order's payment row"
        DECLINED = "DECLINED", "Refused by the gateway; nothing taken"
        REFUNDED = "REFUNDED", "Charged, then given back"
        VOID = "VOID", "Never charged"

    class Purpose(models.TextChoices):
        CREATE = "CREATE", "Create order"
        CHANGE = "CHANGE", "Change order"

    ref = models.CharField(
        max_length=32, unique=True, help_text="Our reference, sent to the gateway with the charge"
    )
    seller = models.ForeignKey(Seller, on_delete=models.PROTECT, related_name="+")
    # The order it pays for: the reserved (PENDING) order of a create, the changed
    # order of a change. Null once a reserved order that was never paid is gone.
    order = models.ForeignKey(
        Order, on_delete=models.SET_NULL, null=True, blank=True, related_name="payment_intents"
    )
    offer_id = models.CharField(max_length=100, blank=True, help_text="A create's priced offer")
    purpose = models.CharField(max_length=6, choices=Purpose.choices)
    amount = models.DecimalField(max_digits=12, decimal_places=2)
    currency = models.CharField(max_length=3, default="USD")
    state = models.CharField(max_length=8, choices=State.choices, default=State.PENDING)
    gateway_reference = models.CharField(max_length=64, blank=True)
    card_brand = models.CharField(max_length=2)
    card_last4 = models.CharField(max_length=4)
    card_expiry = models.CharField(max_length=4, help_text="MMYY")
    payment = models.OneToOneField(
        Payment, on_delete=models.PROTECT, null=True, blank=True, related_name="intent"
    )
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    note = models.CharField(max_length=200, blank=True, help_text="How it was settled")
    # The Idempotency-Key claim of the request that opened it, if it sent one: the
    # reconciler finishes that record with what it settles, so a retry learns it.
    idempotency_record = models.ForeignKey(
        "api.IdempotencyRecord",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )

    class Meta:
        ordering = ["-id"]
        indexes = [
            # The reconciler: intents still pending, oldest first.
            models.Index(
                fields=["created_at"], name="intent_pending", condition=Q(state="PENDING")
            ),
        ]
        constraints = [
            models.CheckConstraint(condition=Q(amount__gt=0), name="intent_amount_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.ref} {self.amount} {self.state}"


class GatewayEntry(models.Model):
    """The test-mode gateway's ledger (orders.money.payments.TestGateway): every charge and
    refund it made, committed as it makes them, so tests (the crash test above all) can
    compare what the gateway took with what the orders say. A real gateway keeps its
    own."""

    class Kind(models.TextChoices):
        CHARGE = "CHARGE"
        REFUND = "REFUND"

    kind = models.CharField(max_length=6, choices=Kind.choices)
    reference = models.CharField(max_length=32, help_text="The intent's ref")
    charge_reference = models.CharField(max_length=64, help_text="The gateway's id of the charge")
    refund_reference = models.CharField(
        max_length=32, blank=True, default="", help_text="A refund's own reference (Refund.ref)"
    )
    amount = models.DecimalField(max_digits=12, decimal_places=2)
    currency = models.CharField(max_length=3, default="USD")
    at = models.DateTimeField()

    class Meta:
        ordering = ["id"]
        constraints = [
            # A charge is made once per reference, whoever retries it.
            models.UniqueConstraint(
                fields=["reference"], condition=Q(kind="CHARGE"), name="one_charge_per_reference"
            ),
            # A refund is made once per refund reference, whoever retries it.
            models.UniqueConstraint(
                fields=["refund_reference"],
                condition=Q(kind="REFUND") & ~Q(refund_reference=""),
                name="one_refund_per_reference",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.reference} {self.amount}"


class ProviderEvent(models.Model):
    """One webhook event of the payment provider (Stripe), recorded once by its id
    (orders.money.provider_events): what happened to a payment outside our calls (a dispute, a
    refund made in the provider's dashboard) and our copy of the provider's word."""

    event_id = models.CharField(max_length=100, unique=True)
    type = models.CharField(max_length=60)
    provider_reference = models.CharField(
        max_length=64, blank=True, help_text="The provider's id of the PaymentIntent"
    )
    payment = models.ForeignKey(
        Payment, on_delete=models.SET_NULL, null=True, blank=True, related_name="provider_events"
    )
    intent_ref = models.CharField(max_length=32, blank=True, help_text="Our intent's ref")
    summary = models.CharField(max_length=200, blank=True)
    received_at = models.DateTimeField()

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["provider_reference"], name="provider_event_reference")]

    def __str__(self) -> str:
        return f"{self.event_id} {self.type}"


class BooksAudit(models.Model):
    """One run of the books audit by the background worker (orders.money.audit): how many
    orders it read, how many disagreements it found (the `airline_books_disagreements`
    gauge shows the last run's) and the first of them, as `audit_books` prints them."""

    started_at = models.DateTimeField()
    finished_at = models.DateTimeField()
    since = models.DateTimeField(null=True, blank=True, help_text="Orders changed from then")
    orders = models.PositiveIntegerField()
    disagreements = models.PositiveIntegerField()
    lines = JSONField(default=list, blank=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"{self.started_at:%Y-%m-%d %H:%M} {self.disagreements} disagreements"
