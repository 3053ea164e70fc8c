"""The four default fare families of DESIGN.md §7 (data; edit them in the admin).

The JSON parts are SPEC.md §2.2 Fare sub-structures as they go on the wire. The data is
written out here rather than imported, so this migration means the same thing forever.
"""

from decimal import Decimal

from django.db import migrations

# --- Shared pieces --------------------------------------------------------------------
PERSONAL_ITEM = {
    "code": "PI",
    "ruleTypeCode": "CarryOn",
    "description": (
        "One personal item that fits under the seat in front, such as a purse or laptop bag"
    ),
    "dimensionAllowance": {
        "lengthUnitOfMeasurement": "INH",
        "lengthMeasure": 17,
        "widthMeasure": 13,
        "heightMeasure": 8,
    },
}
CARRY_ON_SIZE = {
    "lengthUnitOfMeasurement": "INH",
    "lengthMeasure": 22,
    "widthMeasure": 14,
    "heightMeasure": 9,
}
CHECKED_BAG_SIZE = {"lengthUnitOfMeasurement": "INH", "linearMeasure": 62}
CHECKED_BAG_WEIGHT = {"maximumWeightMeasure": 50, "weightUnitOfMeasurement": "LBR"}


def carry_on(included: bool) -> dict:
    return {
        "code": "COB",
        "ruleTypeCode": "CarryOn",
        "description": (
            "One carry-on bag for the overhead bin, included"
            if included
            else "Carry-on bag for the overhead bin available for a fee"
        ),
        "dimensionAllowance": CARRY_ON_SIZE,
    }


def checked_bags(included: int) -> dict:
    return {
        "code": "CB",
        "ruleTypeCode": "Checked",
        "description": (
            f"{included} checked bag{'s' if included > 1 else ''} included, "
            "each up to 50 lb and 62 linear inches; more for a fee"
            if included
            else "Checked bags available for a fee, each up to 50 lb and 62 linear inches"
        ),
        "weightAllowance": CHECKED_BAG_WEIGHT,
        "dimensionAllowance": CHECKED_BAG_SIZE,
    }


NO_CHANGES = {
    "code": "CHG",
    "typeCode": "Change",
    "description": "Flights and dates cannot be changed once booked.",
    "restrictions": [{"allowedModificationInd": False, "description": "No changes"}],
}
FREE_CHANGES = {
    "code": "CHG",
    "typeCode": "Change",
    "description": (
        "Change flights or dates up to departure with no change fee; any fare difference is paid."
    ),
    "fixedAmount": 0,
    "restrictions": [
        {
            "allowedModificationInd": True,
            "amount": 0,
            "minDaysBeforeDeparture": 0,
            "priceDifferenceApplies": True,
            "description": "No change fee up to departure; fare difference applies",
        }
    ],
}
TWENTY_FOUR_HOURS = (
    " Any paid booking cancelled within 24 hours of booking and at least 7 days before"
    " departure is refunded in full to the original payment."
)
# Basic economy credit on a lead-time scale: the earlier the cancellation, the more of the
# ticket value comes back as credit. The steps cover every day from 0 up, without overlap.
CREDIT_SCALE = {
    "code": "CANX",
    "typeCode": "Cancellation",
    "description": (
        "Cancel before departure for airline credit: the share of the ticket value returned"
        " depends on how far ahead you cancel. No credit for a no-show." + TWENTY_FOUR_HOURS
    ),
    "creditMethod": "AirlineCredit",
    "creditValidityMonths": 12,
    "creditIncludesAddOns": False,
    "fullReservationOnly": True,
    "restrictions": [
        {
            "minDaysBeforeDeparture": 60,
            "creditPercent": 100,
            "description": "60 days or more before departure: 100% credit",
        },
        {
            "minDaysBeforeDeparture": 30,
            "maxDaysBeforeDeparture": 59,
            "creditPercent": 75,
            "description": "30 to 59 days before departure: 75% credit",
        },
        {
            "minDaysBeforeDeparture": 14,
            "maxDaysBeforeDeparture": 29,
            "creditPercent": 50,
            "description": "14 to 29 days before departure: 50% credit",
        },
        {
            "minDaysBeforeDeparture": 7,
            "maxDaysBeforeDeparture": 13,
            "creditPercent": 25,
            "description": "7 to 13 days before departure: 25% credit",
        },
        {
            "minDaysBeforeDeparture": 0,
            "maxDaysBeforeDeparture": 6,
            "creditPercent": 0,
            "description": "Less than 7 days before departure: no credit",
        },
    ],
}
FULL_CREDIT = {
    "code": "CANX",
    "typeCode": "Cancellation",
    "description": (
        "Cancel up to departure for airline credit worth the full ticket value." + TWENTY_FOUR_HOURS
    ),
    "creditMethod": "AirlineCredit",
    "creditValidityMonths": 12,
    "creditIncludesAddOns": False,
    "restrictions": [
        {
            "minDaysBeforeDeparture": 0,
            "creditPercent": 100,
            "description": "Up to departure: 100% credit",
        }
    ],
}
FULL_REFUND = {
    "code": "CANX",
    "typeCode": "Cancellation",
    "description": "Cancel up to departure for a full refund to the original form of payment.",
    "creditMethod": "OriginalFormOfPayment",
    "creditIncludesAddOns": True,
    "restrictions": [
        {
            "minDaysBeforeDeparture": 0,
            "creditPercent": 100,
            "description": "Up to departure: 100% refund",
        }
    ],
}
ASSIGNED_SEAT = {
    "code": "ASSIGNED",
    "description": "Seat assigned free at check-in; choose one in advance for a fee",
}


