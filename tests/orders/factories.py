"""factory-boy factories for orders as OrderList and the support commands read them: an
order with one passenger and one journey of one segment (no inventory is touched)."""

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import factory
from factory.django import DjangoModelFactory

from airline.network.services import station_zone
from orders.core import ids
from orders.models import Channel, Journey, Order, OrderStatus, Passenger, Payment, Segment


class OrderFactory(DjangoModelFactory):
    class Meta:
        model = Order

    order_id = factory.LazyFunction(ids.new_order_id)
    record_locator = factory.LazyFunction(ids.new_record_locator)
    owner_code = "MX"
    agency_code = "ACMEAGT"
    channel = Channel.JSON
    status = OrderStatus.CONFIRMED
    created_at = factory.LazyFunction(lambda: datetime.now(tz=UTC))
    updated_at = factory.SelfAttribute("created_at")
    total = Decimal("100.00")
    paid = Decimal("100.00")


def credit_source(*, amount: Decimal, **order_fields) -> Order:
    """A cancelled order whose card paid `amount`, all of it about to become airline
    credit (orders.money.credits.credit_issue): its books balance once the credit is issued
    (charged = credited; docs/operators/support.md "Books audit")."""
    order = OrderFactory(status=OrderStatus.CANCELLED, total=0, paid=amount, **order_fields)
    Payment.objects.create(
        order=order,
        ref=ids.new_ref("PAY"),
        created_at=order.created_at,
        amount=amount,
        status=Payment.Status.SUCCESSFUL,
        method=Payment.Method.CARD,
    )
    return order


def order_with_trip(
    *,
    departs_at: datetime | None = None,
    origin: str = "PVD",
    destination: str = "CHS",
    flight_number: int = 101,
    given_name: str = "Pat",
    surname: str = "Traveller",
    **order_fields,
) -> Order:
    """An order with one adult and one one-segment journey."""
    order = OrderFactory(lead_given_name=given_name, lead_surname=surname, **order_fields)
    Passenger.objects.create(
        order=order,
        ref=ids.new_ref("PAX"),
        offer_pax_id="ADT-1",
        position=1,
        ptc="ADT",
        given_name=given_name,
        surname=surname,
    )
    departs_at = departs_at or datetime.now(tz=UTC) + timedelta(days=3)
    journey_add(order, origin, destination, departs_at, flight_number, position=1)
    return order


def journey_add(order, origin, destination, departs_at, flight_number, *, position):
    journey = Journey.objects.create(
        order=order,
        ref=ids.new_ref("JOU"),
        position=position,
        origin=origin,
        destination=destination,
        departs_at=departs_at,
        arrives_at=departs_at + timedelta(hours=2),
        departure_date=departs_at.astimezone(station_zone(origin)).date(),
        flight_number=flight_number,
    )
    Segment.objects.create(
        order=order,
        journey=journey,
        ref=ids.new_ref("SEG"),
        position=1,
        carrier="MX",
        flight_number=flight_number,
        origin=origin,
        destination=destination,
        departs_at=departs_at,
        arrives_at=departs_at + timedelta(hours=2),
        cabin="Y",
        rbd="L",
        seats=1,
    )
    return journey
