"""Write flows of the fares app."""

from collections.abc import Iterable

from django.db import transaction

from airline.fares.demo import demo_fares
from airline.fares.models import Fare

BATCH = 1000


@transaction.atomic
def fares_ensure_demo(markets: Iterable[tuple[str, str, float]]) -> int:
    """File the demo fares of these (origin, destination, distance_km) markets, replacing
    the amount and basis of any fare already filed for a market and class (idempotent:
    `seed_demo` runs it on every start). Returns how many fares were written."""
    # Keyed, so a market listed twice is written once: PostgreSQL refuses an upsert that
    # touches the same row twice in one statement.
    fares = {(f.origin, f.destination, f.rbd): f for f in demo_fares(markets)}
    Fare.objects.bulk_create(
        fares.values(),
        batch_size=BATCH,
        update_conflicts=True,
        unique_fields=["origin", "destination", "rbd"],
        update_fields=["base_amount", "fare_basis"],
    )
    return len(fares)
