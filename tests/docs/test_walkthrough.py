"""The partners' walkthrough (docs/partners/walkthrough.md) runs as written: its shell
blocks, in page order, in one bash against a real gunicorn on PostgreSQL and Redis with the
demo airline seeded as `make run` seeds it. Only the two lines a reader fills in (`BASE=`,
`KEY=`) are replaced; each later step reads what it needs from the answers of the earlier
ones through the variables the page itself sets, so a curl line that no longer works, or a
field an answer no longer has, fails here."""

import re
import subprocess
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from orders.models import Order
from sellers.models import Partner
from tests.e2e.servers import REPO, gunicorn, server_env_on_test_database, wait_until_ready
from tests.sellers.factories import ApiKeyFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True, serialized_rollback=True)]

PAGE = REPO / "docs" / "partners" / "walkthrough.md"
BLOCK = re.compile(r"^```sh\n(.*?)^```$", re.S | re.M)
STEP = "::walkthrough step "


def walkthrough_script(base: str, key: str) -> tuple[str, list[str]]:
    """The page's shell blocks as one bash script that announces each block, and the
    blocks themselves."""
    blocks = BLOCK.findall(PAGE.read_text())
    lines = ["set -euo pipefail"]
    for number, block in enumerate(blocks):
        block = re.sub(r"^BASE=.*$", f"BASE={base}", block, flags=re.M)
        block = re.sub(r"^KEY=.*$", f"KEY='{key}'", block, flags=re.M)
        lines += [f"echo '{STEP}{number}'", block]
    return "\n".join(lines), blocks


def test_the_walkthrough_books_changes_and_cancels_an_order(tmp_path: Path):
    call_command("seed_demo", stdout=StringIO())
    issued = ApiKeyFactory(partner=Partner.objects.get(code="DEMO"), agency_code="WALK")

    with gunicorn(server_env_on_test_database(), tmp_path / "server.log") as server:
        assert wait_until_ready(server).status_code == 200
        script, blocks = walkthrough_script(server.url, issued.raw)
        result = subprocess.run(
            ["bash", "-c", script],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )

    assert len(blocks) >= 10, "the walkthrough's shell blocks were not found"
    assert "BASE=" in blocks[0], blocks[0]
    assert "KEY=" in blocks[0], blocks[0]
    steps = re.findall(rf"^{STEP}(\d+)$", result.stdout, flags=re.M)
    reached = int(steps[-1]) if steps else 0
    answers = sorted(tmp_path.glob("*.json"), key=lambda path: path.stat().st_mtime)
    last_answer = answers[-1].read_text()[:3000] if answers else ""
    assert result.returncode == 0, (
        f"step {reached} failed:\n{blocks[reached]}\n--- stdout\n{result.stdout[-3000:]}"
        f"\n--- stderr\n{result.stderr[-3000:]}\n--- last answer\n{last_answer}"
    )
    assert reached == len(blocks) - 1, result.stdout
    order = Order.objects.get(seller__partner__code="DEMO", agency_code="WALK")
    assert order.status == "CANCELLED"
    assert order.services.filter(code="CB1").exists()
    assert order.services.filter(seat_row__isnull=False).exists()
