"""The partners' pages speak of the API, not of the code behind it (STYLE.md §13): no
module path, dotted module name or test file of this repository in their text (the NDC
example documents, `ndc/examples/`, are documents a partner is given, not code). Code
blocks (a partner's own code) and HTML comments (notes for whoever edits the page) are
not read."""

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PARTNERS = REPO / "docs" / "partners"
HIDDEN = re.compile(r"^```.*?^```$|<!--.*?-->", re.S | re.M)
MODULE = re.compile(
    r"\b[a-z_]+(?:/[a-z_]+)*\.py\b"
    r"|\btests/"
    r"|`(?:airline|sellers|offers|orders|ndc|webhooks)[./](?!examples/)[a-z_]"
)


def test_partner_pages_name_no_module_of_the_code():
    found = [
        f"{page.relative_to(REPO)}: {match.group(0)!r}"
        for page in sorted(PARTNERS.glob("*.md"))
        for match in MODULE.finditer(HIDDEN.sub("", page.read_text()))
    ]
    assert not found, "\n".join(found)
