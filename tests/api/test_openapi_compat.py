"""The published OpenAPI document (docs/api/openapi-v1.json) against the served one: no
breaking change within v1 (docs/changelog.md "The version rule"), by Atlassian's
openapi-diff (npm, pinned by tools/openapi-diff/package-lock.json; `make test` installs it,
and so does this module when it is missing). The tool reads both documents whole and
compares every request and response body as JSON Schema: a body a client could send that
is now refused, or a response that may now carry what a client did not expect, is
breaking; an added endpoint, optional request field or response field is not."""

import copy
import json
import subprocess
from pathlib import Path

import pytest
from django.conf import settings

from airline.api.management.commands.publish_openapi import PUBLISHED, served_document

TOOL_DIR = Path(settings.BASE_DIR) / "tools" / "openapi-diff"
TOOL = TOOL_DIR / "node_modules" / ".bin" / "openapi-diff"


@pytest.fixture(scope="module")
def openapi_diff():
    """The pinned tool, installed from the lock file when this checkout has not got it."""
    if not TOOL.exists():
        subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=TOOL_DIR,
            check=True,
            timeout=600,
        )
    return TOOL


def breaking(tool: Path, source: dict, destination: dict, tmp_path: Path) -> list[dict]:
    """openapi-diff's breaking differences from `source` to `destination` (none: [])."""
    paths = []
    for name, document in (("source", source), ("destination", destination)):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(document))
        paths.append(str(path))
    # Its report goes to a file: Node cuts short what it writes to a pipe when it exits.
    report_path = tmp_path / "report.txt"
    with report_path.open("w") as report_file:
        done = subprocess.run(
            [str(tool), *paths],
            stdout=report_file,
            stderr=subprocess.PIPE,
            text=True,
            timeout=900,
            check=False,
        )
    output = report_path.read_text()
    if done.returncode == 0:
        assert "Breaking changes found" not in output, output[:2000]
        return []
    # Exit code 1: the first line says so, the rest is the JSON report.
    heading, _, report = output.partition("\n")
    assert done.returncode == 1, done.stderr[-2000:] or output[:2000]
    assert heading.startswith("Breaking changes found"), output[:2000]
    return json.loads(report)["breakingDifferences"]


def published() -> dict:
    return json.loads(PUBLISHED.read_text())


def test_the_tool_reports_a_response_field_removed_as_breaking(openapi_diff, tmp_path):
    changed = copy.deepcopy(published())
    credit = changed["components"]["schemas"]["OrderCredit"]
    del credit["properties"]["remaining"]
    credit["required"].remove("remaining")

    found = breaking(openapi_diff, published(), changed, tmp_path)

    assert found, "removing OrderCredit.remaining was not reported"
    codes = {difference["code"] for difference in found}
    assert codes == {"response.body.scope.add"}, codes
    locations = {
        detail["location"]
        for difference in found
        for detail in difference["sourceSpecEntityDetails"]
    }
    view = "paths./json/v1/orders/{orderId}.get.responses.200.content.application/json.schema"
    assert view in locations, sorted(locations)


def test_the_served_document_breaks_nothing_published(openapi_diff, tmp_path):
    assert breaking(openapi_diff, published(), served_document(), tmp_path) == []