def benefits(*, carry_on_bag, bags, seat, changes, cancellation) -> list[dict]:
    """The same six labels for every bundle, so a partner can show them side by side."""
    return [
        {"label": "Personal item", "included": True, "status": "Included", "quantity": 1},
        {
            "label": "Carry-on bag",
            "included": carry_on_bag,
            "status": "Included" if carry_on_bag else "For a fee",
        }
        | ({"quantity": 1} if carry_on_bag else {}),
        {
            "label": "Checked bags",
            "included": bool(bags),
            "status": "Included" if bags else "For a fee",
        }
        | ({"quantity": bags} if bags else {}),
        {"label": "Seat selection", "included": seat is not None, "status": seat or "For a fee"},
        {"label": "Changes", "included": changes is not None, "status": changes or "Not permitted"},
        {"label": "Cancellation", "included": cancellation[0], "status": cancellation[1]},
    ]


BUNDLES = [
    {
        "code": "NOFLEX",
        "name": "No Flex",
        "rank": 1,
        "cabin": "Y",
        "description": (
            "Our lowest fare: a personal item, a seat assigned at check-in, no changes;"
            " cancel for airline credit on a lead-time scale."
        ),
        "supplement": Decimal("0.00"),
        "carry_on_included": False,
        "checked_bags_included": 0,
        "seat_selection": "none",
        "changeable": False,
        "change_fee": Decimal("0.00"),
        "refund_method": "credit_scale",
        "fare_basis_suffix": "NF",
        "benefits": benefits(
            carry_on_bag=False,
            bags=0,
            seat=None,
            changes=None,
            cancellation=(False, "Partial airline credit, by how far ahead you cancel"),
        ),
        "baggage_disclosures": [PERSONAL_ITEM, carry_on(False), checked_bags(0)],
        "penalties": [NO_CHANGES, CREDIT_SCALE],
        "seat_profiles": [ASSIGNED_SEAT],
    },
    {
        "code": "NICE",
        "name": "Nice",
        "rank": 2,
        "cabin": "Y",
        "description": (
            "A personal item and the freedom to change: pay only the fare difference;"
            " cancel for full airline credit."
        ),
        "supplement": Decimal("30.00"),
        "carry_on_included": False,
        "checked_bags_included": 0,
        "seat_selection": "none",
        "changeable": True,
        "change_fee": Decimal("0.00"),
        "refund_method": "credit",
        "fare_basis_suffix": "NI",
        "benefits": benefits(
            carry_on_bag=False,
            bags=0,
            seat=None,
            changes="Fare difference only",
            cancellation=(True, "Full airline credit"),
        ),
        "baggage_disclosures": [PERSONAL_ITEM, carry_on(False), checked_bags(0)],
        "penalties": [FREE_CHANGES, FULL_CREDIT],
        "seat_profiles": [ASSIGNED_SEAT],
    },
    {
        "code": "NICER",
        "name": "Nicer",
        "rank": 3,
        "cabin": "Y",
        "description": (
            "Everything in Nice, plus a carry-on bag, one checked bag and a standard seat"
            " of your choice."
        ),
        "supplement": Decimal("70.00"),
        "carry_on_included": True,
        "checked_bags_included": 1,
        "seat_selection": "standard",
        "changeable": True,
        "change_fee": Decimal("0.00"),
        "refund_method": "credit",
        "fare_basis_suffix": "NR",
        "benefits": benefits(
            carry_on_bag=True,
            bags=1,
            seat="Standard seats",
            changes="Fare difference only",
            cancellation=(True, "Full airline credit"),
        ),
        "baggage_disclosures": [PERSONAL_ITEM, carry_on(True), checked_bags(1)],
        "penalties": [FREE_CHANGES, FULL_CREDIT],
        "seat_profiles": [
            {
                "code": "STANDARD",
                "description": "Any standard seat free; extra-legroom and exit-row seats for a fee",
                "characteristicCodes": ["W", "A", "9"],
            }
        ],
    },
    {
        "code": "NICEST",
        "name": "Nicest",
        "rank": 4,
        "cabin": "C",
        "description": (
            "Business cabin: any seat, a carry-on bag and two checked bags; change for the"
            " fare difference, or cancel for a full refund to your card."
        ),
        "supplement": Decimal("50.00"),
        "carry_on_included": True,
        "checked_bags_included": 2,
        "seat_selection": "premium",
        "changeable": True,
        "change_fee": Decimal("0.00"),
        "refund_method": "refund",
        "fare_basis_suffix": "NT",
        "benefits": benefits(
            carry_on_bag=True,
            bags=2,
            seat="Any seat",
            changes="Fare difference only",
            cancellation=(True, "Full refund to the original payment"),
        ),
        "baggage_disclosures": [PERSONAL_ITEM, carry_on(True), checked_bags(2)],
        "penalties": [FREE_CHANGES, FULL_REFUND],
        "seat_profiles": [
            {
                "code": "PREMIUM",
                "description": "Any seat in the Business cabin, free",
                "characteristicCodes": ["W", "A"],
            }
        ],
    },
]


def add_bundles(apps, schema_editor):
    Bundle = apps.get_model("fares", "Bundle")
    for data in BUNDLES:
        # update_or_create: a re-run after a partial rollback never duplicates a code.
        Bundle.objects.update_or_create(code=data["code"], defaults=data)


def remove_bundles(apps, schema_editor):
    apps.get_model("fares", "Bundle").objects.filter(code__in=[b["code"] for b in BUNDLES]).delete()


class Migration(migrations.Migration):
    dependencies = [("fares", "0001_initial")]
    operations = [migrations.RunPython(add_bundles, remove_bundles)]
