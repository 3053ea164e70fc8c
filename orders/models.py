"""Orders: the booking and everything hanging off it (SPEC.md §2.5; DESIGN.md §8).

An order is written once, whole, in one transaction with the seats it takes. Its child
rows carry the cross-reference ids the order view shows (PAX-, JOU-, SEG-, LEG-, OOI-,
CTC-), stored rather than derived so they stay stable across reads and changes. Money is
kept as Decimal amounts plus the Price wire (base, taxes, fees) it was sold at.
"""

from django.contrib.postgres.indexes import GinIndex, OpClass
from django.db import models
from django.db.models import Q
from django.db.models.functions import Upper

from airline.network.models import FlightLeg
from sellers.models import Seller


class JSONField(models.JSONField):
    """A JSONField that bulk_create inserts as one parameter per row. Django's UNNEST
    bulk insert on PostgreSQL would send the column as a jsonb[] array literal, which
    psycopg builds by escaping every quote of every document through a regular
    expression: ~1.5 ms of CPU for an order's two items and their fare wire. UNNEST pays
    off for hundreds of rows; an order writes a handful."""

    def get_placeholder(self, value, compiler, connection) -> str:
        return "%s"  # any field with a placeholder makes the insert plain VALUES rows

    def deconstruct(self):
        # The column is an ordinary jsonb: migrations know it as a plain JSONField.
        name, _path, args, kwargs = super().deconstruct()
        return name, "django.db.models.JSONField", args, kwargs


class OrderStatus(models.TextChoices):
    """SPEC.md §3 order statuses."""

    CONFIRMED = "CONFIRMED"
    ONHOLD = "ONHOLD"
    CANCELLED = "CANCELLED"
    CLOSED = "CLOSED"
    PENDING = "PENDING"


class Channel(models.TextChoices):
    """Where an order came from."""

    JSON = "JSON", "JSON API"
    NDC = "NDC", "NDC/XML API"
    IMPORT = "IMPORT", "Imported from another channel"


