"""The four default bundles (DESIGN.md §7), filed by a data migration, and what the
other apps read from them: free seats and bags, cancellation value, the Fare object."""

from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError

from airline.fares.models import Bundle
from airline.fares.pricing import bundle_terms
from airline.fares.selectors import booking_class_ladders, bundles_for_sale
from airline.fares.validators import (
    validate_baggage_disclosures,
    validate_benefits,
    validate_penalties,
    validate_seat_profiles,
)
from airline.network.fleet import Zone

pytestmark = pytest.mark.django_db


def terms(code: str):
    return bundle_terms(Bundle.objects.get(code=code))


def penalty(code: str, type_code: str) -> dict:
    (found,) = [p for p in Bundle.objects.get(code=code).penalties if p["typeCode"] == type_code]
    return found


def test_the_migration_files_the_four_bundles_in_display_order():
    rows = list(Bundle.objects.values_list("code", "name", "cabin", "fare_basis_suffix"))

    assert rows == [
        ("NOFLEX", "No Flex", "Y", "NF"),
        ("NICE", "Nice", "Y", "NI"),
        ("NICER", "Nicer", "Y", "NR"),
        ("NICEST", "Nicest", "C", "NT"),
    ]


def test_the_bundles_carry_the_design_terms():
    fields = [
        "code",
        "carry_on_included",
        "checked_bags_included",
        "seat_selection",
        "changeable",
        "change_fee",
        "refund_method",
    ]

    rows = list(Bundle.objects.values_list(*fields))

    assert rows == [
        ("NOFLEX", False, 0, "none", False, Decimal("0.00"), "credit_scale"),
        ("NICE", False, 0, "none", True, Decimal("0.00"), "credit"),
        ("NICER", True, 1, "standard", True, Decimal("0.00"), "credit"),
        ("NICEST", True, 2, "premium", True, Decimal("0.00"), "refund"),
    ]
    supplements = dict(Bundle.objects.values_list("code", "supplement"))
    assert supplements["NOFLEX"] == Decimal("0.00")
    assert supplements["NOFLEX"] < supplements["NICE"] < supplements["NICER"]


@pytest.mark.parametrize("code", ["NOFLEX", "NICE", "NICER", "NICEST"])
def test_the_bundle_json_has_the_spec_shapes(code):
    bundle = Bundle.objects.get(code=code)

    validate_benefits(bundle.benefits)
    validate_baggage_disclosures(bundle.baggage_disclosures)
    validate_penalties(bundle.penalties)
    validate_seat_profiles(bundle.seat_profiles)
    bundle.full_clean()
    assert {p["typeCode"] for p in bundle.penalties} == {"Change", "Cancellation"}


@pytest.mark.parametrize("code", ["NOFLEX", "NICE", "NICER", "NICEST"])
def test_the_benefits_shown_agree_with_the_terms_applied(code):
    bundle = Bundle.objects.get(code=code)
    shown = {b["label"]: b for b in bundle.benefits}

    assert list(shown) == [
        "Personal item",
        "Carry-on bag",
        "Checked bags",
        "Seat selection",
        "Changes",
        "Cancellation",
    ]
    assert shown["Personal item"]["included"] is True
    assert shown["Carry-on bag"]["included"] is bundle.carry_on_included
    assert shown["Checked bags"].get("quantity", 0) == bundle.checked_bags_included
    assert shown["Seat selection"]["included"] is (bundle.seat_selection != "none")
    assert shown["Changes"]["included"] is bundle.changeable


def test_no_flex_gives_airline_credit_on_a_lead_time_scale():
    cancellation = penalty("NOFLEX", "Cancellation")
    no_flex = terms("NOFLEX")

    assert cancellation["creditMethod"] == "AirlineCredit"
    assert cancellation["restrictions"][0] == {
        "minDaysBeforeDeparture": 60,
        "creditPercent": 100,
        "description": "60 days or more before departure: 100% credit",
    }
    scale = [(90, 100), (60, 100), (59, 75), (30, 75), (29, 50), (14, 50), (13, 25), (7, 25)]
    scale += [(6, 0), (0, 0), (-1, 0)]  # no credit in the last week, nor for a no-show
    assert [(days, no_flex.cancellation_percent(days)) for days, _ in scale] == scale
    assert penalty("NOFLEX", "Change")["restrictions"][0]["allowedModificationInd"] is False


