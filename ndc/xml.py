"""Reading NDC documents safely, validating them against IATA's 21.3 schemas, and the
small helpers that write them (DESIGN.md §9).

A request body is read twice, both times by libxml2 with entities, DTDs and the network
off (once, when its raw text alone shows the first pass could refuse nothing). The
first pass builds nothing: a parser target counts elements and depth and
refuses, at the first offending event, a DOCTYPE (so no entity is ever declared, let
alone expanded or fetched), a document nested deeper than MAX_DEPTH or larger than
MAX_ELEMENTS, and an XML signature. Before either, a body with more `<` or `=` than
such a document can hold is refused unread. Only a document that passed is parsed again into a
tree, which is then validated against the message's schema.
"""

import functools
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

from django.conf import settings
from lxml import etree

from airline.api.errors import ApiError, Err

# DESIGN.md §9 / ../shared/ndc-21.3/README.md: the root and its direct children are in the
# message namespace, everything below in the common types namespace.
MSG = "http://www.iata.org/IATA/2015/EASD/00/IATA_OffersAndOrdersMessage"
CNS = "http://www.iata.org/IATA/2015/EASD/00/IATA_OffersAndOrdersCommonTypes"
NSMAP = {None: MSG, "cns": CNS}
XMLDSIG = "http://www.w3.org/2000/09/xmldsig#"

MAX_BODY_BYTES = settings.DATA_UPLOAD_MAX_MEMORY_SIZE  # 1 MiB, SPEC.md §8
# NDC requests nest about 8 levels and hold tens of elements; the limits leave room and
# keep every later walk (schema validation, XPath, mapping) small and shallow.
MAX_DEPTH = 64
MAX_ELEMENTS = 5_000
# Every tag and attribute costs the first pass a Python call or a dict entry, and the
# schema an error each when it is wrong: a body of 1 MiB of `<X/>` or of attributes cost
# 40 to 96 ms of CPU, over the 50 ms per MiB any request may cost. So the raw
# text is counted first, at C speed, and refused unparsed when it holds more `<` than
# MAX_ELEMENTS elements with end tags can, or more `=` than MAX_ATTRIBUTES (a `=` in text
# counts too: a cheap upper bound; NDC requests hold a few dozen of each).
MAX_ATTRIBUTES = 2_000


def _parser(**options: Any) -> etree.XMLParser:
    """libxml2 with everything that reaches outside the document switched off."""
    return etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        dtd_validation=False,
        huge_tree=False,
        **options,
    )


class _Refused(Exception):
    """Raised inside the first pass to stop libxml2 at the offending event."""


class _Guard:
    """lxml parser target of the first pass: it builds nothing, only counts, and stops
    the parser at the first DOCTYPE, element too deep, element too many or signature."""

    def __init__(self) -> None:
        self.open: list[str] = []  # local names of the elements open now
        self.elements = 0  # elements started: how far the parser got before it stopped
        self.refusal: ApiError | None = None

    def _refuse(self, err: ApiError) -> None:
        self.refusal = err
        raise _Refused

    def doctype(self, name: str, public_id: str | None, system_url: str | None) -> None:
        # Reported as soon as `<!DOCTYPE name` is read, before its internal subset: no
        # entity declared in it is ever seen, no external id ever opened.
        self._refuse(
            ApiError(Err.VALIDATION, "A DOCTYPE or entity declaration is not accepted in NDC")
        )

    def start(self, tag: str, attrib: Any) -> None:
        self.elements += 1
        self.open.append(tag.rpartition("}")[2])  # the local name, without a QName each
        if len(self.open) > MAX_DEPTH:
            self._refuse(
                ApiError(Err.VALIDATION, f"The document nests deeper than {MAX_DEPTH} elements")
            )
        if self.elements > MAX_ELEMENTS:
            self._refuse(
                ApiError(Err.VALIDATION, f"The document has more than {MAX_ELEMENTS} elements")
            )
        if self.open[-1] == "Signature":
            # SPEC.md §4.14: signatures are refused, never verified; xmldsig's or any
            # namespace's element of that name.
            self._refuse(
                ApiError(
                    Err.INVALID_VALUE,
                    "XML digital signatures are not accepted (Signature element)",
                    path="/" + "/".join(self.open),
                )
            )

    def end(self, tag: str) -> None:
        self.open.pop()

    # No data, comment or pi method: lxml calls a target only for the events it has
    # methods for, and text between 5,000 elements would be as many calls for nothing.

    def close(self) -> None:
        return None


