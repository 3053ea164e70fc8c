"""Orders: the booking and everything hanging off it (SPEC.md §2.5; DESIGN.md §8).

An order is written once, whole, in one transaction with the seats it takes. Its child
rows carry the cross-reference ids the order view shows (PAX-, JOU-, SEG-, LEG-, OOI-,
CTC-), stored rather than derived so they stay stable across reads and changes. Money is
kept as Decimal amounts plus the Price wire (base, taxes, fees) it was sold at.

One module a concern: the order (`order`), who travels (`people`), what it flies
(`itinerary`), its history (`history`), its documents (`tickets`), and its money
(`fees`, `credits`, `payments`). Every model is named here, so `from orders.models
import Order` serves whichever module defines it.
"""

from orders.models.credits import AirlineCredit
from orders.models.fees import OrderFee
from orders.models.fields import JSONField
from orders.models.history import AirlineChange, OrderEvent
from orders.models.itinerary import Journey, Leg, OrderItem, Segment, Service
from orders.models.order import Channel, Order, OrderStatus
from orders.models.payments import (
    BooksAudit,
    GatewayEntry,
    Payment,
    PaymentIntent,
    ProviderEvent,
    Refund,
)
from orders.models.people import Contact, Passenger
from orders.models.tickets import Coupon, Ticket, TicketSerial

__all__ = [
    "AirlineChange",
    "AirlineCredit",
    "BooksAudit",
    "Channel",
    "Contact",
    "Coupon",
    "GatewayEntry",
    "JSONField",
    "Journey",
    "Leg",
    "Order",
    "OrderEvent",
    "OrderFee",
    "OrderItem",
    "OrderStatus",
    "Passenger",
    "Payment",
    "PaymentIntent",
    "ProviderEvent",
    "Refund",
    "Segment",
    "Service",
    "Ticket",
    "TicketSerial",
]