class Order(models.Model):
    """One booking: header, totals, and who sold it through which channel.

    `id` orders the keyset pagination of OrderList (SPEC.md §4.8 lastIndex); `order_id`
    is the opaque id clients see."""

    id = models.BigAutoField(primary_key=True)
    order_id = models.CharField(max_length=24, unique=True)
    record_locator = models.CharField(max_length=6, unique=True)
    owner_code = models.CharField(max_length=3)
    seller = models.ForeignKey(Seller, on_delete=models.PROTECT, related_name="orders")
    agency_code = models.CharField(max_length=10, blank=True, db_index=False)
    channel = models.CharField(max_length=6, choices=Channel.choices)
    status = models.CharField(max_length=9, choices=OrderStatus.choices)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    currency = models.CharField(max_length=3, default="USD")
    total = models.DecimalField(max_digits=12, decimal_places=2)
    paid = models.DecimalField(max_digits=12, decimal_places=2, default=0)
    # `total` is what the order's live lines are worth; what was on it and went before
    # anyone paid for it (a cancelled or lapsed hold, a seat replaced on a hold) is here,
    # so the order view's totals account for every line it ever had (SPEC.md §2.5).
    voided = models.DecimalField(max_digits=12, decimal_places=2, default=0, db_default=0)
    # What a paid order's value went to when lines left it without money going back
    # (orders.changes "settling"): `retained` is kept by the airline (penalties, change
    # and name-change fees, a cheaper replacement seat), `credited` became airline credit.
    # After every change of a paid order: paid = total + retained + credited -
    # refunded_outside.
    retained = models.DecimalField(max_digits=12, decimal_places=2, default=0, db_default=0)
    credited = models.DecimalField(max_digits=12, decimal_places=2, default=0, db_default=0)
    # Given back by the payment provider outside this service (a refund in its dashboard:
    # orders.provider_events), not yet set against value the order gives back: the next
    # change that gives value back gives this much less (orders.changes), so nothing goes
    # back twice; and no change asks the client to pay it back.
    refunded_outside = models.DecimalField(max_digits=12, decimal_places=2, default=0, db_default=0)
    payment_time_limit = models.DateTimeField(null=True, blank=True)
    # The priced offer this order was booked from: unique, so one priced offer becomes
    # at most one order even when two requests race (DESIGN.md §8).
    source_offer_id = models.CharField(max_length=64, null=True, blank=True, unique=True)
    remarks = models.TextField(blank=True)
    # Bumped by every change to the order or its parts: the rendered order view is
    # cached under it (orders/presenters.py), so a change is never served stale.
    version = models.PositiveIntegerField(default=1, db_default=1)
    # The lead passenger's name (the first adult), as OrderList summaries show it
    # (SPEC.md §2.8): a page of 1000 summaries then reads no passenger rows. Written with
    # the passengers; a change of the lead's name must write it here too.
    lead_given_name = models.CharField(max_length=64, blank=True, default="", db_default="")
    lead_surname = models.CharField(max_length=64, blank=True, default="", db_default="")

    class Meta:
        ordering = ["-id"]
        # The back office's one write (orders.admin.bookings); the Operations role has it.
        permissions = [("cancel_hold", "Can cancel an unpaid hold in the back office")]
        indexes = [
            # OrderList: one seller's orders of one agency in cursor order (SPEC.md §4.8,
            # orders.selectors.OrderScope).
            models.Index(fields=["seller", "agency_code", "id"], name="order_by_seller_agency"),
            # The back office's booking search: an agency code, whichever seller's.
            models.Index(fields=["agency_code"], name="order_by_agency"),
            # expire_holds: the holds whose limit has passed.
            models.Index(
                fields=["payment_time_limit"],
                name="hold_by_limit",
                condition=Q(status="ONHOLD"),
            ),
        ]
        constraints = [
            models.CheckConstraint(condition=Q(paid__gte=0), name="order_paid_not_negative"),
        ]

    # Not a column: True on an unpaid hold past its limit that a read presents as the
    # expiry will leave it (orders.selectors.order_as_it_stands) while the row still says
    # ONHOLD. Such an instance is for rendering only; nothing saves it.
    lapsed = False

    def __str__(self) -> str:
        return f"{self.record_locator} {self.status}"

    @property
    def balance_due(self):
        """What the client still owes: fees kept are owed as much as the lines are."""
        return max(
            self.total + self.retained + self.credited - self.paid - self.refunded_outside, 0
        )


class OrderEvent(models.Model):
    """One state change of an order: who did what, when (DESIGN.md §10, STYLE.md). Written
    only through orders/events.py, one function per kind."""

    class Kind(models.TextChoices):
        CREATED = "created"
        IMPORTED = "imported"
        PAID = "paid"
        HOLD_CONFIRMED = "hold_confirmed"
        HOLD_CANCELLED = "hold_cancelled"
        HOLD_EXPIRED = "hold_expired"
        SERVICES_ADDED = "services_added"
        PAYMENT_REFUNDED = "payment_refunded"
        JOURNEY_CANCELLED = "journey_cancelled"
        ORDER_CANCELLED = "order_cancelled"
        PASSENGER_UPDATED = "passenger_updated"
        CONTACT_UPDATED = "contact_updated"
        ITINERARY_EXCHANGED = "itinerary_exchanged"
        CREDIT_ISSUED = "credit_issued"
        CREDIT_REDEEMED = "credit_redeemed"
        AIRLINE_CHANGE_DETECTED = "airline_change_detected"
        AIRLINE_CHANGE_ACCEPTED = "airline_change_accepted"
        AIRLINE_CHANGE_CANCELLED = "airline_change_cancelled"
        AIRLINE_CHANGE_EXCHANGED = "airline_change_exchanged"
        PAYMENT_DISPUTED = "payment_disputed"
        # A refund of ours found given back, in part or whole, by one made at the
        # provider outside this service (orders.refunds.refunds_retry).
        PAYMENT_REFUND_COVERED = "payment_refund_covered"

    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="events")
    at = models.DateTimeField()
    actor = models.CharField(max_length=80, help_text="seller/key, command or 'system'")
    kind = models.CharField(max_length=40, choices=Kind.choices)
    detail = JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["order_id", "id"]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M} {self.kind} by {self.actor}"