def parse_request(body: bytes) -> etree._Element:
    """The root element of a request body that passed the first pass; ERR-1005 (or
    ERR-1004 for a signature) otherwise. `body` is at most MAX_BODY_BYTES."""
    if not body.strip():
        raise ApiError(Err.VALIDATION, "The request body is empty; send an NDC request document")
    if body.count(b"<") > 2 * MAX_ELEMENTS + 8:  # the prolog's <?xml?>, comments...
        raise ApiError(Err.VALIDATION, f"The document has more than {MAX_ELEMENTS} elements")
    if body.count(b"=") > MAX_ATTRIBUTES:
        raise ApiError(
            Err.VALIDATION,
            f"The document has more than {MAX_ATTRIBUTES} attributes "
            "(every '=' of the text counted)",
        )
    if not _plainly_within_limits(body):
        _first_pass(body)
    try:
        return etree.fromstring(body, _tree_parser())
    except (etree.XMLSyntaxError, ValueError) as exc:
        raise ApiError(Err.VALIDATION, f"The body is not well-formed XML: {exc}") from None


def _plainly_within_limits(body: bytes) -> bool:
    """Whether the raw text alone shows that the first pass has nothing to refuse: no
    `<!` (so no DOCTYPE), no `Signature` anywhere, and too few `<` for more than
    MAX_DEPTH levels of a well-formed document (n levels take 2n - 1 tags) or for
    MAX_ELEMENTS elements. Deeper text with its end tags left out is no well-formed
    document: the tree parse refuses it as such (ERR-1005 all the same). A search or a
    price request is such a document, and for it the first pass's Python call per
    element costs ten times the C parse that builds the tree."""
    return body.count(b"<") <= 2 * MAX_DEPTH and b"<!" not in body and b"Signature" not in body


def _first_pass(body: bytes) -> None:
    """ERR-1005 (or ERR-1004 for a signature) when the guard refuses the document, or it
    is not well-formed XML."""
    guard = _Guard()
    try:
        etree.fromstring(body, _parser(target=guard))
    except (_Refused, etree.XMLSyntaxError, ValueError) as exc:
        # lxml reports what a target raised as a syntax error of the aborted parse:
        # the guard's own refusal is the answer when there is one.
        if guard.refusal is not None:
            raise guard.refusal from None
        raise ApiError(Err.VALIDATION, f"The body is not well-formed XML: {exc}") from None
    if guard.refusal is not None:
        raise guard.refusal


@functools.cache
def _tree_parser() -> etree.XMLParser:
    return _parser(remove_comments=True, remove_pis=True)


# --- Schemas -------------------------------------------------------------------------


@functools.cache
def schema(root: str) -> etree.XMLSchema:
    """The compiled 21.3 schema of message `root` (IATA_AirShoppingRQ, ...), read once per
    process on first use (~60 ms each) from settings.NDC_SCHEMA_DIR. Its imports are
    read from that directory only, never from the network."""
    path = Path(settings.NDC_SCHEMA_DIR) / f"{root}.xsd"
    return etree.XMLSchema(etree.parse(str(path), _parser()))


def validate(document: etree._Element, root: str) -> None:
    """ERR-1005 unless `document` is a valid `root` message; DescText names the failing
    element by its XPath (local names, positions where siblings share a name)."""
    if document.tag != f"{{{MSG}}}{root}":
        name = etree.QName(document)
        where = f"/{name.localname}"
        if name.namespace == MSG:
            why = f"expected the root element {root} in namespace {MSG}"
        else:
            # Another NDC version (or no NDC at all): say which one we serve, not just
            # that the root is unexpected.
            version = other_version(document)
            seen = f"NDC {version}" if version else f"namespace {name.namespace or '(none)'}"
            why = (
                f"only IATA NDC 21.3 is served, and this document is {seen}; send the 21.3 "
                f"message {root} in namespace {MSG}"
            )
        raise ApiError(Err.VALIDATION, f"{where}: {why}", path=where)
    checker = schema(root)
    if checker.validate(document):
        return
    error = checker.error_log[0]
    where = _readable_path(document, error.path) or "/" + root
    raise ApiError(Err.VALIDATION, f"{where}: {_readable_message(error.message)}", path=where)


