"""benchmarks.profile sorts each profiled function into a step by its file's path
(STEPS). A module that moves leaves its pattern matching nothing, and its CPU silently
falls to "service logic": the tables still add up, so the smoke run cannot see it. Here
every part of a pattern that names the project's own modules must name a file that
exists, and a function it names must be defined there. The patterns are read from the
source, not imported: importing the benchmark sets its scratch environment."""

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("airline", "offers", "orders", "ndc", "sellers", "webhooks")
OURS = re.compile(r"^/\(?(" + "|".join(PACKAGES) + r")[/|]")


def _patterns() -> list[str]:
    tree = ast.parse((REPO / "benchmarks" / "profile.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "STEPS":
            return [ast.literal_eval(entry.elts[0]) for entry in node.value.elts]
    raise AssertionError("benchmarks/profile.py has no STEPS table")


def _alternatives(pattern: str) -> list[str]:
    """The pattern's top-level `|` alternatives."""
    parts, depth, start = [], 0, 0
    for at, char in enumerate(pattern):
        if char == "(" and pattern[at - 1 : at] != "\\":
            depth += 1
        elif char == ")" and pattern[at - 1 : at] != "\\":
            depth -= 1
        elif char == "|" and depth == 0:
            parts.append(pattern[start:at])
            start = at + 1
    return [*parts, pattern[start:]]


def _own_alternatives() -> list[str]:
    return [
        alternative
        for pattern in _patterns()
        for alternative in _alternatives(pattern)
        if OURS.match(alternative)
    ]


SOURCES = sorted(
    "/" + str(path.relative_to(REPO))
    for package in PACKAGES
    for path in (REPO / package).rglob("*.py")
    if "migrations" not in path.parts
)


def test_the_table_names_the_project_own_modules():
    assert len(_own_alternatives()) >= 15


@pytest.mark.parametrize("alternative", _own_alternatives())
def test_each_step_pattern_names_a_module_that_exists(alternative):
    path_part, _, names = alternative.partition(":")
    matching = [source for source in SOURCES if re.search(path_part, source)]
    assert matching, f"{alternative!r} matches no module of the project"
    # A pattern ending in :(name|name)$ names functions: each is defined in a match.
    for name in re.findall(r"\w+", names.removesuffix("$")):
        assert any(
            re.search(rf"^\s*def {name}\(", (REPO / source[1:]).read_text(), re.M)
            for source in matching
        ), f"{alternative!r}: no {name}() in {matching}"