def test_nice_and_nicer_change_for_the_fare_difference_and_cancel_for_full_credit():
    for code in ("NICE", "NICER"):
        change = penalty(code, "Change")["restrictions"][0]
        assert (change["allowedModificationInd"], change["priceDifferenceApplies"]) == (True, True)
        assert penalty(code, "Cancellation")["creditMethod"] == "AirlineCredit"
        assert terms(code).cancellation_percent(0) == 100
        assert terms(code).cancellation_percent(-1) == 0  # a no-show


def test_nicest_is_refundable_to_the_card():
    cancellation = penalty("NICEST", "Cancellation")

    assert cancellation["creditMethod"] == "OriginalFormOfPayment"
    assert terms("NICEST").cancellation_percent(0) == 100


def test_which_seats_are_free_in_each_bundle():
    zones = [Zone.STANDARD, Zone.EXTRA_LEGROOM, Zone.EXIT_ROW, Zone.PREMIUM]

    free = {
        code: [zone for zone in zones if terms(code).seat_zone_is_free(zone)]
        for code in ("NOFLEX", "NICE", "NICER", "NICEST")
    }

    assert free == {"NOFLEX": [], "NICE": [], "NICER": [Zone.STANDARD], "NICEST": zones}


def test_which_bags_each_bundle_includes():
    services = ["COB", "CB1", "CB2", "CB3", "PETC"]

    included = {
        code: [s for s in services if terms(code).includes_service(s)]
        for code in ("NOFLEX", "NICE", "NICER", "NICEST")
    }

    assert included == {
        "NOFLEX": [],
        "NICE": [],
        "NICER": ["COB", "CB1"],
        "NICEST": ["COB", "CB1", "CB2"],
    }


def test_the_fare_object_of_a_bundle_is_spec_shaped():
    nicest = Bundle.objects.get(code="NICEST")

    wire = bundle_terms(nicest).fare_wire(
        rbd="J", fare_basis_code="JOWNT", pax_ref_ids=["ADT-1", "CHD-1"]
    )

    assert wire == {
        "fareBasisCode": "JOWNT",
        "cabinTypeCode": "C",
        "cabinName": "Business",
        "rbd": "J",
        "priceClassRefId": "NICEST",
        "paxRefIds": ["ADT-1", "CHD-1"],
        "bundleName": "Nicest",
        "description": nicest.description,
        "benefits": nicest.benefits,
        "baggageDisclosures": nicest.baggage_disclosures,
        "penalties": nicest.penalties,
        "seatProfiles": nicest.seat_profiles,
    }


def test_bundles_for_sale_are_in_display_order_and_can_be_narrowed(django_assert_num_queries):
    with django_assert_num_queries(1):
        everything = bundles_for_sale()

    assert [b.code for b in everything] == ["NOFLEX", "NICE", "NICER", "NICEST"]
    assert [b.code for b in bundles_for_sale(codes=["NICEST", "NOFLEX"])] == ["NOFLEX", "NICEST"]
    assert bundles_for_sale(codes=[]) == []


def test_the_booking_class_ladders_run_from_the_top_class_down():
    ladders = booking_class_ladders()

    assert ladders["Y"] == ("Y", "B", "M", "H", "K", "L")
    assert ladders["C"] == ("J", "C", "D")


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("benefits", [{"label": "Wifi"}], "included is required"),
        ("benefits", [{"label": "Wifi", "included": "yes"}], "wrong type"),
        ("benefits", {"label": "Wifi"}, "must be a list"),
        ("penalties", [{"code": "X", "description": "d", "typeCode": "Refund"}], "typeCode"),
        ("penalties", [{"code": "X", "description": "d", "typeCode": "Change", "fee": 1}], "fee"),
        (
            "baggage_disclosures",
            [{"code": "CB", "description": "d", "ruleTypeCode": "Checked",
              "weightAllowance": {"maximumWeightMeasure": 23, "weightUnitOfMeasurement": "KG"}}],
            "weightAllowance",
        ),
        ("seat_profiles", [{"code": "STD"}], "description is required"),
    ],
)  # fmt: skip
def test_an_admin_edit_cannot_break_the_wire_shapes(field, value, message):
    bundle = Bundle.objects.get(code="NICE")
    setattr(bundle, field, value)

    with pytest.raises(ValidationError, match=message):
        bundle.full_clean()
