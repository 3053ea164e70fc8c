"""The order view (SPEC.md §2.5, DESIGN.md §11) and OrderList summaries (§2.8), as plain
dicts from an order's parts (selectors.OrderParts).

It is one module because the view and the list summaries render the same parts with the same
wires (passengers, journeys, segments, fees, services) and share the cache key of the
view; NDC and the booking page read both."""

import contextlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from zoneinfo import ZoneInfo

import orjson
from django.core.cache import cache

from airline.api import clock
from airline.api.responses import dumps
from airline.fares.money import ZERO, Fee, Price, Tax, money_wire, price_sum
from airline.network.itineraries import network_version_served
from airline.network.models import NetworkVersion
from airline.network.services import station_zone
from offers.store import STORE_ERRORS
from offers.wire import iso_duration, local_time
from orders.models import (
    AirlineChange,
    AirlineCredit,
    Journey,
    Order,
    OrderFee,
    OrderStatus,
    Passenger,
    Payment,
    Segment,
    Service,
)
from orders.reading.selectors import (
    FlightParts,
    LegPart,
    OrderParts,
    OrderRow,
    OrderSearch,
    order_parts,
)

VIEW_CACHE_SECONDS = 24 * 3600
# The shape of the view: bumped whenever what it renders changes, so that a release
# never serves a rendering of the release before (2: operationalStatus, emds[]).
VIEW_FORMAT = 2
# Line statuses of the view: order items' and services' alike (SPEC.md §3).
CONFIRMED, CANCELLED = "CONFIRMED", "CANCELLED"
# `operationalStatus` of the view's journeys and segments (docs/partners/airline-changes.md
# "Airline-initiated changes"), a field of our own: SPEC.md §2.2 keeps a segment's `statusCode` for
# WAITLISTED alone (DESIGN.md §11 "Segment statusCode"). Flying as booked; changed by
# the airline, waiting for the seller (a pending airline change covers it); a flight
# cancelled by the airline, unflown until the seller acts; cancelled by the seller;
# exchanged for other flights (reshop AcceptReshopOffer).
OPERATIONAL_CONFIRMED = "CONFIRMED"
OPERATIONAL_SCHEDULE_CHANGED = "SCHEDULE_CHANGED"
OPERATIONAL_AIRLINE_CANCELLED = "AIRLINE_CANCELLED"
OPERATIONAL_CANCELLED = "CANCELLED"
OPERATIONAL_EXCHANGED = "EXCHANGED"


def order_view_key(order: Order, *, credits: Sequence[AirlineCredit] | None = None) -> str:
    """The shared cache's key of the order's view: the order's version and the network
    version of the database the order is read from (the primary, or the standby a
    retrieve may read). Every change of the order bumps the first; the view also shows
    what the schedule says of its legs now (times, aircraft, a flight cancelled), which
    changes without the order's (an aircraft swap or a seat configuration edit that takes
    nothing from it, a load on another node): the network version names that. It is
    read before the order's parts, from the same database, so a rendering kept under a
    version shows that version's legs or later ones: an aircraft swap shows on the next
    retrieve after its load commits, whichever worker answers and whatever version its
    schedule index has. VIEW_FORMAT names the view's shape: a release that changes it
    renders anew.

    The airline credit an order gave back (`credits[]`) is spent and given back by other
    orders, which leave this one's version as it is: the key of an order that gave credit
    also names what each credit holds, `credits` (the rows rendered) when given, else as
    stored now. A rendering is then kept under the state of the credits it shows, and a
    retrieve after a spend finds no rendering of before it."""
    return _view_key(order, credits=credits)[0]


def _view_key(
    order: Order,
    *,
    credits: Sequence[AirlineCredit] | None = None,
    network: int | None = None,
) -> tuple[str, int]:
    """order_view_key, and the network version it names (`network`: read already)."""
    if network is None:
        network = NetworkVersion.current(using=order._state.db)
    key = f"orderview:{VIEW_FORMAT}:{order.pk}:{order.version}:{network}"
    if order.credited:
        held = (
            [(c.pk, c.remaining) for c in credits]
            if credits is not None
            else AirlineCredit.objects.filter(source_order_id=order.pk).values_list(
                "pk", "remaining"
            )
        )
        key += ":credits:" + ",".join(f"{pk}={remaining}" for pk, remaining in sorted(held))
    # A lapsed hold presented as expired (selectors.order_as_it_stands) is not the
    # rendering of its stored version: a key of its own.
    return (f"{key}:lapsed" if order.lapsed else key), network