_NAMESPACE_YEAR = re.compile(r"/20(\d\d)\.(\d)(?:/|$)")


def other_version(document: etree._Element) -> str | None:
    """The NDC version a message not of 21.3 says it is: its PayloadAttributes
    VersionNumber (18.2 on), its root's Version attribute (up to 18.1), or the year in
    its namespace (`.../2019.2/...` is 19.2); None when it says nothing we can read."""
    stated = [
        (item.text or "").strip()
        for child in document
        if isinstance(child.tag, str) and etree.QName(child).localname == "PayloadAttributes"
        for item in child
        if isinstance(item.tag, str) and etree.QName(item).localname == "VersionNumber"
    ]
    if stated and stated[0]:
        return stated[0][:10]
    if document.get("Version"):
        return document.get("Version").strip()[:10]
    found = _NAMESPACE_YEAR.search(etree.QName(document).namespace or "")
    return f"{found[1]}.{found[2]}" if found else None


def _readable_path(document: etree._Element, libxml_path: str | None) -> str | None:
    """libxml2's path (`/*/*[2]/cns:OriginDestCriteria`, in the document's prefixes) as
    `/IATA_AirShoppingRQ/Request/.../OriginDestCriteria[2]`."""
    if not libxml_path:
        return None
    # The prefixes the path uses, as the root declares them; only a document that
    # declares one further down has every element's read (one dict each: milliseconds
    # over the thousands of elements a hostile body may hold).
    namespaces = {p: ns for p, ns in document.nsmap.items() if p}
    try:
        found = _xpath(document, libxml_path, namespaces)
    except etree.XPathEvalError:
        for element in document.iter():
            namespaces.update({p: ns for p, ns in element.nsmap.items() if p})
        try:
            found = _xpath(document, libxml_path, namespaces)
        except etree.XPathError:
            return libxml_path
    except etree.XPathError:
        return libxml_path
    if not found or not isinstance(found[0], etree._Element):
        return libxml_path
    return element_path(found[0])


def _xpath(document: etree._Element, path: str, namespaces: dict[str, str]) -> list:
    return document.getroottree().xpath(path, namespaces=namespaces)


def element_path(element: etree._Element) -> str:
    """An element's XPath by local names, with a position only where needed."""
    steps = []
    while element is not None:
        name = etree.QName(element).localname
        parent = element.getparent()
        if parent is not None:
            same = [e for e in parent if e.tag == element.tag]
            if len(same) > 1:
                name += f"[{same.index(element) + 1}]"
        steps.append(name)
        element = parent
    return "/" + "/".join(reversed(steps))


def refused(element: etree._Element, why: str, *, path: str | None = None) -> ApiError:
    """ERR-1005 naming the request element at fault by its XPath (or `path`), in the
    error's `path` and at the head of its description, as every NDC refusal does."""
    where = path or element_path(element)
    return ApiError(Err.VALIDATION, f"{where}: {why}", path=where)


_CLARK = re.compile(r"\{[^}]*\}")


def _readable_message(message: str) -> str:
    return _CLARK.sub("", message).strip()


# --- Reading --------------------------------------------------------------------------


def c(name: str) -> str:
    """The Clark name of a common types element."""
    return f"{{{CNS}}}{name}"


def text(element: etree._Element | None, *path: str) -> str | None:
    """The stripped text of the common-types descendant at `path`, or None."""
    for name in path:
        if element is None:
            return None
        element = element.find(c(name))
    if element is None or element.text is None:
        return None
    return element.text.strip()


# --- Writing --------------------------------------------------------------------------


def sub(parent: etree._Element, name: str, value: Any = None, **attrib: str) -> etree._Element:
    """Append common-types element `name` to `parent`, with text `value` when given."""
    element = etree.SubElement(parent, c(name), attrib or None)
    if value is not None:
        element.text = value if isinstance(value, str) else _text_of(value)
    return element


def message_root(root: str) -> etree._Element:
    return etree.Element(f"{{{MSG}}}{root}", nsmap=NSMAP)


def msg_sub(parent: etree._Element, name: str) -> etree._Element:
    """A direct child of the root: in the message namespace."""
    return etree.SubElement(parent, f"{{{MSG}}}{name}")