class AirlineChange(models.Model):
    """A change the airline made to flights of an order: the order's affected
    journeys as booked (`removed`) and as they fly now (`added`, without a journey that
    can no longer fly), why, and what the seller did about it. Written by
    orders.airline_changes after a schedule load; one pending change per order, brought
    up to date by every later load."""

    class Status(models.TextChoices):
        PENDING = "PENDING", "Waiting for the seller"
        ACCEPTED = "ACCEPTED", "The order took the new schedule"
        CANCELLED = "CANCELLED", "The order was cancelled with everything given back"
        CHANGED = "CHANGED", "The journeys were exchanged for other flights at no charge"

    class Reason(models.TextChoices):
        RETIMED = "RETIMED"
        CANCELLED = "CANCELLED"
        EQUIPMENT = "EQUIPMENT", "Booked seats or cabin not on the new aircraft"
        CONNECTION = "CONNECTION", "A connection now under the minimum connecting time"

    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="airline_changes")
    ref = models.CharField(max_length=20, unique=True, help_text="AIC- id shown to clients")
    detected_at = models.DateTimeField()
    status = models.CharField(max_length=9, choices=Status.choices, default=Status.PENDING)
    journey_refs = JSONField(default=list, help_text="JOU- ids of the journeys it covers")
    reasons = JSONField(default=list)
    removed = JSONField(default=list, help_text="The journeys as booked (order view shape)")
    added = JSONField(default=list, help_text="The journeys as they fly now")
    actions = JSONField(default=list, help_text="Change types the seller may answer with")
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolved_by = models.CharField(max_length=80, blank=True, default="")

    class Meta:
        ordering = ["order_id", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["order"], condition=Q(status="PENDING"), name="one_pending_airline_change"
            )
        ]

    def __str__(self) -> str:
        return f"{self.ref} {self.status}"


class Passenger(models.Model):
    """A traveller on the order. `infant` is the lap infant this adult carries."""

    class Ptc(models.TextChoices):
        ADT = "ADT", "Adult"
        CHD = "CHD", "Child"
        INF = "INF", "Infant"

    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="passengers")
    ref = models.CharField(max_length=20, help_text="PAX- id shown to clients")
    offer_pax_id = models.CharField(max_length=64, help_text="paxId of the priced offer")
    position = models.PositiveSmallIntegerField()
    ptc = models.CharField(max_length=3, choices=Ptc.choices)
    given_name = models.CharField(max_length=64)
    surname = models.CharField(max_length=64)
    date_of_birth = models.DateField(null=True, blank=True)
    gender = models.CharField(max_length=6, blank=True)
    nationality = models.CharField(max_length=2, blank=True)
    residence_country = models.CharField(max_length=2, blank=True)
    loyalty_program = JSONField(null=True, blank=True)
    travel_documents = JSONField(default=list, blank=True)
    contacts = JSONField(null=True, blank=True, help_text="{emailAddress, phoneNumber}")
    infant = models.OneToOneField(
        "self", on_delete=models.PROTECT, null=True, blank=True, related_name="carried_by"
    )

    class Meta:
        ordering = ["order_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["order", "ref"], name="one_pax_ref_per_order"),
        ]
        indexes = [
            # OrderList and `bookings --last-name`: passengers by surname, any case.
            models.Index(Upper("surname"), "order", name="pax_by_surname"),
            # The back office's booking search finds part of a name (icontains, which
            # PostgreSQL reads as UPPER(name) LIKE '%PART%'): trigram indexes, on
            # PostgreSQL only (migration 0018; SQLite scans, as it always has).
            GinIndex(OpClass(Upper("surname"), name="gin_trgm_ops"), name="pax_surname_trgm"),
            GinIndex(OpClass(Upper("given_name"), name="gin_trgm_ops"), name="pax_given_trgm"),
        ]

    def __str__(self) -> str:
        return f"{self.surname}/{self.given_name} {self.ptc}"


class Contact(models.Model):
    """The order's primary contact (SPEC.md §2.5 contacts[])."""

    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="contacts")
    ref = models.CharField(max_length=20)
    type_code = models.CharField(max_length=1, default="P")
    email = models.EmailField(max_length=254)
    phone = models.CharField(max_length=20, blank=True, help_text="E.164")
    given_name = models.CharField(max_length=64)
    surname = models.CharField(max_length=64)
    postal_address = JSONField(null=True, blank=True)

    class Meta:
        ordering = ["order_id", "id"]

    def __str__(self) -> str:
        return f"{self.surname}/{self.given_name} <{self.email}>"


