"""Writes the partners' error table, docs/partners/errors.md, from the one error registry
(airline/api/errors.py): every ERR code with its HTTP status, title and auth `errorKey`,
and every `error.reason` with the comment that explains it there. The page is committed;
tests/docs/test_error_table.py fails when it differs from what this writes, so the table
cannot drift from the registry.

    python scripts/error_table.py           # rewrite docs/partners/errors.md
    python scripts/error_table.py --check   # exit 1 if the committed page is out of date
"""

import inspect
import io
import os
import sys
import tokenize
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "docs" / "partners" / "errors.md"

INTRO = """\
# Error codes

<!-- Written by `python scripts/error_table.py` from the service's error registry: do not
edit by hand, run it again. -->

Every error answer carries one of these codes. Under `/json/` the body is
`{"data": null, "error": {code, title, description, path?, fields?, reason?, requestId}}`;
on `/auth/...`, and for ERR-8000, ERR-8001 and ERR-8002 everywhere, it is the auth shape
`{message, errorKey, error, requestId}`, whose `errorKey` is the last column; under `/ndc/`
the same code is an NDC `Error` element ([NDC](ndc.md)). Codes are stable; titles are for
people, and `description` says what went wrong this time. How to read `path` and `fields`,
and what to do with a 503: [Requests and answers](conventions.md).

"""

RETRY = """
A code marked *Retry-After* comes with that header: send the same request again after
that many seconds, with the same `Idempotency-Key` for a write.
"""

REASONS = """
## Why a change was refused: `error.reason`

Every refusal of reshop, quote order and change order has the one code ERR-4002. Such an
error carries a stable `reason` beside the code, so that a client can act on it without
reading the description (in NDC it is the `Error`'s `TypeCode`); the answers of a card
payment cut short carry one too. New reasons may be added within v1: treat an unknown one
as "no reason given".

| `reason` | What it means |
|---|---|
"""


def _setup_django() -> None:
    sys.path.insert(0, str(REPO))
    os.environ.setdefault("AIRLINE_ENV", "test")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "airline.settings")
    import django

    django.setup()


def _reason_comments(reason_class: type) -> dict[str, str]:
    """Each member's comment in the registry's source: the one on its line, else the
    comment lines just above it."""
    source = inspect.getsource(reason_class)
    comments: dict[str, str] = {}
    above: list[str] = []
    line_comment: dict[int, str] = {}
    names: dict[int, str] = {}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        row = token.start[0]
        if token.type == tokenize.COMMENT:
            line_comment[row] = token.string.lstrip("# ").strip()
        elif token.type == tokenize.NAME and token.start[1] == 4 and row not in names:
            names[row] = token.string
    for row in range(1, source.count("\n") + 2):
        if row in names and names[row] in reason_class.__members__:
            text = line_comment.get(row) or " ".join(above)
            comments[names[row]] = text
            above = []
        elif row in line_comment and row not in names:
            above.append(line_comment[row])
        else:
            above = []
    return comments


def render() -> str:
    """The page, from the registry as it is."""
    _setup_django()
    from airline.api.errors import REGISTRY, Reason

    lines = [
        INTRO,
        "| Code | HTTP status | Title | `errorKey` | Retry-After |\n",
        "|---|---|---|---|---|\n",
    ]
    for code in sorted(REGISTRY):
        spec = REGISTRY[code]
        retry = "yes" if spec.status in (429, 503) else ""
        lines.append(f"| {code} | {spec.status} | {spec.title} | `{spec.error_key}` | {retry} |\n")
    lines.append(RETRY)
    lines.append(REASONS)
    comments = _reason_comments(Reason)
    for reason in Reason:
        text = comments[reason.name].replace("|", "\\|")
        lines.append(f"| `{reason.value}` | {text[:1].upper() + text[1:]} |\n")
    return "".join(lines)


def main() -> int:
    text = render()
    if "--check" in sys.argv[1:]:
        if PAGE.read_text() != text:
            print(f"{PAGE.relative_to(REPO)} is out of date: run python scripts/error_table.py")
            return 1
        return 0
    PAGE.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
