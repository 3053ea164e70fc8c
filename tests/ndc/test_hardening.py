"""Hostile documents (DESIGN.md §9): entity expansion, external entities, depth, size.
Each is a 4xx, and is refused by the first pass, which builds no tree: the parser stops
at the DOCTYPE before any element (so no entity is ever declared, expanded or fetched),
at the first element too deep or too many, and the tree-building pass never runs. A
document whose raw text shows it has none of those (no `<!`, no Signature, too few tags
to nest too deep) skips the first pass."""

from datetime import timedelta

import pytest

from ndc import xml
from tests.ndc.conftest import air_shopping, ndc_error_of, post

pytestmark = pytest.mark.django_db

BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<IATA_AirShoppingRQ xmlns="http://www.iata.org/IATA/2015/EASD/00/IATA_OffersAndOrdersMessage"
>&lol9;</IATA_AirShoppingRQ>"""

EXTERNAL_FILE = b"""<?xml version="1.0"?>
<!DOCTYPE r [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<IATA_AirShoppingRQ xmlns="http://www.iata.org/IATA/2015/EASD/00/IATA_OffersAndOrdersMessage"
>&xxe;</IATA_AirShoppingRQ>"""

EXTERNAL_URL = b"""<?xml version="1.0"?>
<!DOCTYPE r SYSTEM "http://127.0.0.1:1/x.dtd" [<!ENTITY xxe SYSTEM "http://127.0.0.1:1/x">]>
<IATA_AirShoppingRQ xmlns="http://www.iata.org/IATA/2015/EASD/00/IATA_OffersAndOrdersMessage"
>&xxe;</IATA_AirShoppingRQ>"""

PARAMETER_ENTITY = b"""<?xml version="1.0"?>
<!DOCTYPE r [<!ENTITY % p SYSTEM "file:///etc/passwd"> %p;]>
<IATA_AirShoppingRQ xmlns="http://www.iata.org/IATA/2015/EASD/00/IATA_OffersAndOrdersMessage"/>"""


@pytest.fixture
def passes(monkeypatch):
    """What each pass of ndc.xml.parse_request did: the first pass's guards (how many
    elements each saw start) and how many times the tree-building pass ran."""
    record = {"guards": [], "trees": 0}

    class Recorded(xml._Guard):
        def __init__(self):
            super().__init__()
            record["guards"].append(self)

    tree_parser = xml._tree_parser

    def counted_tree_parser():
        record["trees"] += 1
        return tree_parser()

    monkeypatch.setattr(xml, "_Guard", Recorded)
    monkeypatch.setattr(xml, "_tree_parser", counted_tree_parser)
    return record


@pytest.mark.parametrize(
    "body", [BILLION_LAUGHS, EXTERNAL_FILE, EXTERNAL_URL, PARAMETER_ENTITY], ids=lambda b: b[40:70]
)
def test_a_doctype_is_refused_before_the_first_element(api, auth, passes, body):
    response = post(api, "AirShopping", body, auth)

    fields = ndc_error_of(response, 422, "ERR-1005")
    assert "DOCTYPE" in fields["DescText"]
    assert b"root:" not in response.content  # nothing of /etc/passwd
    [guard] = passes["guards"]
    assert guard.elements == 0
    assert passes["trees"] == 0


def test_an_undeclared_entity_is_refused(api, auth, passes):
    body = b'<IATA_AirShoppingRQ xmlns="x">&lol;</IATA_AirShoppingRQ>'

    fields = ndc_error_of(post(api, "AirShopping", body, auth), 422, "ERR-1005")

    assert "not well-formed" in fields["DescText"]
    assert "Entity 'lol' not defined" in fields["DescText"]


def test_a_plain_small_document_is_parsed_once(api, auth, network, passes):
    response = post(
        api, "AirShopping", air_shopping(("PVD", "CHS", network + timedelta(days=5))), auth
    )

    assert response.status_code == 200
    assert passes["guards"] == []  # no DOCTYPE, no Signature, too few tags to nest 65 deep
    assert passes["trees"] == 1


def test_text_nested_deep_without_its_end_tags_is_no_document(api, auth, passes):
    body = b"<a>" * (xml.MAX_DEPTH + 20)  # few enough `<` to skip the first pass

    fields = ndc_error_of(post(api, "AirShopping", body, auth), 422, "ERR-1005")

    assert "not well-formed" in fields["DescText"]
    assert passes["guards"] == []


def test_a_small_document_naming_a_signature_goes_through_the_first_pass(api, auth, passes):
    body = b'<IATA_AirShoppingRQ xmlns="x"><Signature/></IATA_AirShoppingRQ>'

    fields = ndc_error_of(post(api, "AirShopping", body, auth), 400, "ERR-1004")

    assert fields["TagText"] == "/IATA_AirShoppingRQ/Signature"
    assert len(passes["guards"]) == 1
    assert passes["trees"] == 0


def test_a_document_4000_deep_stops_the_parser_at_depth_65(api, auth, passes):
    body = b"<a>" * 4_000 + b"</a>" * 4_000  # few enough tags to be parsed at all

    fields = ndc_error_of(post(api, "AirShopping", body, auth), 422, "ERR-1005")

    assert "deeper than 64" in fields["DescText"]
    [guard] = passes["guards"]
    assert guard.elements == xml.MAX_DEPTH + 1
    assert passes["trees"] == 0


def test_too_many_elements_stop_the_parser_at_the_first_over_the_limit(api, auth, passes):
    # Self-closed: few enough `<` to be parsed, too many elements to be read whole.
    body = b"<a>" + b"<b/>" * (2 * xml.MAX_ELEMENTS) + b"</a>"

    fields = ndc_error_of(post(api, "AirShopping", body, auth), 422, "ERR-1005")

    assert "more than 5000 elements" in fields["DescText"]
    [guard] = passes["guards"]
    assert guard.elements == xml.MAX_ELEMENTS + 1
    assert passes["trees"] == 0


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (b"<a>" + b"<b/>" * 50_000 + b"</a>", "more than 5000 elements"),
        (b"<a " + b" ".join(b"a%d='1'" % n for n in range(3000)) + b"/>", "2000 attributes"),
        (
            b"<a>" + b"".join(b"<p%d:b xmlns:p%d='u'/>" % (n, n) for n in range(3000)) + b"</a>",
            "2000 attributes",
        ),
    ],
    ids=["elements", "attributes", "namespaces"],
)
def test_a_body_of_too_many_tags_or_attributes_is_refused_unparsed(api, auth, passes, body, said):
    fields = ndc_error_of(post(api, "AirShopping", body, auth), 422, "ERR-1005")

    assert said in fields["DescText"]
    assert passes["guards"] == []
    assert passes["trees"] == 0


def test_a_1_mib_attribute_is_refused_by_its_size_before_parsing(api, auth, network, passes):
    document = air_shopping(("PVD", "CHS", network))
    body = document.replace(
        b"<IATA_AirShoppingRQ ", b'<IATA_AirShoppingRQ a="' + b"x" * 2**20 + b'" '
    )

    ndc_error_of(post(api, "AirShopping", body, auth), 413, "ERR-1009")

    assert passes["guards"] == []


def test_an_attribute_just_under_the_limit_is_refused_by_the_schema(api, auth, network, passes):
    document = air_shopping(("PVD", "CHS", network))
    filler = 2**20 - len(document) - len(b' a=""')
    body = document.replace(
        b"<IATA_AirShoppingRQ ", b'<IATA_AirShoppingRQ a="' + b"x" * filler + b'" ', 1
    )
    assert len(body) == 2**20

    fields = ndc_error_of(post(api, "AirShopping", body, auth), 422, "ERR-1005")

    assert fields["TagText"] == "/IATA_AirShoppingRQ"
