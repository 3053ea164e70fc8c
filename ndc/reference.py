"""The NDC guide's reference tables (docs/partners/ndc.md), made from the table the service runs on
(ndc/endpoints.py) so that the guide cannot disagree with it: which messages are served,
what each answers, what key it needs and its JSON twin, and for each message the JSON
field every request element becomes (the same tables that turn a service's field error
into the element's XPath). The MkDocs hook scripts/mkdocs_hooks.py puts them in place of
the markers below; tests/ndc/test_reference.py holds the guide to them."""

from ndc.endpoints import ENDPOINTS

ENDPOINTS_MARKER = "<!-- generated: ndc endpoints -->"
FIELDS_MARKER = "<!-- generated: ndc fields -->"

# What each permission class asks of the caller's key, in the guide's words.
_NEEDS = {
    "IsSeller": "any key of the seller",
    "CanBook": "a full-permission key",
    "HasAgencyCode": "a key with an agency code",
}


def endpoints_table() -> str:
    """One row per message served under /ndc/{version}/."""
    rows = [
        "| Endpoint | Request → response | Key | Idempotency-Key | As JSON |",
        "|---|---|---|---|---|",
    ]
    for name, endpoint in ENDPOINTS.items():
        rows.append(
            f"| `{name}` | {endpoint.request_root} → {endpoint.response_root} "
            f"| {_NEEDS[endpoint.permission.__name__]} "
            f"| {'yes' if endpoint.idempotent else ''} "
            f"| {', '.join(f'`{route}`' for route in endpoint.json_twin)} |"
        )
    return "\n".join(rows)


def fields_reference() -> str:
    """For each message, a table of JSON field paths and the request elements they come
    from (errors name those elements in `TagText`)."""
    parts = []
    for name, endpoint in ENDPOINTS.items():
        parts.append(f"#### {name}\n")
        if not endpoint.paths:
            parts.append("No request field reaches a service by a JSON name.\n")
            continue
        parts.append("| JSON field | Request element |\n|---|---|")
        parts.extend(f"| `{field}` | `{xpath}` |" for field, xpath in endpoint.paths.items())
        parts.append("")
    return "\n".join(parts)


def render(markdown: str) -> str:
    """The guide with the generated tables in place of their markers."""
    return markdown.replace(ENDPOINTS_MARKER, endpoints_table()).replace(
        FIELDS_MARKER, fields_reference()
    )