class Journey(models.Model):
    """One direction of the trip, as it was booked."""

    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="journeys")
    ref = models.CharField(max_length=20)
    position = models.PositiveSmallIntegerField()
    origin = models.CharField(max_length=3)
    destination = models.CharField(max_length=3)
    departs_at = models.DateTimeField(help_text="UTC")
    arrives_at = models.DateTimeField(help_text="UTC")
    is_cancelled = models.BooleanField(default=False)
    exchanged = models.BooleanField(
        default=False,
        db_default=False,
        help_text="Cancelled because it was exchanged for other flights (AcceptReshopOffer)",
    )
    # What an OrderList summary shows of the journey (SPEC.md §2.8), kept beside it so
    # that a page of summaries reads neither segments nor time zones.
    departure_date = models.DateField(null=True, help_text="local date at the origin")
    flight_number = models.PositiveIntegerField(
        null=True, help_text="marketing flight number of the first segment"
    )

    class Meta:
        ordering = ["order_id", "position"]
        indexes = [
            # OrderList: the first journey of an order, in trip order, that fits the
            # search (orders.selectors.orders_search); no sort per order.
            models.Index(fields=["order", "position"], name="journey_by_order_position"),
            models.Index(fields=["departs_at"], name="journey_by_time"),
        ]

    def __str__(self) -> str:
        return f"{self.origin}-{self.destination} {self.departs_at:%Y-%m-%d %H:%M}Z"


class Segment(models.Model):
    """One flight number on a date within a journey, and the seats it took."""

    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="segments")
    journey = models.ForeignKey(Journey, on_delete=models.CASCADE, related_name="segments")
    ref = models.CharField(max_length=20)
    position = models.PositiveSmallIntegerField()
    carrier = models.CharField(max_length=3)
    flight_number = models.PositiveSmallIntegerField()
    origin = models.CharField(max_length=3)
    destination = models.CharField(max_length=3)
    departs_at = models.DateTimeField()
    arrives_at = models.DateTimeField()
    cabin = models.CharField(max_length=1)
    rbd = models.CharField(max_length=1)
    seats = models.PositiveSmallIntegerField(help_text="Seats taken from inventory (no INF)")
    holds_inventory = models.BooleanField(
        default=True, help_text="Its seats are still taken (false once released)"
    )

    class Meta:
        ordering = ["order_id", "journey_id", "position"]
        indexes = [models.Index(fields=["flight_number", "departs_at"], name="segment_by_flight")]
        constraints = [
            # Items, coupons and services point at segments by this id: one per order,
            # even when a flight is exchanged and exchanged back.
            models.UniqueConstraint(fields=["order", "ref"], name="one_segment_ref_per_order")
        ]

    def __str__(self) -> str:
        return f"{self.carrier}{self.flight_number} {self.origin}-{self.destination} {self.rbd}"


class Leg(models.Model):
    """A leg of a booked segment: the flight-date leg whose inventory it uses."""

    segment = models.ForeignKey(Segment, on_delete=models.CASCADE, related_name="legs")
    flight_leg = models.ForeignKey(FlightLeg, on_delete=models.PROTECT, related_name="+")
    ref = models.CharField(max_length=20)
    position = models.PositiveSmallIntegerField()

    class Meta:
        ordering = ["segment_id", "position"]

    def __str__(self) -> str:
        return self.ref


class OrderItem(models.Model):
    """A flight line: one journey in one bundle for the whole party (SPEC.md §2.5 items)."""

    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="items")
    journey = models.OneToOneField(Journey, on_delete=models.CASCADE, related_name="item")
    ref = models.CharField(max_length=20)
    status = models.CharField(max_length=9, default="CONFIRMED")
    bundle = models.CharField(max_length=10)
    total = models.DecimalField(max_digits=12, decimal_places=2)
    price = JSONField(help_text="Price wire: total, base, taxes, fees")
    fare = JSONField(help_text="Fare wire as offered")
    passenger_prices = JSONField(default=list)

    class Meta:
        ordering = ["order_id", "journey_id"]

    def __str__(self) -> str:
        return self.ref


