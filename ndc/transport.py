"""The NDC entry point's transport rules (SPEC.md §4.14, §8): content type, body size,
then the hardened parse and the message's schema (ndc/xml.py)."""

from django.http import HttpRequest
from lxml import etree

from airline.api.errors import ApiError, Err
from ndc.xml import MAX_BODY_BYTES, parse_request, validate

XML_MEDIA_TYPES = ("application/xml", "text/xml")


def read_document(request: HttpRequest, root: str) -> etree._Element:
    """The request's validated `root` message. ERR-1010 for another content type (a
    charset parameter is fine), ERR-1009 for a body over 1 MiB — by its Content-Length
    before anything is read, and by what was read, at most one byte more than the limit
    — then ERR-1005 / ERR-1004 from the parse and the schema."""
    media_type = request.META.get("CONTENT_TYPE", "").split(";", 1)[0].strip().lower()
    if media_type not in XML_MEDIA_TYPES:
        raise ApiError(
            Err.NDC_CONTENT_TYPE,
            f"Send the body as application/xml or text/xml, not {media_type or 'nothing'!r}",
        )
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        declared = 0
    if declared > MAX_BODY_BYTES:
        raise _too_large()
    body = request.read(MAX_BODY_BYTES + 1)
    if len(body) > MAX_BODY_BYTES:
        raise _too_large()
    document = parse_request(body)
    validate(document, root)
    return document


def _too_large() -> ApiError:
    return ApiError(Err.BODY_TOO_LARGE, f"The body exceeds {MAX_BODY_BYTES} bytes (1 MiB)")
