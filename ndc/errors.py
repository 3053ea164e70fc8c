"""The NDC/XML rendering of the one error registry (airline/api/errors.py; DESIGN.md §9).

An error is the message's RS document with an `Error` element for each error of the
request (several when a request had several field errors: ApiError.errors), answered
with the HTTP status JSON gives the first. `Error` holds `Code` (the ERR code),
`DescText` (what went wrong, with the failing element's XPath when there is one),
`LangCode` EN, `StatusText` (the registry's title), `TagText` (the XPath alone) and
`TypeCode` (the error's reason, JSON's `error.reason`, when it has one: 21.3 makes
TypeCode the bilaterally agreed error type; else the registry's error key, the
`errorKey` of the JSON auth shape); the RS's
`PayloadAttributes/TrxID` is the x-request-id, as `error.requestId` is in JSON.

Which RS: the endpoint's own response root (IATA_AirShoppingRS for AirShopping, ...).
An answer that belongs to no message — an endpoint name we do not serve, a version we
do not serve, any other path under /ndc/ — is an IATA_AirShoppingRS: 21.3 has no
message-neutral error document (IATA_Acknowledgement carries no Error), and AirShopping
is where every NDC exchange starts.
"""

from airline.api import clock
from airline.api.errors import ApiError
from ndc import xml
from ndc.messages import MESSAGES

GENERIC_ERROR_ROOT = "IATA_AirShoppingRS"
NDC_VERSION = "21.3"


def error_document(err: ApiError, *, path: str, request_id: str | None) -> bytes:
    """The RS document for `err` on the NDC path `path`."""
    root = xml.message_root(error_root(path))
    for each in err.errors or (err,):
        error = xml.msg_sub(root, "Error")
        xml.sub(error, "Code", each.code)
        xml.sub(error, "DescText", each.description)
        xml.sub(error, "LangCode", "EN")
        xml.sub(error, "StatusText", each.spec.title)
        if each.path:
            xml.sub(error, "TagText", each.path)
        xml.sub(error, "TypeCode", each.reason or each.spec.error_key)
    payload_attributes(root, request_id)
    return xml.serialize(root)


def payload_attributes(root, request_id: str | None) -> None:
    """PayloadAttributes of every RS: when, which schema version, and the request id."""
    attributes = xml.msg_sub(root, "PayloadAttributes")
    xml.sub(attributes, "Timestamp", clock.format_utc(clock.now()))
    if request_id:
        xml.sub(attributes, "TrxID", request_id)
    xml.sub(attributes, "VersionNumber", NDC_VERSION)


def error_root(path: str) -> str:
    """The RS root for errors on `path` (`/ndc/{version}/{EndpointName}`)."""
    parts = path.split("/")
    if len(parts) == 4 and parts[3] in MESSAGES:
        return MESSAGES[parts[3]].response_root
    return GENERIC_ERROR_ROOT