def order_view_cached(order: Order, *, parts: OrderParts | None = None) -> orjson.Fragment:
    """The order view as ready JSON, rendered once per version of the order and of the
    schedule (order_view_key) and kept in the shared cache: a retrieve is then the order
    row, the network version and one cache read, where rendering costs a dozen queries.
    A changed order, or one whose flights changed, is never served from an older
    rendering. A caller holding the parts of a version no one has rendered yet (a new
    order, a change's answer) passes them: rendered from them, with no cache read, under
    the network version they were read after when they name it (OrderParts.network)."""
    key = _view_key(order, network=parts.network if parts is not None else None)
    raw = None if parts is not None else _view_kept(key)
    if raw is None:
        parts = parts or order_parts(order)
        raw = _view_keep(key, parts, order_view(parts))
    return orjson.Fragment(raw)


def order_view_data(order: Order, *, parts: OrderParts | None = None) -> dict[str, Any]:
    """The order view as data, for a renderer of another format (NDC's OrderViewRS), from
    the same cache as order_view_cached: a kept rendering read once; else rendered (from
    `parts`, when given), kept for the next retrieve, and handed over as it is, without
    reading back the JSON just written (money then as a Decimal, which the JSON holds
    as a number)."""
    key = _view_key(order, network=parts.network if parts is not None else None)
    raw = None if parts is not None else _view_kept(key)
    if raw is not None:
        return orjson.loads(raw)
    parts = parts or order_parts(order)
    view = order_view(parts)
    _view_keep(key, parts, view)
    return view


def _view_kept(key: tuple[str, int]) -> bytes | None:
    try:
        return cache.get(key[0])
    except STORE_ERRORS:
        return None


def _view_keep(key: tuple[str, int], parts: OrderParts, view: dict[str, Any]) -> bytes:
    """The view as JSON, rendered from `parts`, kept under the key of what it shows (the
    network version `key` names, the credits `parts` hold) when this process's
    per-process network caches (station zones, which the view's local times are read
    from) are of that network version or later: a worker whose schedule index is still
    older renders from the database, but leaves the keeping to one that has caught up."""
    raw = dumps(view)
    served = network_version_served()
    if served is not None and served >= key[1]:
        kept = _view_key(parts.order, credits=parts.credits, network=key[1])[0]
        with contextlib.suppress(STORE_ERRORS):  # the cache is down: render every time
            cache.set(kept, raw, VIEW_CACHE_SECONDS)
    return raw


