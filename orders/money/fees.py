"""Fees and penalties an order is charged (SPEC.md §1 Price `fees`): each one a
row (models.OrderFee) written by the change that charges it, under the order's lock,
shown in the order's totalPrice and documented by an EMD number once the order is
ticketed. What the fee is worth also goes to Order.retained through the change's plan
(orders.servicing.changes), so paid = total + retained + credited keeps holding."""

from collections.abc import Sequence
from datetime import datetime
from decimal import Decimal

from orders.core import ids
from orders.models import Order, OrderFee, OrderStatus, Passenger, TicketSerial

NAME_CHANGE = (OrderFee.Type.SERVICE, "NCF", "Name change fee")
# As reshop quotes it (orders.servicing.exchange).
CHANGE = (OrderFee.Type.PENALTY, "CHG", "Change fee")
CANCELLATION = (OrderFee.Type.PENALTY, "CXL", "Cancellation penalty")


def fee_charge(
    order: Order,
    kind: tuple[str, str, str],
    amount: Decimal,
    *,
    now: datetime,
    passenger: Passenger | None = None,
) -> OrderFee | None:
    """Under the order's lock: the fee row (none for nothing), numbered at once on a
    ticketed order; a hold's fees are numbered when it is confirmed (fees_number)."""
    if amount <= 0:
        return None
    type_, code, description = kind
    fee = OrderFee.objects.create(
        order=order,
        ref=ids.new_ref("FEE"),
        type=type_,
        code=code,
        description=description,
        amount=amount,
        passenger=passenger,
        created_at=now,
    )
    if order.status == OrderStatus.CONFIRMED:
        fees_number([fee])
    return fee


def fees_number(fees: Sequence[OrderFee]) -> None:
    """EMD numbers for fees that have none yet, from the ticket serials (DESIGN.md §8)."""
    unnumbered = [f for f in fees if f.emd_number is None]
    if not unnumbered:
        return
    serials = TicketSerial.objects.bulk_create([TicketSerial() for _ in unnumbered])
    for fee, serial in zip(unnumbered, serials, strict=True):
        fee.emd_number = ids.ticket_number(serial.pk)
    OrderFee.objects.bulk_update(unnumbered, ["emd_number"])