class Service(models.Model):
    """A purchased ancillary (SPEC.md §2.5 services[]): a seat on a leg, a bag for a
    journey, priority boarding on a segment... for one passenger.

    A seat is held by one passenger per flight-date leg: the partial unique constraint
    decides every race for it, whatever the request path (DESIGN.md §7, STYLE.md)."""

    class Status(models.TextChoices):
        ACTIVE = "ACTIVE"
        CANCELLED = "CANCELLED"

    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="services")
    ref = models.CharField(max_length=20, help_text="SVR- id")
    item_ref = models.CharField(max_length=20, help_text="OOI- id of its order item")
    passenger = models.ForeignKey(Passenger, on_delete=models.CASCADE, related_name="services")
    journey = models.ForeignKey(
        Journey, on_delete=models.CASCADE, null=True, blank=True, related_name="services"
    )
    segment = models.ForeignKey(
        Segment, on_delete=models.CASCADE, null=True, blank=True, related_name="services"
    )
    flight_leg = models.ForeignKey(
        FlightLeg, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    code = models.CharField(max_length=8)
    name = models.CharField(max_length=60)
    category = models.CharField(max_length=10)
    ssr_code = models.CharField(max_length=4)
    fee_code = models.CharField(max_length=3)
    amount = models.DecimalField(max_digits=10, decimal_places=2)
    tax = models.DecimalField(max_digits=10, decimal_places=2, default=0)
    seat_row = models.PositiveSmallIntegerField(null=True, blank=True)
    seat_column = models.CharField(max_length=1, blank=True)
    status = models.CharField(max_length=9, choices=Status.choices, default=Status.ACTIVE)
    emd_number = models.CharField(max_length=13, null=True, blank=True, unique=True)
    included = models.BooleanField(
        default=False, db_default=False, help_text="Part of the bundle, at price 0"
    )
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["order_id", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["flight_leg", "seat_row", "seat_column"],
                condition=Q(status="ACTIVE", seat_row__isnull=False),
                name="one_passenger_per_seat",
            ),
            models.UniqueConstraint(
                fields=["passenger", "flight_leg"],
                condition=Q(status="ACTIVE", seat_row__isnull=False),
                name="one_seat_per_passenger_per_leg",
            ),
        ]

    def __str__(self) -> str:
        seat = f" {self.seat_row}{self.seat_column}" if self.seat_row else ""
        return f"{self.ref} {self.code}{seat}"

    @property
    def total(self):
        return self.amount + self.tax