def order_view(parts: OrderParts) -> dict[str, Any]:
    """`data` of create order, change order and order retrieve."""
    order = parts.order
    passengers = parts.passengers
    pax_refs = {p.offer_pax_id: p.ref for p in passengers}
    journeys = parts.journeys
    position = {j.pk: j.position for j in journeys}
    items = sorted(parts.items, key=lambda i: position.get(i.journey_id, 0))
    # Cancelled lines stay in the view with their status; the total is what the live
    # ones are worth plus the fees and penalties charged, and `totals` accounts for the
    # rest.
    prices = {i.pk: Price.from_wire(i.price) for i in items}
    live = (
        [prices[i.pk] for i in items if i.status != CANCELLED]
        + [service_price(v) for v in parts.services if v.status == Service.Status.ACTIVE]
        + [fee_price(f) for f in parts.fees]
    )
    header: dict[str, Any] = {
        "orderId": order.order_id,
        "recordLocator": order.record_locator,
        "ownerCode": order.owner_code,
        "statusCode": order.status,
        "creationDateTime": clock.format_utc(order.created_at),
        "totalPrice": price_sum(live).to_wire(order.currency),
        "totals": _totals(order, parts.payments, parts.fees),
    }
    if order.status == OrderStatus.ONHOLD:
        header["balanceDue"] = money_wire(order.balance_due, order.currency)
        if order.payment_time_limit is not None:
            header["paymentTimeLimit"] = clock.format_utc(order.payment_time_limit)
    segments_of = parts.segments
    header["items"] = [
        {
            "itemId": item.ref,
            "statusCode": item.status,
            "totalPrice": prices[item.pk].to_wire(order.currency),
            "paxRefIds": [p.ref for p in passengers],
            "segmentRefIds": [s.ref for s in segments_of.get(item.journey_id, [])],
            "fare": {
                **item.fare,
                "paxRefIds": [pax_refs.get(ref, ref) for ref in item.fare.get("paxRefIds", [])],
            },
        }
        for item in items
    ]
    segment_refs = {s.pk: s.ref for ss in segments_of.values() for s in ss}
    changed = pending_change_journeys(parts.airline_changes)
    pax_by_pk = {p.pk: p.ref for p in passengers}
    client_ids = {p.pk: p.offer_pax_id for p in passengers}
    return {
        "order": header,
        "services": [
            _service_wire(v, order, pax_by_pk, segment_refs, journeys) for v in parts.services
        ],
        "pax": [pax_wire(p, pax_by_pk, client_ids) for p in passengers],
        "contacts": [_contact_wire(c) for c in parts.contacts],
        "journeys": [_journey_wire(j, segments_of[j.pk], parts.legs, changed) for j in journeys],
        "payments": [_payment_wire(p) for p in parts.payments],
        "fees": [_fee_wire(f, pax_by_pk, order) for f in parts.fees],
        "credits": [
            {
                "creditCode": c.code,
                "amount": money_wire(c.amount, c.currency),
                "remaining": money_wire(c.remaining, c.currency),
                "expiresAt": clock.format_utc(c.expires_at),
                "sourceOrderId": order.order_id,
            }
            for c in parts.credits
        ],
        "tickets": [
            {
                "ticketNumber": t.number,
                "couponNumber": c.number,
                "paxRefId": pax_by_pk[t.passenger_id],
                "segmentRefId": segment_refs.get(c.segment_id),
                "statusCode": c.status,
            }
            for t in parts.tickets
            for c in parts.coupons[t.pk]
        ],
        "emds": [
            _emd_wire(v, order, pax_by_pk, segment_refs, journeys)
            for v in parts.services
            if v.emd_number
        ],
        "airlineInitiatedChanges": [airline_change_wire(c) for c in parts.airline_changes],
    }


def _emd_wire(
    service: Service,
    order: Order,
    pax_by_pk: dict[int, str],
    segment_refs: dict[int, str],
    journeys: Sequence[Journey],
) -> dict[str, Any]:
    """An `emds[]` row (our own, beside tickets[]): the EMD a paid service was issued,
    linked to the service it pays for (its serviceId and order item) and where it is
    used. OPEN while that service is live; CLOSED once it is cancelled (what its value
    became is in order.totals)."""
    wire: dict[str, Any] = {
        "emdNumber": service.emd_number,
        "paxRefId": pax_by_pk[service.passenger_id],
        "serviceRefId": service.ref,
        "orderItemRefId": service.item_ref,
        "amount": money_wire(service.total, order.currency),
        "statusCode": "OPEN" if service.status == Service.Status.ACTIVE else "CLOSED",
    }
    if service.segment_id:
        wire["segmentRefId"] = segment_refs.get(service.segment_id)
    if service.journey_id:
        wire["journeyRefId"] = next((j.ref for j in journeys if j.pk == service.journey_id), None)
    return wire


def airline_change_wire(change: AirlineChange) -> dict[str, Any]:
    """An `airlineInitiatedChanges[]` entry (orders.servicing.airline_changes): the journeys as
    booked and as they fly now, and the change types that answer it while pending."""
    pending = change.status == AirlineChange.Status.PENDING
    wire: dict[str, Any] = {
        "id": change.ref,
        "status": change.status,
        "detectedAt": clock.format_utc(change.detected_at),
        "reasons": change.reasons,
        "removed": change.removed,
        "added": change.added,
        "availableActions": change.actions if pending else [],
    }
    if change.resolved_at is not None:
        wire["resolvedAt"] = clock.format_utc(change.resolved_at)
    return wire


