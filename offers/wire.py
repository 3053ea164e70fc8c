"""Flights, segments and legs in SPEC.md §2.2 shapes: plain dicts (the hot path builds
hundreds per search; DESIGN.md §2), local times without offset, ISO 8601 durations."""

import hashlib
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from airline.network.itineraries import Journey, NetworkIndex, Segment
from airline.network.models import CabinCode


def local_time(moment: datetime, zone: ZoneInfo) -> str:
    """Station-local ISO 8601 without offset (SPEC.md §1)."""
    return moment.astimezone(zone).strftime("%Y-%m-%dT%H:%M:%S")


def iso_duration(delta: timedelta) -> str:
    """`PT2H5M`, `P1DT1H` style ISO 8601 durations."""
    minutes = int(delta.total_seconds() // 60)
    days, minutes = divmod(minutes, 24 * 60)
    hours, minutes = divmod(minutes, 60)
    text = "P" + (f"{days}D" if days else "")
    if hours or minutes or not days:
        text += (
            "T" + (f"{hours}H" if hours else "") + (f"{minutes}M" if minutes or not hours else "")
        )
    return text


def ref_id(prefix: str, *parts: object) -> str:
    """A stable opaque id for a journey, segment or leg (same legs, same id)."""
    digest = hashlib.blake2b("|".join(map(str, parts)).encode(), digest_size=5).hexdigest()
    return f"{prefix}-{digest.upper()}"


def journey_id(journey: Journey) -> str:
    return ref_id("JOU", journey.key)


def flight_wire(
    journey: Journey,
    index: NetworkIndex,
    *,
    cabin: str,
    rbds: list[str],
    with_flight_numbers: bool = True,
) -> dict[str, Any]:
    """SPEC.md §2.2 Flight (or §2.4 journey with `with_flight_numbers=False`)."""
    origin_zone, destination_zone = (
        index.station_zone(journey.origin),
        index.station_zone(journey.destination),
    )
    wire: dict[str, Any] = {
        "journeyId": journey_id(journey),
        "origin": journey.origin,
        "destination": journey.destination,
        "departureDateTime": local_time(journey.departs_at, origin_zone),
        "arrivalDateTime": local_time(journey.arrives_at, destination_zone),
        "duration": iso_duration(journey.duration),
        "stops": journey.stops,
        "segments": [
            segment_wire(s, index, cabin=cabin, rbd=rbd)
            for s, rbd in zip(journey.segments, rbds, strict=True)
        ],
    }
    if with_flight_numbers:
        wire["flightNumbers"] = [f"{s.carrier}{s.flight_number}" for s in journey.segments]
    return wire


def segment_wire(segment: Segment, index: NetworkIndex, *, cabin: str, rbd: str) -> dict[str, Any]:
    origin_zone, destination_zone = (
        index.station_zone(segment.origin),
        index.station_zone(segment.destination),
    )
    wire: dict[str, Any] = {
        "segmentId": ref_id("SEG", *(leg.id for leg in segment.legs)),
        "marketingCarrier": segment.carrier,
        "marketingFlightNumber": str(segment.flight_number),
        "operatingCarrier": segment.carrier,
        "operatingFlightNumber": str(segment.flight_number),
        "origin": segment.origin,
        "destination": segment.destination,
        "departureDateTime": local_time(segment.departs_at, origin_zone),
        "arrivalDateTime": local_time(segment.arrives_at, destination_zone),
        "cabinTypeCode": cabin,
        "cabinName": CabinCode(cabin).label,
        "rbd": rbd,
        "duration": iso_duration(segment.arrives_at - segment.departs_at),
    }
    disclosure = next(
        (leg.govt_approval_disclosure for leg in segment.legs if leg.govt_approval_disclosure), ""
    )
    if disclosure:
        wire["govtApprovalDisclosure"] = disclosure
    wire["legs"] = [
        {
            "legId": ref_id("LEG", leg.id),
            "origin": leg.origin,
            "destination": leg.destination,
            "departureDateTime": local_time(leg.departs_at, index.station_zone(leg.origin)),
            "arrivalDateTime": local_time(leg.arrives_at, index.station_zone(leg.destination)),
            "aircraftTypeCode": leg.aircraft_type,
            "carrierAircraftTypeCode": index.carrier_aircraft_code(leg.aircraft_type),
            **(
                {"govtApprovalDisclosure": leg.govt_approval_disclosure}
                if leg.govt_approval_disclosure
                else {}
            ),
        }
        for leg in segment.legs
    ]
    return wire


# Card brands accepted by create order (DESIGN.md §8), advertised with every offer.
PAYMENT_FUNCTIONS = [
    {
        "paymentTypeCode": "CC",
        "paymentBrandCode": brand,
        "paymentMethodCountryCode": "US",
        "paymentRedirectionInd": False,
    }
    for brand in ("VI", "CA", "AX", "DS")
]
