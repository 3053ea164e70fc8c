"""The Trip of an order's flight items (offers.ancillaries.Trip): what an order's seat
maps and service lists (SPEC.md §4.11) are built for, read as plain values by three
statements built once per process and sent together."""

from collections.abc import Mapping, Sequence
from functools import cache

from django.db import DEFAULT_DB_ALIAS, connections

from airline.api.errors import ApiError, Err
from airline.sql import statements_answered
from offers.ancillaries import Traveller, Trip, TripJourney, TripSegment, bundle_terms
from orders.models import Journey, Leg, Order, OrderItem, Passenger, Segment


def order_trip(
    *, order: Order, item_refs: Sequence[str] | None, passengers: Sequence[Mapping] | None
) -> Trip:
    """The Trip of a booking's flight items (all when none are named) for its passengers
    (all when none are named). Unknown ids are ERR-1005; a passenger id with the `|`
    delimiter ERR-1004 (SPEC.md §4.11). Three queries of plain values (_trip_statements)
    in one round trip: a seat map asks nothing else of the order, and model instances of
    its parts cost more than the map."""
    # From the database the order was read from (the standby for a seat map:
    # airline/standby.py).
    using = order._state.db or DEFAULT_DB_ALIAS
    items_sql, passengers_sql, legs_sql = _trip_statements(using)
    # A lapsed hold (read, not yet expired: selectors.order_as_it_stands) has no live item.
    reads = [(passengers_sql, [order.pk]), (legs_sql, [order.pk])]
    if not order.lapsed:
        reads.append((items_sql, [order.pk, "CANCELLED"]))
    # One round trip: each statement needs only the order's id.
    passenger_rows, leg_rows, *item_rows = statements_answered(reads, using=using)
    items = {
        ref: (journey_id, bundle) for ref, journey_id, bundle in (item_rows[0] if item_rows else [])
    }
    for ref in item_refs or ():
        if ref not in items:
            raise ApiError(
                Err.VALIDATION, f"Order item {ref} is not on this order", path="orderItemIds"
            )
    pax = {
        ref: Traveller(ref, ptc, infant_id is not None) for ref, ptc, infant_id in passenger_rows
    }
    travellers = tuple(pax.values())
    if passengers:
        chosen = []
        for entry in passengers:
            pax_id = entry["paxId"]
            if "|" in pax_id:
                raise ApiError(
                    Err.INVALID_VALUE,
                    "A passenger id may not contain the | delimiter",
                    path="passengers.paxId",
                )
            if pax_id not in pax:
                raise ApiError(
                    Err.VALIDATION, f"Passenger {pax_id} is not on this order", path="passengers"
                )
            chosen.append(pax[pax_id])
        travellers = tuple(chosen)
    # Each journey's segments in travel order, each with the flight legs it flies.
    flown: dict[int, tuple[str, dict[int, tuple[str, str, list[int]]]]] = {}
    for journey_id, journey_ref, segment_id, segment_ref, cabin, flight_leg_id in leg_rows:
        segments = flown.setdefault(journey_id, (journey_ref, {}))[1]
        segments.setdefault(segment_id, (segment_ref, cabin, []))[2].append(flight_leg_id)
    journeys = []
    for ref, (journey_id, bundle) in items.items():
        if item_refs and ref not in item_refs:
            continue
        journey_ref, segments = flown[journey_id]
        journeys.append(
            TripJourney(
                ref=journey_ref,
                item_ref=ref,
                bundle=bundle_terms(bundle),
                segments=tuple(
                    TripSegment(segment_ref, tuple(legs), cabin)
                    for segment_ref, cabin, legs in segments.values()
                ),
            )
        )
    return Trip(tuple(journeys), travellers, {"orderId": order.order_id})


@cache
def _trip_statements(using: str) -> tuple[str, str, str]:
    """order_trip's three SELECTs, each taking the order's id, built once per process
    (compiled through the ORM on every request, they would cost more than the rest of
    reading the order for its seat map): its items not cancelled
    (ref, journey id, bundle) in journey order; its passengers (ref, type, infant id)
    by position; its legs (journey id and ref, segment id, ref and cabin, flight leg
    id) by journey, segment and leg position."""
    quote = connections[using].ops.quote_name

    def table(model) -> str:
        return quote(model._meta.db_table)

    def column(model, name: str, alias: str) -> str:
        return f"{alias}.{quote(model._meta.get_field(name).column)}"

    def where_order(model, alias: str) -> str:
        return f"{column(model, 'order', alias)} = %s"

    i, p, leg, seg, jou = OrderItem, Passenger, Leg, Segment, Journey
    items = (
        f"SELECT {column(i, 'ref', 'i')}, {column(i, 'journey', 'i')}, {column(i, 'bundle', 'i')} "  # noqa: S608 (names from the models)
        f"FROM {table(i)} i WHERE {where_order(i, 'i')} AND {column(i, 'status', 'i')} <> %s "
        f"ORDER BY {column(i, 'journey', 'i')}"
    )
    passengers = (
        f"SELECT {column(p, 'ref', 'p')}, {column(p, 'ptc', 'p')}, {column(p, 'infant', 'p')} "  # noqa: S608
        f"FROM {table(p)} p WHERE {where_order(p, 'p')} ORDER BY {column(p, 'position', 'p')}"
    )
    legs = (
        f"SELECT {column(seg, 'journey', 's')}, {column(jou, 'ref', 'j')}, "  # noqa: S608
        f"{column(leg, 'segment', 'l')}, {column(seg, 'ref', 's')}, {column(seg, 'cabin', 's')}, "
        f"{column(leg, 'flight_leg', 'l')} FROM {table(leg)} l "
        f"JOIN {table(seg)} s ON {column(seg, 'id', 's')} = {column(leg, 'segment', 'l')} "
        f"JOIN {table(jou)} j ON {column(jou, 'id', 'j')} = {column(seg, 'journey', 's')} "
        f"WHERE {where_order(seg, 's')} ORDER BY {column(seg, 'journey', 's')}, "
        f"{column(seg, 'position', 's')}, {column(leg, 'position', 'l')}"
    )
    return items, passengers, legs