def _payment_wire(p: Payment) -> dict[str, Any]:
    if p.method == Payment.Method.CARD:
        method = {
            "type": "CreditCard",
            "cardType": p.card_brand,
            "maskedNumber": f"XXXXXXXXXXXX{p.card_last4}",
        }
    elif p.method == Payment.Method.CREDIT:
        method = {"type": "Credit", "creditCode": p.credit.code}
    else:
        method = {"type": p.method}
    wire = {
        "paymentId": p.ref,
        "amount": money_wire(p.amount, p.currency),
        "statusCode": p.status,
        "method": method,
    }
    if p.refunded:
        wire["refundedAmount"] = money_wire(p.refunded, p.currency)
    return wire


def _totals(order: Order, payments: Sequence[Payment], fees: Sequence[OrderFee]) -> dict[str, Any]:
    """What moved and what went (SPEC.md §2.5 leaves it open): `charged` every payment
    taken, `refunded` what of it was given back, `voided` the value of lines cancelled
    before anyone paid for them (a cancelled or lapsed hold, a seat replaced on a hold),
    `retained` what else the airline kept of lines a paid order lost (a cheaper
    replacement seat: the fees and penalties it charged are in totalPrice, so not here),
    `credited` what became airline credit, and only when there is some,
    `refundedOutside` what the payment provider gave back outside this service (its
    dashboard) that no later change has set against value given back. A settled order's
    charged - refunded = totalPrice + retained + credited - refundedOutside."""
    taken = [p for p in payments if p.status != Payment.Status.FAILED]
    in_price = sum((f.amount for f in fees), ZERO)
    totals = {
        "charged": money_wire(sum((p.amount for p in taken), ZERO), order.currency),
        "refunded": money_wire(sum((p.refunded for p in taken), ZERO), order.currency),
        "voided": money_wire(order.voided, order.currency),
        "retained": money_wire(order.retained - in_price, order.currency),
        "credited": money_wire(order.credited, order.currency),
    }
    if order.refunded_outside:
        totals["refundedOutside"] = money_wire(order.refunded_outside, order.currency)
    return totals


def summary(row: OrderRow) -> dict[str, Any]:
    """One OrderList row (SPEC.md §2.8): the journey the selector chose and the lead
    passenger."""
    wire: dict[str, Any] = {
        "orderId": row.order_id,
        "recordLocator": row.record_locator,
        "statusCode": row.status,
    }
    if row.departure_date is not None:
        wire["departureDate"] = str(row.departure_date)  # a date, or SQLite's ISO text
    if row.flight_number is not None:
        wire["flightNumber"] = str(row.flight_number)
    wire["origin"], wire["destination"] = row.origin, row.destination
    if row.agency_code:
        wire["sourceOrganizationCode"] = row.agency_code
    if row.given_name or row.surname:
        wire["passengerName"] = {"givenName": row.given_name, "surname": row.surname}
    return wire


def order_list_page(search: OrderSearch, rows: Sequence[OrderRow], more: bool) -> dict[str, Any]:
    """OrderList's `data` (SPEC.md §4.8): the page's summaries and the cursor for the next
    page (the last order's id; the one asked for when the page is empty). JSON and NDC
    answer the same page."""
    return {
        "orders": [summary(row) for row in rows],
        "page": {
            "pageSize": search.page_size,
            "count": len(rows),
            "lastIndex": rows[-1].pk if rows else search.last_index,
            "hasMore": more,
        },
    }


def order_pax_header(order: Order) -> dict[str, Any]:
    """What every reshop answer starts with: the order's ids and its passengers."""
    passengers = list(order.passengers.all())
    by_pk = {p.pk: p.ref for p in passengers}
    client_ids = {p.pk: p.offer_pax_id for p in passengers}
    return {
        "orderId": order.order_id,
        "recordLocator": order.record_locator,
        "pax": [pax_wire(p, by_pk, client_ids) for p in passengers],
    }


def _zone(code: str) -> ZoneInfo:
    return station_zone(code)


