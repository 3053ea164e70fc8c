"""factory-boy factories for bundles and fares, and ORM-free terms for pure tests.

The four default bundles come from the data migration; BundleFactory makes extra ones
with codes of their own."""

from decimal import Decimal

import factory
from factory.django import DjangoModelFactory

from airline.fares.models import Bundle, Fare
from airline.fares.terms import BundleTerms, FareTerms


class BundleFactory(DjangoModelFactory):
    class Meta:
        model = Bundle

    code = factory.Sequence(lambda n: f"TEST{n}")
    name = factory.Sequence(lambda n: f"Test bundle {n}")
    rank = factory.Sequence(lambda n: 10 + n)
    cabin = "Y"
    supplement = Decimal("0.00")
    fare_basis_suffix = "TS"


class FareFactory(DjangoModelFactory):
    class Meta:
        model = Fare
        django_get_or_create = ("origin", "destination", "rbd")

    origin = "PVD"
    destination = "CHS"
    rbd = "L"
    base_amount = Decimal("100.00")
    fare_basis = factory.LazyAttribute(lambda o: f"{o.rbd}21OW")


def bundle(
    supplement: str = "0.00", *, code: str = "NOFLEX", suffix: str = "NF", cabin: str = "Y"
) -> BundleTerms:
    """A bundle's terms without the database: only what pricing reads."""
    return BundleTerms(
        code=code,
        name=code.title(),
        cabin=cabin,
        supplement=Decimal(supplement),
        fare_basis_suffix=suffix,
    )


def fare(origin: str, destination: str, rbd: str, amount: str, basis: str = "") -> FareTerms:
    return FareTerms(origin, destination, rbd, Decimal(amount), basis or f"{rbd}21OW")


def fares(*entries: FareTerms) -> dict[tuple[str, str, str], FareTerms]:
    return {entry.key: entry for entry in entries}
