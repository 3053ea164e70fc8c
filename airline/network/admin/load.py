"""A flight-date leg's load as query expressions: capacity and seats sold (rank-0
inventory), and of those the seats on unpaid holds and the ticketed ones."""

import functools

from django.db.models import (
    ExpressionWrapper,
    FloatField,
    IntegerField,
    OuterRef,
    QuerySet,
    Subquery,
    Sum,
    Value,
)
from django.db.models.functions import Coalesce, NullIf

from airline.network.models import FlightLeg, LegInventory
from airline.network.readers import BookedState, booked_seat_rows


def per_leg_sum(rows: QuerySet, leg_field: str, column: str) -> Coalesce:
    """A per-leg sum as a correlated subquery: the whole page in one query, however many
    legs and stations it shows."""
    summed = (
        rows.filter(**{leg_field: OuterRef("pk")})
        .order_by()
        .values(leg_field)
        .annotate(n=Sum(column))
        .values("n")
    )
    return Coalesce(Subquery(summed, output_field=IntegerField()), Value(0))


def booked_seats(state: BookedState) -> Coalesce | Value:
    """Seats that bookings on hold or ticketed still take on the leg: the orders app's
    rows (airline.network.readers), none without it."""
    rows = booked_seat_rows(state)
    return Value(0) if rows is None else per_leg_sum(rows, "booked_leg", "booked_seats")


def legs_with_load(legs: QuerySet[FlightLeg]) -> QuerySet[FlightLeg]:
    """Legs with their load: capacity and seats sold (rank-0 inventory, which every sale
    counts against), of those the seats on unpaid holds and the ticketed ones."""
    load = load_columns()
    return legs.annotate(
        seats=load["seats"], seats_sold=load["seats_sold"], seats_held=load["seats_held"]
    ).annotate(seats_ticketed=load["seats_ticketed"], load=load["load"])


@functools.cache
def load_columns() -> dict[str, Coalesce | Value | ExpressionWrapper]:
    """Each load column as an expression, annotated onto the hundred legs a page shows,
    and sorted on for on hold and ticketed (capacity, sold and load factor sort through
    the CabinLoad view instead: one aggregate over the schedule, where these subqueries
    would run once per leg). Built on first use, not at import: the admin is imported
    before the orders app has registered its readers (OrdersConfig.ready)."""
    cabins = LegInventory.objects.filter(rank=0)
    load = {
        "seats": per_leg_sum(cabins, "leg", "authorized"),
        "seats_sold": per_leg_sum(cabins, "leg", "sold"),
        "seats_held": booked_seats("held"),
        "seats_ticketed": booked_seats("ticketed"),
    }
    load["load"] = ExpressionWrapper(
        load["seats_sold"] * 100.0 / NullIf(load["seats"], 0), output_field=FloatField()
    )
    return load
