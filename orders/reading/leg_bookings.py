"""The bookings on flight-date legs, as the network's back-office pages read them
(airline.network.readers: registered there by OrdersConfig.ready)."""

from collections.abc import Sequence

from django.db.models import F, QuerySet

from airline.network.models import FlightLeg
from airline.network.readers import BookedState, Traveller
from orders.models import Coupon, Leg, OrderStatus, Passenger, Segment, Service

# Which orders' seats each load column of the flight-date list counts.
BOOKED_STATUS = {"held": OrderStatus.ONHOLD, "ticketed": OrderStatus.CONFIRMED}


def bookings_on_legs(leg_ids: Sequence[int]) -> list[tuple[int, int, str, str]]:
    """(leg pk, order pk, locator, status) of each booking still holding seats on one of
    the legs."""
    return list(
        Leg.objects.filter(flight_leg_id__in=leg_ids, segment__holds_inventory=True)
        .values_list(
            "flight_leg_id",
            "segment__order_id",
            "segment__order__record_locator",
            "segment__order__status",
        )
        .order_by("segment__order__record_locator", "flight_leg_id")
        .distinct()
    )


def seat_rows(state: BookedState) -> QuerySet[Leg]:
    """The booked legs still taking seats of orders on hold or ticketed, with the
    flight-date leg as `booked_leg` and the segment's seats as `booked_seats`."""
    return Leg.objects.filter(
        segment__holds_inventory=True, segment__order__status=BOOKED_STATUS[state]
    ).annotate(booked_leg=F("flight_leg"), booked_seats=F("segment__seats"))


def travellers_on_leg(leg: FlightLeg) -> list[Traveller]:
    """Who is booked on the leg, by surname: four queries whatever their number (the
    segments with their orders, the passengers, their seats, their tickets)."""
    segments = list(
        Segment.objects.filter(legs__flight_leg=leg, holds_inventory=True)
        .select_related("order")
        .order_by("order__record_locator")
        .distinct()
    )
    orders = {segment.order_id: segment for segment in segments}
    passengers = list(
        Passenger.objects.filter(order_id__in=orders).order_by("surname", "given_name", "pk")
    )
    seats = {
        service.passenger_id: f"{service.seat_row}{service.seat_column}"
        for service in Service.objects.filter(
            flight_leg=leg, status=Service.Status.ACTIVE, seat_row__isnull=False
        )
    }
    tickets = dict(
        Coupon.objects.filter(segment__in=segments).values_list(
            "ticket__passenger_id", "ticket__number"
        )
    )
    travellers = []
    for passenger in passengers:
        segment = orders[passenger.order_id]
        travellers.append(
            Traveller(
                order_pk=segment.order_id,
                record_locator=segment.order.record_locator,
                status=segment.order.status,
                name=f"{passenger.surname.upper()}/{passenger.given_name}",
                ptc=passenger.ptc,
                cabin=segment.cabin,
                rbd=segment.rbd,
                seat=seats.get(passenger.pk, ""),
                ticket=tickets.get(passenger.pk, ""),
            )
        )
    return travellers
