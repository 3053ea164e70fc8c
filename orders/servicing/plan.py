"""The plan of a change-order request (orders.servicing.changes): what each change type's check
works out before anything is written, and the table entry of a change type (`Action`).
Apart from orders.servicing.changes so that the modules of the change types (amend, cancel,
exchange, airline_changes) build on it and orders.servicing.changes' table imports them."""

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

from airline.fares.money import ZERO
from airline.network.inventory import LegCheck
from offers.store import OfferOwner
from orders.core import events
from orders.models import AirlineCredit, Order, OrderStatus, Refund, Service
from sellers.authentication import Principal

Do = Callable[["Plan", Order], None]


class GiveBack(enum.IntEnum):
    """Where value a paid order loses goes (the most generous of a request's changes
    wins): kept by the airline, turned into airline credit, or refunded to the card."""

    RETAIN = 0
    CREDIT = 1
    REFUND = 2


@dataclass
class Plan:
    """A change request worked out before any write: the order as read (SLIM_PARTS),
    the steps to run under its lock, and what they do to its money."""

    principal: Principal
    order: Order
    now: datetime
    network: int | None = None  # the network version read with the order's parts, if read
    steps: list[Do] = field(default_factory=list)
    added: Decimal = ZERO  # what the order's value moves by (negative when lines go)
    voided: Decimal = ZERO  # value given up before anyone paid for it
    retained: Decimal = ZERO  # fees and penalties the airline keeps (Order.retained)
    give_back: GiveBack = GiveBack.RETAIN  # where a paid order's lost value goes
    # What a cancellation says goes back, and how (orders.servicing.cancel): given before the rest
    # of a paid order's lost value, which follows `give_back`.
    refund_owed: Decimal = ZERO
    credit_owed: Decimal = ZERO
    confirm: bool = False  # ConfirmHold: the order becomes CONFIRMED and ticketed
    # Airline credit paying (part of) what is due, spent in the change's transaction.
    credit_code: str = ""
    credit_due: Decimal = ZERO
    cancelled: bool = False  # the change leaves no journey: the order becomes CANCELLED
    leg_ids: set[int] = field(default_factory=set)  # legs that must still fly (re-checked)
    # What must still hold of those legs under their locks (e.g. a seat bought is still
    # sellable on the aircraft flown now: ancillaries.check_seats_still_sellable).
    leg_checks: list[LegCheck] = field(default_factory=list)
    refunds: list[Refund] = field(default_factory=list)  # owed in the transaction
    credit: AirlineCredit | None = None  # issued in the transaction
    charged: bool = False  # a card paid with the change
    # The service rows the change wrote, as stored (AcceptOffer).
    services_written: list[Service] = field(default_factory=list)

    @property
    def actor(self) -> str:
        return events.actor_of(self.principal)

    @property
    def offer_owner(self) -> OfferOwner:
        return OfferOwner.of(self.principal)

    @property
    def settles(self) -> bool:
        """Whether money moves with this change: on a paid order, or a hold being
        confirmed. A hold takes changes unpaid and its balance due moves (SPEC.md §3)."""
        return self.confirm or self.order.status == OrderStatus.CONFIRMED

    def balance(self) -> Decimal:
        """What the order will be worth to the airline less what it holds: positive is
        owed by the client, negative owed to them (paid = total + retained + credited -
        refunded_outside when settled: Order.retained). What the provider gave back
        outside this service counts as held: no change asks for it back, and a change
        that gives value back gives that much less (changes._settle_back)."""
        order = self.order
        return (
            (order.total + self.added + order.retained + self.retained + order.credited)
            - order.paid
            - order.refunded_outside
        )

    def due(self) -> Decimal:
        """What must be paid now, never less than nothing."""
        return max(self.balance(), ZERO) if self.settles else ZERO

    def owed_back(self) -> Decimal:
        """What a paid order gives back (as `give_back` says) once the change is made."""
        return max(-self.balance(), ZERO) if self.settles else ZERO


@dataclass(frozen=True)
class Action:
    """One change type: `check(plan, changes)` (every change of its type in the request,
    orders.requests.inputs) refuses or returns the `do` to run."""

    check: Callable[[Plan, Sequence[Any]], Do]
    # Only on an order in one of these states (ConfirmHold narrows it to ONHOLD).
    statuses: frozenset[str] = frozenset({OrderStatus.ONHOLD, OrderStatus.CONFIRMED})
    alone: bool = False  # must be the request's only change, without a payment


@dataclass(frozen=True)
class Split:
    """Where value a paid order gives back goes."""

    refund: Decimal  # to its cards
    credit: Decimal  # as airline credit
    kept: Decimal  # by the airline


def give_back_split(
    back: Decimal, *, refund: Decimal, credit: Decimal, rest_to: GiveBack, cards: Decimal
) -> Split:
    """`back` split as a change said (`refund`, `credit`; the rest as `rest_to`), a
    refund no larger than the cards can take (`cards`): the rest of it becomes credit.
    Reshop's cancellation quote and the change that commits it both split this way."""
    to_refund = min(back, refund)
    to_credit = min(back - to_refund, credit)
    rest = back - to_refund - to_credit
    if rest_to == GiveBack.REFUND:
        to_refund += rest
    elif rest_to == GiveBack.CREDIT:
        to_credit += rest
    kept = rest if rest_to == GiveBack.RETAIN else ZERO
    to_cards = min(to_refund, cards)
    return Split(refund=to_cards, credit=to_credit + to_refund - to_cards, kept=kept)
