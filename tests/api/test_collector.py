"""A serving process's garbage collector (airline/collector.py): what was loaded is frozen,
young collections are spaced by GC_YOUNG_THRESHOLD."""

import gc

import pytest

from airline.collector import collector_settled


@pytest.fixture
def restored_collector():
    threshold = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*threshold)


def test_a_settled_process_has_frozen_what_it_loaded_and_spaces_young_collections(
    restored_collector, settings
):
    settings.GC_YOUNG_THRESHOLD = 12_345

    collector_settled()

    assert gc.get_freeze_count() > 0
    assert gc.get_threshold()[0] == 12_345
    assert gc.get_threshold()[1:] == (10, 10)
