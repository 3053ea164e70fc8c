"""Read queries of the fares app; each returns ORM-free terms for pure code to use."""

from collections.abc import Iterable

from airline.fares.models import Bundle, Fare
from airline.fares.terms import BundleTerms, FareTerms, bundle_terms, fare_terms
from airline.network.models import BookingClass


def fares_for_markets(
    pairs: Iterable[tuple[str, str]],
) -> dict[tuple[str, str, str], FareTerms]:
    """Every class's fare in these directional markets, keyed (origin, destination, rbd):
    one query, over the unique (origin, destination, rbd) index."""
    wanted = {(origin.upper(), destination.upper()) for origin, destination in pairs}
    if not wanted:
        return {}
    # IN on each column, then the exact pairs in Python: one simple indexed query instead
    # of an OR per pair (a request has a handful of markets, a cache fill thousands).
    rows = Fare.objects.filter(
        origin__in={o for o, _ in wanted}, destination__in={d for _, d in wanted}
    )
    return {
        (fare.origin, fare.destination, fare.rbd): fare_terms(fare)
        for fare in rows
        if (fare.origin, fare.destination) in wanted
    }


def bundles_for_sale(*, codes: Iterable[str] | None = None) -> list[BundleTerms]:
    """The bundles in display order; `codes` narrows them to what an API key may sell."""
    rows = Bundle.objects.order_by("rank", "code")
    if codes is not None:
        rows = rows.filter(code__in=list(codes))
    return [bundle_terms(bundle) for bundle in rows]


def booking_class_ladders() -> dict[str, tuple[str, ...]]:
    """Each cabin's booking classes from the top (rank 0) down, as cheapest_available_rbd
    takes them: {"Y": ("Y", "B", "M", "H", "K", "L"), "C": ("J", "C", "D"), ...}."""
    ladders: dict[str, list[str]] = {}
    for cabin, rbd in BookingClass.objects.order_by("cabin", "rank").values_list("cabin", "rbd"):
        ladders.setdefault(cabin, []).append(rbd)
    return {cabin: tuple(rbds) for cabin, rbds in ladders.items()}
