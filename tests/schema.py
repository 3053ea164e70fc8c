"""Answers checked against the OpenAPI document the service serves (/json/v1/schema),
as a generated client reads them: every required field present, every value of its
declared type and enum, and (strict) no field the document does not declare, which a
generated model would drop."""

import copy
from functools import cache
from typing import Any

import jsonschema
from django.test import Client


@cache
def _components() -> dict[str, Any]:
    document = (
        Client().get("/json/v1/schema", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    )
    return document["components"]


def _strict(node: Any) -> Any:
    """OpenAPI 3.0 as JSON Schema: `nullable` allows null; with strict objects, an object
    of declared properties allows no others."""
    if isinstance(node, list):
        return [_strict(n) for n in node]
    if not isinstance(node, dict):
        return node
    node = {k: _strict(v) for k, v in node.items()}
    if node.pop("nullable", False) and "type" in node:
        node["type"] = [node["type"], "null"]
    if node.get("type") == "object" and "properties" in node:
        node.setdefault("additionalProperties", False)
    return node


def assert_matches(component: str, body: Any) -> None:
    """`body` is valid as the document's `components.schemas[component]`, with no
    undeclared field (AssertionError naming each place that is not)."""
    components = _strict(copy.deepcopy(_components()))
    validator = jsonschema.Draft4Validator(
        {"$ref": f"#/components/schemas/{component}", "components": components}
    )
    errors = [
        f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}"
        for e in validator.iter_errors(body)
    ]
    assert not errors, "\n".join(errors[:20])