class OrderFee(models.Model):
    """A fee or penalty an order was charged (SPEC.md §1 Price `fees`: ServiceFee or
    PenaltyFee): a name change, a flight change, a cancellation. It is part of the
    order's totalPrice and, once the order is ticketed, documented by an EMD number;
    its amount is also in Order.retained, which counts everything the airline kept."""

    class Type(models.TextChoices):
        SERVICE = "ServiceFee"
        PENALTY = "PenaltyFee"

    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="fees")
    ref = models.CharField(max_length=20, help_text="FEE- id")
    type = models.CharField(max_length=10, choices=Type.choices)
    code = models.CharField(max_length=3)
    description = models.CharField(max_length=60)
    amount = models.DecimalField(max_digits=10, decimal_places=2)
    passenger = models.ForeignKey(
        Passenger, on_delete=models.CASCADE, null=True, blank=True, related_name="fees"
    )
    emd_number = models.CharField(max_length=13, null=True, blank=True, unique=True)
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["order_id", "id"]
        constraints = [
            models.CheckConstraint(condition=Q(amount__gt=0), name="order_fee_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.ref} {self.type} {self.code} {self.amount}"


class AirlineCredit(models.Model):
    """Value a cancellation or a cheaper exchange gave back as credit rather than money
    (DESIGN.md §7, §11 "Airline credit"): a code the same seller pays a later order with
    (`remaining` spent by a conditional UPDATE, never below zero) until `expires_at`."""

    code = models.CharField(max_length=16, unique=True)
    seller = models.ForeignKey(Seller, on_delete=models.PROTECT, related_name="credits")
    source_order = models.ForeignKey(Order, on_delete=models.PROTECT, related_name="credits")
    currency = models.CharField(max_length=3, default="USD")
    amount = models.DecimalField(max_digits=12, decimal_places=2, help_text="As issued")
    remaining = models.DecimalField(max_digits=12, decimal_places=2)
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField()

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.CheckConstraint(condition=Q(amount__gt=0), name="credit_amount_positive"),
            models.CheckConstraint(
                condition=Q(remaining__gte=0) & Q(remaining__lte=models.F("amount")),
                name="credit_remaining_within_amount",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.code} {self.remaining}/{self.amount} {self.currency}"


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
    # What of `amount` went back (orders.refunds); REFUNDED once it all has.
    refunded = models.DecimalField(max_digits=12, decimal_places=2, default=0, db_default=0)
    credit = models.ForeignKey(
        AirlineCredit, on_delete=models.PROTECT, null=True, blank=True, related_name="payments"
    )
    card_brand = models.CharField(max_length=2, blank=True)
    card_last4 = models.CharField(max_length=4, blank=True)
    card_expiry = models.CharField(max_length=4, blank=True, help_text="MMYY")
    gateway_reference = models.CharField(max_length=64, blank=True)
    # The cardholder disputed the charge with their bank (the provider's webhook,
    # orders.provider_events): the dispute's status and reason as the provider says.
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
    and sent to the gateway once that commits (orders.refunds): a worker that dies in
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
    # from its `charge.refunded` event (orders.provider_events): the provider's id of it.
    gateway_reference = models.CharField(max_length=64, blank=True, default="", db_default="")
    # Set by the reconciler when it settles a refund it found given back (orders.refunds
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


class Ticket(models.Model):
    """An e-ticket: one per passenger, numbered airline accounting code + serial."""

    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="tickets")
    passenger = models.ForeignKey(Passenger, on_delete=models.CASCADE, related_name="tickets")
    number = models.CharField(max_length=13, unique=True)
    issued_at = models.DateTimeField()

    class Meta:
        ordering = ["order_id", "id"]

    def __str__(self) -> str:
        return self.number


class Coupon(models.Model):
    """A flight coupon: one passenger on one segment."""

    class Status(models.TextChoices):
        OPEN = "OPEN"
        USED = "USED"
        REFUNDED = "REFUNDED"
        EXCHANGED = "EXCHANGED"
        VOID = "VOID"

    ticket = models.ForeignKey(Ticket, on_delete=models.CASCADE, related_name="coupons")
    segment = models.ForeignKey(Segment, on_delete=models.CASCADE, related_name="coupons")
    number = models.PositiveSmallIntegerField()
    status = models.CharField(max_length=9, choices=Status.choices, default=Status.OPEN)

    class Meta:
        ordering = ["ticket_id", "number"]
        constraints = [
            models.UniqueConstraint(fields=["ticket", "number"], name="one_coupon_number"),
            models.CheckConstraint(condition=Q(number__gte=1), name="coupon_numbered_from_1"),
        ]

    def __str__(self) -> str:
        return f"{self.ticket.number}/{self.number}"


class TicketSerial(models.Model):
    """Hands out ticket serials: the id of a row inserted here is the serial, so
    concurrent bookings never share a number and never wait on each other."""

    id = models.BigAutoField(primary_key=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(id__lt=10**10), name="ticket_serial_fits_ten_digits")
        ]

    def __str__(self) -> str:
        return str(self.pk)


class PaymentIntent(models.Model):
    """A card charge, recorded and committed before the gateway is called (DESIGN.md §11
    "Payments"), so no money moves without a durable record: a worker that dies between
    the charge and the booking's commit leaves an intent the reconciler settles, by the
    gateway's own word on `ref` (orders.payments.payments_reconcile).

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
    """The test-mode gateway's ledger (orders.payments.TestGateway): every charge and
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
    (orders.provider_events): what happened to a payment outside our calls (a dispute, a
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
    """One run of the books audit by the background worker (orders.audit): how many
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