def pax_wire(p: Passenger, pax_by_pk: dict[int, str], client_ids: dict[int, str]) -> dict[str, Any]:
    wire: dict[str, Any] = {
        "paxId": p.ref,
        # The id create order's passengers[] gave this passenger (the priced offer's
        # paxId): the link from the client's ids to the order's PAX- ids.
        "passengerId": p.offer_pax_id,
        "ptc": p.ptc,
        "name": {"givenName": p.given_name, "surname": p.surname},
    }
    optional = {
        "dateOfBirth": p.date_of_birth.isoformat() if p.date_of_birth else None,
        "gender": p.gender,
        "nationality": p.nationality,
        "residenceCountry": p.residence_country,
        "loyaltyProgram": p.loyalty_program,
        "travelDocuments": p.travel_documents,
        "contacts": p.contacts,
        # The infant an adult carries, by the order's id and, as create order named it
        # (`infantPassengerId`), by the client's.
        "infantRefId": pax_by_pk.get(p.infant_id) if p.infant_id else None,
        "infantPassengerId": client_ids.get(p.infant_id) if p.infant_id else None,
    }
    wire.update({k: v for k, v in optional.items() if v})
    return wire


def _contact_wire(c) -> dict[str, Any]:
    wire: dict[str, Any] = {
        "contactId": c.ref,
        "contactTypeCode": c.type_code,
        "contactTypeName": "Primary",
        "emailAddress": c.email,
        "phoneNumbers": [{"number": c.phone, "type": "Mobile"}] if c.phone else [],
        "name": {"givenName": c.given_name, "surname": c.surname},
    }
    if c.postal_address:
        wire["postalAddress"] = c.postal_address
    return wire


def _journey_wire(
    journey: Journey,
    segments: Iterable[Segment],
    legs_of: Mapping[int, Sequence[LegPart]],
    changed: set[str],
) -> dict[str, Any]:
    segments = list(segments)
    legs = sum(len(legs_of[s.pk]) for s in segments)
    statuses = [_segment_status(journey, legs_of[s.pk], changed) for s in segments]
    return {
        "journeyId": journey.ref,
        "origin": journey.origin,
        "destination": journey.destination,
        "departureDateTime": local_time(journey.departs_at, _zone(journey.origin)),
        "arrivalDateTime": local_time(journey.arrives_at, _zone(journey.destination)),
        "duration": iso_duration(journey.arrives_at - journey.departs_at),
        "stops": max(legs - 1, 0),
        "operationalStatus": _journey_status(statuses),
        "segments": [
            _segment_wire(s, legs_of[s.pk], status)
            for s, status in zip(segments, statuses, strict=True)
        ],
    }


def pending_change_journeys(changes: Iterable[AirlineChange]) -> set[str]:
    """JOU- ids a pending airline change covers: their segments are SCHEDULE_CHANGED
    until the seller answers (the back office's bookings list flags them from here)."""
    return {
        ref for c in changes if c.status == AirlineChange.Status.PENDING for ref in c.journey_refs
    }


def operational_statuses(parts: OrderParts | FlightParts) -> dict[str, str]:
    """`operationalStatus` by JOU- and SEG- id, as the order view shows them: the
    back office's booking page reads the same state as the API (docs/operators/back-office.md
    "Back office")."""
    changed = pending_change_journeys(parts.airline_changes)
    statuses: dict[str, str] = {}
    for journey in parts.journeys:
        segments = parts.segments.get(journey.pk, [])
        of_segments = [_segment_status(journey, parts.legs[s.pk], changed) for s in segments]
        statuses.update(zip((s.ref for s in segments), of_segments, strict=True))
        statuses[journey.ref] = _journey_status(of_segments)
    return statuses


def _segment_status(journey: Journey, legs: Sequence[LegPart], changed: set[str]) -> str:
    if journey.is_cancelled:
        return OPERATIONAL_EXCHANGED if journey.exchanged else OPERATIONAL_CANCELLED
    if any(leg.is_cancelled for leg in legs):
        return OPERATIONAL_AIRLINE_CANCELLED
    return OPERATIONAL_SCHEDULE_CHANGED if journey.ref in changed else OPERATIONAL_CONFIRMED


# A journey is as its most affected segment: one cancelled flight makes it unflyable.
_JOURNEY_STATUS_ORDER = (
    OPERATIONAL_EXCHANGED,
    OPERATIONAL_CANCELLED,
    OPERATIONAL_AIRLINE_CANCELLED,
    OPERATIONAL_SCHEDULE_CHANGED,
)


def _journey_status(segment_statuses: Sequence[str]) -> str:
    return next((s for s in _JOURNEY_STATUS_ORDER if s in segment_statuses), OPERATIONAL_CONFIRMED)


