"""US taxes (DESIGN.md §7): 7.5% on the base, ZP per leg, AY per enplanement capped per
one-way trip, XF at no more than two enplanement airports per one-way trip."""

from decimal import Decimal

import pytest
from django.conf import settings as django_settings
from django.core.exceptions import ImproperlyConfigured
from django.test import override_settings

from airline.fares.pricing import PassengerMix, SegmentToPrice, price_option
from airline.fares.taxes import parse_tax_rules, tax_rules
from tests.fares.factories import bundle, fare, fares

US_TAXES = django_settings.US_TAXES

ONE_ADULT = PassengerMix(adults=1)


def taxes_of(option) -> dict[str, Decimal]:
    return {tax.code: tax.amount for tax in option.per_ptc["ADT"].taxes}


def nonstop(origin: str, destination: str, rbd: str = "L") -> SegmentToPrice:
    return SegmentToPrice(origin, destination, rbd, leg_origins=(origin,))


def test_the_worked_example_of_one_adult_on_a_nonstop():
    # Fare 100.00 + supplement 0.00 = base 100.00
    #   US 7.5% x 100.00               =   7.50
    #   ZP 5.30 x 1 leg                =   5.30
    #   AY 5.60 x 1 enplanement        =   5.60
    #   XF 4.50 x 1 enplanement airport =  4.50
    #   total 100.00 + 22.90           = 122.90
    option = price_option(
        segments=[nonstop("PVD", "CHS")],
        bundle=bundle("0.00"),
        fares=fares(fare("PVD", "CHS", "L", "100.00")),
        mix=ONE_ADULT,
    )

    assert taxes_of(option) == {
        "US": Decimal("7.50"),
        "ZP": Decimal("5.30"),
        "AY": Decimal("5.60"),
        "XF": Decimal("4.50"),
    }
    assert option.total.total == Decimal("122.90")
    assert [t.description for t in option.total.taxes] == [
        "US Transportation Tax",
        "US Flight Segment Tax",
        "September 11th Security Fee",
        "Passenger Facility Charge",
    ]


def test_the_us_tax_is_on_the_fare_and_the_bundle_supplement_rounded_half_up():
    # base 100.60 + 30.00 (Nice) = 130.60; 7.5% = 9.795 -> 9.80 (half up)
    option = price_option(
        segments=[nonstop("PVD", "CHS")],
        bundle=bundle("30.00", code="NICE", suffix="NI"),
        fares=fares(fare("PVD", "CHS", "L", "100.60")),
        mix=ONE_ADULT,
    )

    assert option.total.base == Decimal("130.60")
    assert taxes_of(option)["US"] == Decimal("9.80")


def test_a_direct_one_stop_flight_pays_zp_per_leg_but_enplanes_once():
    # PVD-CHS-TPA on one flight number: one segment, two legs, one boarding.
    # base 150.00; US 11.25; ZP 2 x 5.30 = 10.60; AY 1 x 5.60; XF 1 x 4.50 -> 181.95
    option = price_option(
        segments=[SegmentToPrice("PVD", "TPA", "L", leg_origins=("PVD", "CHS"))],
        bundle=bundle(),
        fares=fares(fare("PVD", "TPA", "L", "150.00")),
        mix=ONE_ADULT,
    )

    assert taxes_of(option) == {
        "US": Decimal("11.25"),
        "ZP": Decimal("10.60"),
        "AY": Decimal("5.60"),
        "XF": Decimal("4.50"),
    }
    assert option.total.total == Decimal("181.95")


def test_a_connection_enplanes_twice():
    # PVD-CLT + CLT-MSY: base 120.00 + 140.00 = 260.00; US 19.50; ZP 2 x 5.30 = 10.60;
    # AY 2 x 5.60 = 11.20; XF 2 x 4.50 = 9.00 -> 310.30
    option = price_option(
        segments=[nonstop("PVD", "CLT"), nonstop("CLT", "MSY")],
        bundle=bundle(),
        fares=fares(fare("PVD", "CLT", "L", "120.00"), fare("CLT", "MSY", "L", "140.00")),
        mix=ONE_ADULT,
    )

    assert taxes_of(option) == {
        "US": Decimal("19.50"),
        "ZP": Decimal("10.60"),
        "AY": Decimal("11.20"),
        "XF": Decimal("9.00"),
    }
    assert option.total.total == Decimal("310.30")


def test_ay_and_xf_are_capped_on_a_three_segment_one_way():
    # Three nonstops, the middle one a one-stop (4 legs, 3 enplanements), 50.00 each:
    # base 150.00; US 11.25; ZP 4 x 5.30 = 21.20;
    # AY min(3 x 5.60 = 16.80, 11.20) = 11.20; XF min(3, 2) x 4.50 = 9.00 -> 202.65
    option = price_option(
        segments=[
            nonstop("BDL", "PVD"),
            SegmentToPrice("PVD", "TPA", "L", leg_origins=("PVD", "CHS")),
            nonstop("TPA", "ORF"),
        ],
        bundle=bundle(),
        fares=fares(
            fare("BDL", "PVD", "L", "50.00"),
            fare("PVD", "TPA", "L", "50.00"),
            fare("TPA", "ORF", "L", "50.00"),
        ),
        mix=ONE_ADULT,
    )

    assert taxes_of(option) == {
        "US": Decimal("11.25"),
        "ZP": Decimal("21.20"),
        "AY": Decimal("11.20"),
        "XF": Decimal("9.00"),
    }
    assert option.total.total == Decimal("202.65")


def test_the_amounts_come_from_the_us_taxes_setting():
    # Today's TSA rule, for instance: AY 5.60 per one-way trip whatever the enplanements.
    changed = {**US_TAXES, "AY": {**US_TAXES["AY"], "max_per_one_way": "5.60"}}
    segments = [nonstop("PVD", "CLT"), nonstop("CLT", "MSY")]
    terms = fares(fare("PVD", "CLT", "L", "120.00"), fare("CLT", "MSY", "L", "140.00"))

    with override_settings(US_TAXES=changed):
        option = price_option(segments=segments, bundle=bundle(), fares=terms, mix=ONE_ADULT)

    assert taxes_of(option)["AY"] == Decimal("5.60")
    assert tax_rules() == parse_tax_rules(US_TAXES)  # back once the override ends


@pytest.mark.parametrize(
    "entry",
    [
        {"description": "No base"},
        {"rate": "0.075", "per_segment": "5.30"},
        {"rate": "-0.1"},
        {"rate": "lots"},
        {"per_segment": "5.30", "max_per_one_way": "10.00"},
        {"per_enplanement": "4.50", "max_enplanements_per_one_way": "two"},
        {"per_enplanement": "4.50", "per_journey": "1.00"},
    ],
)
def test_a_mistake_in_the_setting_stops_the_process(entry):
    with pytest.raises(ImproperlyConfigured, match="US_TAXES"):
        parse_tax_rules({"XX": entry})
