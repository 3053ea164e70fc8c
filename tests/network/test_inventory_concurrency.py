"""Many sessions selling the last seats at once, on PostgreSQL (DESIGN.md §2, §6)."""

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection

from airline.network.inventory import SoldOut, inventory_sell
from airline.network.models import LegInventory
from tests.network.factories import FlightLegFactory

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


def sell_concurrently(leg_ids: list[int], rbd: str, attempts: int, threads: int = 16) -> int:
    """`attempts` one-seat sales by `threads` threads that start together, each with its
    own database connection; returns how many succeeded."""
    start = threading.Barrier(threads)

    def worker(share: int) -> int:
        start.wait(timeout=30)
        succeeded = 0
        try:
            for _ in range(share):
                try:
                    inventory_sell(leg_ids=leg_ids, rbd=rbd, seats=1)
                    succeeded += 1
                except SoldOut:
                    pass
        finally:
            connection.close()
        return succeeded

    shares = [attempts // threads + (1 if i < attempts % threads else 0) for i in range(threads)]
    with ThreadPoolExecutor(max_workers=threads) as pool:
        return sum(pool.map(worker, shares))


def test_racing_sales_of_the_last_seats_never_oversell():
    assert connection.vendor == "postgresql"
    leg = FlightLegFactory()
    inventory_sell(leg_ids=[leg.pk], rbd="Y", seats=55)  # 5 left

    sold = sell_concurrently([leg.pk], "Y", attempts=40)

    assert sold == 5
    assert LegInventory.objects.get(leg=leg, rbd="Y").sold == 60


def test_racing_sales_respect_a_class_limit():
    leg = FlightLegFactory()

    sold = sell_concurrently([leg.pk], "L", attempts=30)  # L may sell 12

    assert sold == 12
    assert dict(LegInventory.objects.filter(leg=leg).values_list("rbd", "sold"))["L"] == 12


def test_racing_multi_leg_sales_take_seats_on_both_legs_or_neither():
    first = FlightLegFactory(origin_id="PVD", destination_id="CHS")
    second = FlightLegFactory(
        origin_id="CHS", destination_id="TPA", flight_number=first.flight_number, leg_sequence=2
    )
    inventory_sell(leg_ids=[second.pk], rbd="Y", seats=57)  # 3 left on the second leg

    sold = sell_concurrently([first.pk, second.pk], "Y", attempts=24)

    assert sold == 3
    assert LegInventory.objects.get(leg=first, rbd="Y").sold == 3
    assert LegInventory.objects.get(leg=second, rbd="Y").sold == 60
