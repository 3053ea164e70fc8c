"""The NDC entry point's transport (SPEC.md §4.14, §7, §9; DESIGN.md §9): endpoints,
versions, methods, credentials, content type, size and signatures, every refusal an RS
document with one Error that validates against IATA's schema, at JSON's HTTP status."""

from datetime import timedelta

import pytest
from lxml import etree

from ndc.endpoints import ENDPOINTS
from ndc.messages import MESSAGES
from tests.conftest import bearer
from tests.ndc.conftest import (
    EXAMPLES,
    NS,
    air_shopping,
    example,
    ndc_error_of,
    offer_price,
    post,
    xml_of,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def shopping(network):
    return air_shopping(("PVD", "CHS", network))


class TestRoutes:
    def test_an_endpoint_name_we_do_not_serve_is_err_1000_before_authentication(self, api):
        response = post(api, "OrderTeleport", b"<x/>", {})

        fields = ndc_error_of(response, 404, "ERR-1000", root="IATA_AirShoppingRS")
        assert "AirShopping" in fields["DescText"]

    @pytest.mark.parametrize("name", sorted(ENDPOINTS))
    def test_an_error_on_an_endpoint_is_its_response_root(self, api, name):
        """Without a token: the refusal is an error document of the message's own RS."""
        response = post(api, name, b"<x/>", {})

        ndc_error_of(response, 401, "ERR-8000", root=ENDPOINTS[name].response_root)

    def test_every_message_of_the_table_is_served(self):
        assert set(MESSAGES) == set(ENDPOINTS)
        assert ENDPOINTS["OrderQuote"].response_root == "IATA_OrderReshopRS"

    @pytest.mark.parametrize("version", ["v9", "V1", "1", "latest"])
    def test_an_unsupported_version_is_err_1002(self, api, auth, shopping, version):
        response = api.generic(
            "POST", f"/ndc/{version}/AirShopping", shopping, content_type="application/xml", **auth
        )

        ndc_error_of(response, 404, "ERR-1002")

    @pytest.mark.parametrize("version", ["v0", "v1", "v2"])
    def test_every_supported_version_answers_the_same(self, api, auth, shopping, version):
        response = api.generic(
            "POST", f"/ndc/{version}/AirShopping", shopping, content_type="application/xml", **auth
        )

        xml_of(response, 200, "IATA_AirShoppingRS")

    @pytest.mark.parametrize("method", ["get", "put", "patch", "delete", "options", "head"])
    @pytest.mark.parametrize(
        ("endpoint", "root"),
        [("AirShopping", "IATA_AirShoppingRS"), ("OfferPrice", "IATA_OfferPriceRS")],
    )
    def test_every_method_but_post_is_err_1001_in_the_messages_rs(
        self, api, auth, method, endpoint, root
    ):
        response = getattr(api, method)(f"/ndc/v1/{endpoint}", **auth)

        assert response["Allow"] == "POST"
        if method == "head":
            assert response.status_code == 405
            return
        ndc_error_of(response, 405, "ERR-1001", root=root)

    def test_a_path_below_an_endpoint_is_err_1000(self, api, auth):
        ndc_error_of(api.post("/ndc/v1/AirShopping/more", **auth), 404, "ERR-1000")


class TestCredentials:
    def test_no_credentials_is_err_8000(self, api, shopping, network):
        response = post(api, "AirShopping", shopping, {})

        fields = ndc_error_of(response, 401, "ERR-8000")
        assert fields["TypeCode"] == "Unauthenticated"
        assert response["WWW-Authenticate"].startswith("Bearer")

    def test_an_api_key_alone_is_no_substitute_for_the_token(
        self, api, partner_key, shopping, network
    ):
        response = post(api, "AirShopping", shopping, {"HTTP_X_API_KEY": partner_key.raw})

        ndc_error_of(response, 401, "ERR-8000")

    def test_a_bad_token_is_err_8000(self, api, shopping, network):
        ndc_error_of(post(api, "AirShopping", shopping, bearer("not-a-token")), 401, "ERR-8000")

    def test_an_api_key_beside_the_token_has_no_effect(self, api, auth, shopping):
        response = post(api, "AirShopping", shopping, {**auth, "HTTP_X_API_KEY": "junk"})

        xml_of(response, 200, "IATA_AirShoppingRS")

    def test_the_message_rs_carries_errors_of_its_endpoint(self, api, network):
        body = offer_price(("a.1", "a.1.1"), ("b.1", "b.1.1"))

        ndc_error_of(post(api, "OfferPrice", body, {}), 401, "ERR-8000", root="IATA_OfferPriceRS")


class TestContentType:
    @pytest.mark.parametrize(
        "content_type", ["application/json", "text/plain", "application/xml-dtd", ""]
    )
    def test_anything_but_xml_is_err_1010(self, api, auth, shopping, content_type):
        response = post(api, "AirShopping", shopping, auth, content_type=content_type)

        ndc_error_of(response, 415, "ERR-1010")

    @pytest.mark.parametrize(
        "content_type",
        ["application/xml", "text/xml", "text/xml; charset=utf-8", "Application/XML"],
    )
    def test_xml_types_with_or_without_a_charset_are_read(self, api, auth, shopping, content_type):
        response = post(api, "AirShopping", shopping, auth, content_type=content_type)

        xml_of(response, 200, "IATA_AirShoppingRS")


class TestSize:
    def test_a_body_over_1_mib_is_err_1009(self, api, auth, shopping):
        padded = shopping.replace(
            b"<cns:Ordinal>", b"<!--" + b"x" * (1024 * 1024) + b"--><cns:Ordinal>", 1
        )

        ndc_error_of(post(api, "AirShopping", padded, auth), 413, "ERR-1009")

    def test_a_body_of_exactly_1_mib_is_read(self, api, auth, shopping):
        filler = 1024 * 1024 - len(shopping) - len(b"<!---->")
        padded = shopping + b"<!--" + b"x" * filler + b"-->"
        assert len(padded) == 1024 * 1024

        xml_of(post(api, "AirShopping", padded, auth), 200, "IATA_AirShoppingRS")

    def test_a_declared_length_over_1_mib_is_refused_before_the_body_is_read(
        self, api, auth, shopping, monkeypatch
    ):
        from ndc import transport

        read = []
        monkeypatch.setattr(transport, "parse_request", lambda body: read.append(body))

        response = post(api, "AirShopping", shopping, auth, CONTENT_LENGTH=str(2 * 1024 * 1024))

        ndc_error_of(response, 413, "ERR-1009")
        assert read == []


class TestSignatures:
    @pytest.mark.parametrize(
        "namespace", ["http://www.w3.org/2000/09/xmldsig#", "urn:example:any", None]
    )
    def test_a_signature_element_is_err_1004(self, api, auth, network, namespace):
        document = example("AirShoppingRQ")
        tag = f"{{{namespace}}}Signature" if namespace else "Signature"
        etree.SubElement(document, tag).text = "c2lnbmF0dXJl"

        response = post(api, "AirShopping", etree.tostring(document), auth)

        fields = ndc_error_of(response, 400, "ERR-1004")
        assert fields["TagText"] == "/IATA_AirShoppingRQ/Signature"


class TestErrorDocuments:
    def test_the_request_id_is_echoed_in_the_header_and_the_payload(self, api, network):
        response = post(api, "AirShopping", b"<x/>", {}, HTTP_X_REQUEST_ID="trace-42")

        document = xml_of(response, 401, "IATA_AirShoppingRS")
        assert response["x-request-id"] == "trace-42"
        assert document.findtext("m:PayloadAttributes/c:TrxID", namespaces=NS) == "trace-42"
        assert response["Cache-Control"] == "no-store"

    def test_a_document_that_breaks_the_schema_names_the_failing_element(self, api, auth, network):
        document = example("AirShoppingRQ")
        date = document.find(".//c:OriginDestCriteria[2]/c:OriginDepCriteria/c:Date", NS)
        date.text = "next tuesday"

        response = post(api, "AirShopping", etree.tostring(document), auth)

        fields = ndc_error_of(response, 422, "ERR-1005")
        where = (
            "/IATA_AirShoppingRQ/Request/FlightRequest/FlightRequestOriginDestinationsCriteria"
            "/OriginDestCriteria[2]/OriginDepCriteria/Date"
        )
        assert fields["TagText"] == where
        assert fields["DescText"].startswith(where + ": ")

    def test_a_missing_required_element_is_named(self, api, auth, network):
        document = example("AirShoppingRQ")
        document.remove(document.find("m:DistributionChain", NS))

        fields = ndc_error_of(
            post(api, "AirShopping", etree.tostring(document), auth), 422, "ERR-1005"
        )

        assert "DistributionChain" in fields["DescText"]

    def test_another_messages_document_is_err_1005(self, api, auth, network):
        body = offer_price(("a.1", "a.1.1"))

        fields = ndc_error_of(post(api, "AirShopping", body, auth), 422, "ERR-1005")

        assert "IATA_AirShoppingRQ" in fields["DescText"]

    @pytest.mark.parametrize("body", [b"", b"   ", b"not xml", b"<a><b></a>", b"\x00"])
    def test_a_body_that_is_not_xml_is_err_1005(self, api, auth, body):
        ndc_error_of(post(api, "AirShopping", body, auth), 422, "ERR-1005")

    def test_a_service_error_names_the_element_its_field_came_from(self, api, auth, network):
        body = air_shopping(("PVD", "CHS", network), ("CHS", "PVD", network - timedelta(days=1)))

        fields = ndc_error_of(post(api, "AirShopping", body, auth), 422, "ERR-1005")

        assert fields["TagText"].endswith("/OriginDestCriteria/OriginDepCriteria/Date")
        assert "travel order" in fields["DescText"]


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.xml")), ids=lambda p: p.stem)
def test_every_example_request_is_a_valid_request_of_an_endpoint(path):
    """ndc/examples/ (the README's exchanges): each validates against its 21.3 schema and
    is the request of an endpoint we serve."""
    document = example(path.stem)  # validates

    roots = {endpoint.request_root for endpoint in ENDPOINTS.values()}
    assert etree.QName(document).localname in roots


def test_every_endpoint_has_an_example_request():
    roots = {etree.QName(example(p.stem)).localname for p in EXAMPLES.glob("*.xml")}

    assert {endpoint.request_root for endpoint in ENDPOINTS.values()} <= roots
