"""The partners' error table (docs/partners/errors.md) is what scripts/error_table.py writes
from the one error registry: a code, status, title or reason added or changed there and
not republished fails here."""

from scripts.error_table import PAGE, render


def test_the_committed_error_table_is_what_the_registry_writes():
    assert PAGE.read_text() == render(), "run: python scripts/error_table.py"


def test_the_table_names_every_code_and_reason():
    from airline.api.errors import REGISTRY, Reason

    page = PAGE.read_text()
    assert all(f"| {code} | {spec.status} |" in page for code, spec in REGISTRY.items())
    assert all(f"| `{reason.value}` |" in page for reason in Reason)
