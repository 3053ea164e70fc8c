"""Money invariants every Price and every offer must keep (DESIGN.md §4, §11)."""

from decimal import Decimal


def amount(money: dict) -> Decimal:
    assert money["currency"] == "USD"
    return Decimal(str(money["amount"]))


def assert_price(price: dict) -> Decimal:
    """total = base + taxes + fees; every amount in cents; returns the total."""
    assert set(price) >= {"total", "base", "taxes", "fees"}
    parts = (
        amount(price["base"])
        + sum(amount(t["amount"]) for t in price["taxes"])
        + sum(amount(f["amount"]) for f in price["fees"])
    )
    total = amount(price["total"])
    assert total == parts, price
    assert total == total.quantize(Decimal("0.01"))
    return total


def assert_item(item: dict) -> Decimal:
    """The item's price holds, and count x per-passenger price sums to it."""
    total = assert_price(item["totalPrice"])
    by_passengers = sum(
        row["count"] * assert_price(row["price"]) for row in item["passengerPrices"]
    )
    assert by_passengers == total, item
    assert sum(len(row["paxRefIds"]) for row in item["passengerPrices"]) == sum(
        row["count"] for row in item["passengerPrices"]
    )
    return total


def assert_offer(offer: dict) -> None:
    items = offer.get("offerItems") or offer.get("items")
    assert sum(assert_item(item) for item in items) == assert_price(offer["totalPrice"])
