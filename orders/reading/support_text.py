"""What support staff read about a booking, in words, shared by `manage.py booking` and
the booking page in the back office: a journey's place in the booking, an event's
detail as lines, a flight of an airline change."""

from typing import Any

from orders.models import Journey

# Cancelled and exchanged journeys move behind the live ones by this much (orders.servicing.cancel,
# orders.servicing.exchange), so the view lists journeys in travel order, live first.
RETIRED_OFFSET = 100


def journey_place(journey: Journey) -> str:
    """`1` for a live journey; what a retired one was: "replaced, was journey 1" for one
    exchanged for other flights, "cancelled, was journey 2" for one cancelled."""
    if journey.position <= RETIRED_OFFSET:
        return str(journey.position)
    was = journey.position - RETIRED_OFFSET
    return f"{'replaced' if journey.exchanged else 'cancelled'}, was journey {was}"


def detail_lines(detail: dict[str, Any], prefix: str = "") -> list[str]:
    """An event's detail as `key: value` lines: lists joined, nested objects indented,
    never the raw JSON."""
    lines = []
    for key, value in detail.items():
        label = f"{prefix}{key.replace('_', ' ')}"
        if isinstance(value, dict):
            lines.append(f"{label}:")
            lines += detail_lines(value, prefix + "  ")
        elif isinstance(value, list):
            if all(not isinstance(v, dict | list) for v in value):
                lines.append(f"{label}: {', '.join(map(str, value)) or '-'}")
            else:
                lines.append(f"{label}:")
                for item in value:
                    nested = item if isinstance(item, dict) else {"-": item}
                    lines += detail_lines(nested, prefix + "  ")
        else:
            lines.append(f"{label}: {value}")
    return lines


def wire_segment(segment: dict[str, Any]) -> str:
    """A segment of the order view's shape (its times already station-local):
    `MX101 PVD 2026-06-01 07:00 -> CHS 2026-06-01 09:05`."""
    return (
        f"{segment['marketingCarrier']}{segment['marketingFlightNumber']} "
        f"{segment['origin']} {segment['departureDateTime'].replace('T', ' ')[:16]} -> "
        f"{segment['destination']} {segment['arrivalDateTime'].replace('T', ' ')[:16]}"
    )
