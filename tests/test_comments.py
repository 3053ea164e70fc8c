"""Comments and docstrings say what the code is and why, and point readers to the manual
(STYLE.md §12): no issue numbers, which tell history, and no README sections, which the
README no longer has (the manual's pages are in docs/)."""

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
APPS = ("airline", "sellers", "offers", "orders", "ndc", "webhooks")
HISTORY = re.compile(r'\bissue \d+|README "')


def test_app_code_cites_no_issue_and_no_readme_section():
    found = [
        f"{path.relative_to(REPO)}:{number}: {line.strip()}"
        for app in APPS
        for path in sorted((REPO / app).rglob("*.py"))
        if "migrations" not in path.parts
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if HISTORY.search(line)
    ]
    assert not found, "\n".join(found)
