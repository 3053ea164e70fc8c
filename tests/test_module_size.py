"""Modules a newcomer can hold in their head (STYLE.md "Practices" 1): no module of the
app packages passes MOST lines, and one past LONG lines says in its docstring why it is
one module, as a sentence that starts "It is one module because" and gives the reason.
Past MOST lines a module becomes a package split by concern. Migrations are generated
and left out."""

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("airline", "sellers", "offers", "orders", "ndc", "webhooks", "benchmarks")
LONG = 500
MOST = 800
# The sentence: the words, then a reason of at least four words up to its full stop.
REASON = re.compile(r"\bIt is one module because\s+\S+(?:\s+\S+){3,}?[^.]*\.")


def modules() -> list[Path]:
    return sorted(
        path
        for package in PACKAGES
        for path in (REPO / package).rglob("*.py")
        if "migrations" not in path.relative_to(REPO).parts
    )


def lines(path: Path) -> int:
    return len(path.read_text().splitlines())


def test_the_app_packages_are_found():
    assert len(modules()) > 100
    assert REPO / "orders" / "models" / "order.py" in modules()


@pytest.mark.parametrize(
    "path", [p for p in modules() if lines(p) > LONG], ids=lambda p: str(p.relative_to(REPO))
)
def test_a_long_module_says_why_it_is_one(path):
    count = lines(path)
    assert count <= MOST, f"{count} lines: past {MOST}, make it a package split by concern"
    docstring = ast.get_docstring(ast.parse(path.read_text())) or ""
    says_why = REASON.search(" ".join(docstring.split())) is not None
    assert says_why, (
        f"{count} lines: its docstring needs a sentence 'It is one module because ...' "
        f"giving the reason, or split it below {LONG}"
    )


def test_the_reason_is_a_sentence_with_a_reason():
    assert REASON.search("It is one module because the reader and writer share a table.")
    assert not REASON.search("It is one module because reasons.")
    assert not REASON.search("One module.")
