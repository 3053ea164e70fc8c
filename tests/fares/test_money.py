"""Money and SPEC.md §1's Price object: one rounding, exact sums, the wire shape."""

from decimal import Decimal

import pytest

from airline.fares.money import Fee, Price, Tax, money, price_sum


def test_money_rounds_half_up_to_cents():
    assert money(Decimal("7.545")) == Decimal("7.55")  # half-even would say 7.54
    assert money(Decimal("7.544")) == Decimal("7.54")
    assert money(5) == Decimal("5.00")
    assert money("0.015") == Decimal("0.02")


def test_money_refuses_floats():
    with pytest.raises(TypeError):
        money(7.5)  # type: ignore[arg-type]


def test_a_price_refuses_amounts_that_are_not_whole_cents():
    with pytest.raises(ValueError, match="cents"):
        Price(base=Decimal("1.005"))
    with pytest.raises(ValueError, match="cents"):
        Tax("US", "US Transportation Tax", Decimal("0.125"))


def test_a_fee_type_is_one_of_the_spec_types():
    with pytest.raises(ValueError, match="fee type"):
        Fee("Booking", "", "", Decimal("1.00"))


def test_the_total_is_base_plus_taxes_plus_fees():
    price = Price(
        base=Decimal("100.00"),
        taxes=(Tax("US", "US Transportation Tax", Decimal("7.50")),),
        fees=(Fee("SeatFee", "SEAT", "Seat 12A", Decimal("15.00")),),
    )

    assert price.total == Decimal("122.50")


def test_times_and_sum_merge_taxes_by_code_in_first_seen_order():
    adult = Price(
        base=Decimal("100.00"),
        taxes=(Tax("US", "US tax", Decimal("7.50")), Tax("ZP", "Segment", Decimal("5.30"))),
    )
    other = Price(base=Decimal("10.00"), taxes=(Tax("ZP", "Segment", Decimal("5.30")),))

    total = price_sum([adult.times(3), other])

    assert total.base == Decimal("310.00")
    assert [(t.code, t.amount) for t in total.taxes] == [
        ("US", Decimal("22.50")),
        ("ZP", Decimal("21.20")),
    ]
    assert adult + other == price_sum([adult, other])
    assert price_sum([]) == Price.zero()


def test_to_wire_is_spec_price_object_with_two_place_decimals():
    price = Price(
        base=Decimal("100.00"),
        taxes=(Tax("US", "US Transportation Tax", Decimal("7.50")),),
        fees=(Fee("BaggageFee", "", "", Decimal("35.00")),),
    )

    wire = price.to_wire()

    assert wire == {
        "total": {"amount": Decimal("142.50"), "currency": "USD"},
        "base": {"amount": Decimal("100.00"), "currency": "USD"},
        "taxes": [
            {
                "code": "US",
                "description": "US Transportation Tax",
                "amount": {"amount": Decimal("7.50"), "currency": "USD"},
            }
        ],
        # code and description have no source value, so they are absent (SPEC.md §1)
        "fees": [{"type": "BaggageFee", "amount": {"amount": Decimal("35.00"), "currency": "USD"}}],
    }
    assert str(wire["base"]["amount"]) == "100.00"


def test_a_zero_price_on_the_wire_still_has_every_field():
    assert Price.zero().to_wire() == {
        "total": {"amount": Decimal("0.00"), "currency": "USD"},
        "base": {"amount": Decimal("0.00"), "currency": "USD"},
        "taxes": [],
        "fees": [],
    }
