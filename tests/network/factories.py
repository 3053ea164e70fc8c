"""factory-boy factories for fleet and flight-date legs (stations come from airportsdata)."""

from datetime import UTC, date, datetime, timedelta

import factory
from factory.django import DjangoModelFactory

from airline.network.models import AircraftType, CabinLayout, FlightLeg, SeatConfiguration
from airline.network.services import inventory_create_for_legs, stations_ensure


class AircraftTypeFactory(DjangoModelFactory):
    class Meta:
        model = AircraftType
        django_get_or_create = ("iata_code",)

    iata_code = "E75"
    carrier_code = "E175"
    name = "Embraer 175"


class SeatConfigurationFactory(DjangoModelFactory):
    """A small two-cabin aircraft: C rows 1-2 (AC DF, 8 seats), Y rows 3-12 (ABC DEF),
    row 13 skipped... by default 8 C seats and 60 Y seats, exit row 10."""

    class Meta:
        model = SeatConfiguration
        django_get_or_create = ("aircraft_type", "code")
        skip_postgeneration_save = True

    aircraft_type = factory.SubFactory(AircraftTypeFactory)
    code = "C8Y60"
    name = "Test two-cabin"
    blocked_seats = factory.LazyFunction(list)

    @factory.post_generation
    def cabins(self, create, extracted, **kwargs):
        if not create or self.cabins.exists():
            return
        CabinLayout.objects.create(
            configuration=self,
            cabin="C",
            name="Business",
            first_row=1,
            last_row=2,
            seat_letters="AC DF",
        )
        CabinLayout.objects.create(
            configuration=self,
            cabin="Y",
            name="Economy",
            first_row=3,
            last_row=12,
            seat_letters="ABC DEF",
            exit_rows=[10],
            extra_legroom_rows=[3],
        )


class FlightLegFactory(DjangoModelFactory):
    """A dated leg with its inventory, departing `departs_at` (UTC) for `minutes`."""

    class Meta:
        model = FlightLeg

    class Params:
        minutes = 120

    carrier = "MX"
    flight_number = factory.Sequence(lambda n: 1000 + n)
    flight_date = factory.LazyAttribute(lambda o: o.departs_at.date())
    leg_sequence = 1
    origin_id = "PVD"
    destination_id = "CHS"
    departs_at = datetime(2027, 3, 1, 14, 0, tzinfo=UTC)
    arrives_at = factory.LazyAttribute(lambda o: o.departs_at + timedelta(minutes=o.minutes))
    configuration = factory.SubFactory(SeatConfigurationFactory)
    aircraft_type_id = factory.LazyAttribute(lambda o: o.configuration.aircraft_type_id)

    @classmethod
    def _create(cls, model_class, *args, **kwargs):
        stations_ensure([kwargs["origin_id"], kwargs["destination_id"]])
        leg = super()._create(model_class, *args, **kwargs)
        inventory_create_for_legs([leg])
        return leg


def flight_date(days: int = 0) -> date:
    return date(2027, 3, 1) + timedelta(days=days)
