"""Code that points readers to the manual (STYLE.md §12: `docs/page.md "Heading"`) names a
page that exists and, when it names one, a heading of that page. Comments and docstrings in
the apps, tests, scripts, deploy files, benchmarks and build files are read; a heading may
wrap onto the next comment line."""

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DIRS = (
    "airline",
    "sellers",
    "offers",
    "orders",
    "ndc",
    "webhooks",
    "tests",
    "scripts",
    "deploy",
    "benchmarks",
    "tools",
    "requirements",
    ".ci",
)
FILES = ("Makefile", "README.md", "pyproject.toml", "mkdocs.yml", "gunicorn.conf.py", "manage.py")
SUFFIXES = {".py", ".sh", ".conf", ".cfg", ".toml", ".yml", ".yaml", ".j2", ".ini", ".txt", ""}
REFERENCE = re.compile(
    r"docs/(?P<page>[A-Za-z0-9_./-]+\.md)"
    r'(?:[ \t]*,?[ \t]*\n?[ \t]*(?:#+[ \t]*)?"(?P<heading>[^"]{1,120})")?'
)
CONTINUATION = re.compile(r"\s*\n\s*(?:#+\s*)?")
FIGURES = REPO / "docs" / "benchmarks" / "figures"
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*$")


def sources() -> list[Path]:
    found = [REPO / name for name in FILES if (REPO / name).exists()]
    for directory in DIRS:
        for path in sorted((REPO / directory).rglob("*")):
            if (
                path.is_file()
                and path.suffix in SUFFIXES
                and "node_modules" not in path.parts
                and "__pycache__" not in path.parts
            ):
                found.append(path)
    return found


def headings(page: Path) -> set[str]:
    """The page's headings as a reader sees them (code spans unquoted), outside code blocks."""
    found, fenced = set(), False
    for line in page.read_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (match := HEADING.match(line)):
            found.add(match.group(1).replace("`", ""))
    return found


def names(heading: str, of_page: set[str]) -> bool:
    """A reference names a heading by its whole text, or by the words before its colon or
    its parenthesis ("Cluster" for "Cluster: load balancer, ...")."""
    return any(
        text == heading or text.startswith((heading + ":", heading + " (")) for text in of_page
    )


def test_every_manual_reference_names_a_page_and_heading_that_exist():
    wrong = []
    for path in sources():
        if path == Path(__file__):
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        for match in REFERENCE.finditer(text):
            page = REPO / "docs" / match["page"]
            where = f"{path.relative_to(REPO)}:{text.count(chr(10), 0, match.start()) + 1}"
            if not page.is_file():
                wrong.append(f"{where}: no page docs/{match['page']}")
            elif match["heading"]:
                heading = CONTINUATION.sub(" ", match["heading"]).strip()
                if page.parent == FIGURES:
                    # A figures fragment is a table the benchmarks page includes: the
                    # reference quotes its caption.
                    if heading not in page.read_text():
                        wrong.append(f'{where}: docs/{match["page"]} does not say "{heading}"')
                elif not names(heading, headings(page)):
                    wrong.append(f'{where}: docs/{match["page"]} has no heading "{heading}"')
    assert not wrong, "\n".join(wrong)
