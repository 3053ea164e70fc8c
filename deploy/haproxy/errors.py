"""HAProxy's own error answers in the API's formats (docs/operators/cluster.md "Cluster"), written
by the app's renderers: scripts/cluster runs this at start.

    python deploy/haproxy/errors.py OUTDIR

When HAProxy answers by itself (a node killed with a request in flight: 502; no node
up: 503; a node too slow: 504), its default page is HTML, which no API client can read.
These files are the bodies of the app's own ERR-9000 (503, SPEC.md §7), rendered by the
app's error renderers (airline.api.responses.error_body, ndc.errors.error_document)
with placeholders put where each answer differs, then written as HAProxy log-format
(`http-error ... lf-file`) so HAProxy fills those in per request:

- `json.lf`: `/json/...`'s envelope, `{"data": null, "error": {...}}`;
- `auth.lf`: `/auth/...`'s auth shape;
- `ndc.lf`: the NDC error RS, its root the endpoint's RS (`ndc-roots.map`: path ->
  root, as ndc.errors.error_root picks it), its PayloadAttributes/Timestamp now;
- the request id (`error.requestId`, `requestId`, `TrxID`) is the x-request-id
  HAProxy passed on (txn.request_id: the client's when valid, else one it made).
"""

import re
import sys
from pathlib import Path
from types import SimpleNamespace

REPO = Path(__file__).resolve().parents[2]
DESCRIPTION = "The service is unavailable; retry later"
REQUEST_ID = "HAPROXYREQUESTID"  # placeholders: text no rendering would produce
ROOT = "HAPROXYNDCROOT"
STAMP = "2000-01-01T00:00:00Z"
LF_REQUEST_ID = "%[var(txn.request_id)]"
LF_ROOT = "%[var(txn.ndc_root)]"
LF_NOW = "%[date,utime(%Y-%m-%dT%H:%M:%SZ)]"


def _literal(text: str) -> str:
    """`text` as log-format: a `%` is written `%%`."""
    return text.replace("%", "%%")


def render(out: Path) -> None:
    from airline.api import clock
    from airline.api.errors import ApiError, Err
    from airline.api.responses import dumps, error_body
    from ndc import errors as ndc_errors
    from ndc.endpoints import ENDPOINTS

    err = ApiError(Err.SERVICE_UNAVAILABLE, DESCRIPTION)
    out.mkdir(parents=True, exist_ok=True)
    for name, path in (("json", "/json/v1/orders"), ("auth", "/auth/token")):
        body = dumps(error_body(SimpleNamespace(path=path, request_id=REQUEST_ID), err))
        text = _literal(body.decode())
        assert text.count(REQUEST_ID) == 1, text
        (out / f"{name}.lf").write_text(text.replace(REQUEST_ID, LF_REQUEST_ID))

    stopped = clock.format_utc
    clock.format_utc = lambda moment, **kwargs: STAMP  # the one field HAProxy dates
    try:
        document = ndc_errors.error_document(
            err, path="/ndc/v1/AirShopping", request_id=REQUEST_ID
        ).decode()
    finally:
        clock.format_utc = stopped
    generic = ndc_errors.GENERIC_ERROR_ROOT
    document = re.sub(rf"\b{generic}\b", ROOT, document)
    text = _literal(document)
    for placeholder, value in ((REQUEST_ID, LF_REQUEST_ID), (ROOT, LF_ROOT), (STAMP, LF_NOW)):
        assert placeholder in text, (placeholder, text)
        text = text.replace(placeholder, value)
    (out / "ndc.lf").write_text(text)

    # Path -> RS root: /ndc/{version}/{EndpointName}, as ndc.errors.error_root reads it.
    (out / "ndc-roots.map").write_text(
        "".join(
            f"^/ndc/[^/]*/{re.escape(name)}$ {endpoint.response_root}\n"
            for name, endpoint in ENDPOINTS.items()
        )
    )


def main() -> None:
    import os

    sys.path.insert(0, str(REPO))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "airline.settings")
    import django

    django.setup()
    render(Path(sys.argv[1]))


if __name__ == "__main__":
    main()