def _segment_wire(s: Segment, legs: Iterable[LegPart], status: str) -> dict[str, Any]:
    # No `statusCode`: SPEC.md §2.2 gives it one value, WAITLISTED, and our bookings are
    # never waitlisted; the state of the flight is `operationalStatus`.
    return {
        "segmentId": s.ref,
        "marketingCarrier": s.carrier,
        "marketingFlightNumber": str(s.flight_number),
        "origin": s.origin,
        "destination": s.destination,
        "departureDateTime": local_time(s.departs_at, _zone(s.origin)),
        "arrivalDateTime": local_time(s.arrives_at, _zone(s.destination)),
        "cabinTypeCode": s.cabin,
        "rbd": s.rbd,
        "operationalStatus": status,
        "legs": [
            {
                "legId": leg.ref,
                "origin": leg.origin,
                "destination": leg.destination,
                "departureDateTime": local_time(leg.departs_at, _zone(leg.origin)),
                "arrivalDateTime": local_time(leg.arrives_at, _zone(leg.destination)),
                "aircraftTypeCode": leg.aircraft_type,
            }
            for leg in legs
        ],
    }


FEE_TYPES = {"SEAT": "SeatFee", "BAGGAGE": "BaggageFee"}


def fee_price(fee: OrderFee) -> Price:
    """A fee or penalty the order was charged (orders.money.fees) as a Price: base 0, one fee
    line of its SPEC.md §1 type (ServiceFee, PenaltyFee)."""
    return Price(base=ZERO, fees=(Fee(fee.type, fee.code, fee.description, fee.amount),))


def _fee_wire(fee: OrderFee, pax_by_pk: dict[int, str], order: Order) -> dict[str, Any]:
    wire: dict[str, Any] = {
        "feeId": fee.ref,
        "type": fee.type,
        "code": fee.code,
        "description": fee.description,
        "amount": money_wire(fee.amount, order.currency),
    }
    if fee.passenger_id is not None:
        wire["paxRefId"] = pax_by_pk[fee.passenger_id]
    if fee.emd_number:
        wire["emdNumber"] = fee.emd_number
    return wire


def service_price(service: Service) -> Price:
    """A service's price (SPEC.md §1 Price): no fare, so a base of 0; the product's price
    as a fee of its kind (SeatFee, BaggageFee, else ServiceFee) — the seat map's or
    service list's passengerPricing `amount` — plus the US transportation tax where the
    product carries it (`taxAmount`). Their sum is what the passenger is charged."""
    taxes = (Tax("US", "US Transportation Tax", service.tax),) if service.tax else ()
    # A free service (a bundle's own, a free seat) adds no fee line to the order's total.
    fees = (
        (
            Fee(
                FEE_TYPES.get(service.category, "ServiceFee"),
                service.code,
                service.name,
                service.amount,
            ),
        )
        if service.amount
        else ()
    )
    return Price(base=ZERO, taxes=taxes, fees=fees)


def _service_wire(
    service: Service,
    order: Order,
    pax_by_pk: dict[int, str],
    segment_refs: dict[int, str],
    journeys: Sequence[Journey],
) -> dict[str, Any]:
    wire: dict[str, Any] = {
        "itemId": service.item_ref,
        "serviceId": service.ref,
        "code": service.code,
        "name": service.name,
        "category": service.category.lower(),
        "ownerCode": order.owner_code,
        "statusCode": CANCELLED if service.status == Service.Status.CANCELLED else CONFIRMED,
        "totalPrice": service_price(service).to_wire(order.currency),
        "paxRefId": pax_by_pk[service.passenger_id],
    }
    if service.included:
        wire["included"] = True
    if service.segment_id:
        wire["segmentRefId"] = segment_refs.get(service.segment_id)
    if service.journey_id:
        wire["journeyRefId"] = next((j.ref for j in journeys if j.pk == service.journey_id), None)
    if service.seat_row:
        wire["attributes"] = {
            "seat": f"{service.seat_row}{service.seat_column}",
            "row": service.seat_row,
            "column": service.seat_column,
        }
    elif service.category == "BAGGAGE" and service.code.startswith("CB"):
        wire["attributes"] = {"pieceCount": 1}
    if service.emd_number:
        wire["emdNumber"] = service.emd_number
    return wire