def amount(parent: etree._Element, name: str, money: dict[str, Any]) -> etree._Element:
    """A MonetaryAmount of the JSON wire (`{amount, currency}`) as an AmountType element."""
    return sub(parent, name, f"{decimal(money['amount']):.2f}", CurCode=money["currency"])


def serialize(document: etree._Element) -> bytes:
    return etree.tostring(document, xml_declaration=True, encoding="UTF-8")


# --- Writing as text -------------------------------------------------------------------
# A large RS (an AirShoppingRS holds thousands of elements) is written as text: building
# it element by element in lxml took ~2 µs an element, most of the request. The text is
# what lxml writes for the same tree, byte for byte (tests/ndc/test_writing.py): the same
# declaration and namespace prefixes, `<cns:X/>` for an element with neither text nor
# children, and libxml2's escaping.

DECLARATION = "<?xml version='1.0' encoding='UTF-8'?>\n"

# A character XML 1.0 cannot hold (lxml refuses them too), or one libxml2 escapes.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_TEXT_SPECIAL = re.compile("[&<>\r]|" + _NOT_XML.pattern)
_ATTRIBUTE_SPECIAL = re.compile('[&<>"\t\n\r]|' + _NOT_XML.pattern)


def escape(value: str) -> str:
    """`value` as element text; ValueError, as lxml's, for a character XML cannot hold."""
    if _TEXT_SPECIAL.search(value) is None:
        return value
    _check_xml(value)
    return (
        value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\r", "&#13;")
    )


def escape_attribute(value: str) -> str:
    """`value` as a double-quoted attribute value."""
    if _ATTRIBUTE_SPECIAL.search(value) is None:
        return value
    _check_xml(value)
    value = value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    value = value.replace('"', "&quot;").replace("\r", "&#13;").replace("\n", "&#10;")
    return value.replace("\t", "&#9;")


def _check_xml(value: str) -> None:
    if _NOT_XML.search(value):
        raise ValueError(
            "All strings must be XML compatible: Unicode or ASCII, no NULL bytes or control "
            "characters"
        )


def leaf(name: str, value: Any, **attrib: str) -> str:
    """Common-types element `name` with text `value`, as text (`sub`'s twin)."""
    attributes = ""
    if attrib:
        attributes = "".join(f' {k}="{escape_attribute(v)}"' for k, v in attrib.items())
    if value is None:
        return f"<cns:{name}{attributes}/>"
    if not isinstance(value, str):
        value = _text_of(value)
    if _TEXT_SPECIAL.search(value) is not None:
        value = escape(value)
    return f"<cns:{name}{attributes}>{value}</cns:{name}>"


def node(name: str, *content: str) -> str:
    """Common-types element `name` around `content`, elements already written as text."""
    inner = "".join(content)
    return f"<cns:{name}>{inner}</cns:{name}>" if inner else f"<cns:{name}/>"


def msg_node(name: str, *content: str) -> str:
    """A direct child of the root (message namespace) around `content`."""
    inner = "".join(content)
    return f"<{name}>{inner}</{name}>" if inner else f"<{name}/>"


def amount_text(name: str, money: dict[str, Any]) -> str:
    """`amount`'s twin: a MonetaryAmount of the JSON wire as an AmountType element."""
    return leaf(name, f"{decimal(money['amount']):.2f}", CurCode=money["currency"])


def decimal(value: Any) -> Decimal:
    """An amount of the JSON wire, exact: a float as JSON read it (its shortest repr),
    a Decimal, int or string as it is."""
    return Decimal(repr(value) if isinstance(value, float) else value)


def text_document(root: str, *children: str) -> bytes:
    """Message `root` around its direct children written as text (`msg_node`), as
    `serialize` writes a `message_root` document."""
    return (
        f'{DECLARATION}<{root} xmlns="{MSG}" xmlns:cns="{CNS}">{"".join(children)}</{root}>'
    ).encode()


def append_text(parent: etree._Element, content: str) -> None:
    """Append common-types elements written as text to `parent`: for callers that build
    their document in lxml around a part written as text."""
    holder = etree.fromstring(f'<holder xmlns:cns="{CNS}">{content}</holder>')
    parent.extend(holder[:])


def _text_of(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
