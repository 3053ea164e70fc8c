"""NDC OrderList (IATA_OrderListRQ -> IATA_OrderListRS) over HTTP: the same orders, in the
same order and pages, as GET /json/v1/orders on the same query (SPEC.md §4.8)."""

from datetime import UTC, datetime, timedelta

import pytest
from lxml import etree

from tests.conftest import bearer, token_for
from tests.ndc.conftest import CNS, NS, example, ndc_error_of, post, texts, valid, xml_of
from tests.orders import conftest as booking
from tests.orders.conftest import book, booking_body, price_offer
from tests.orders.factories import order_with_trip
from tests.sellers.factories import ApiKeyFactory

pytestmark = pytest.mark.django_db

AUG = "urn:x-airline:ndc:order-list"
ALL = {**NS, "ol": AUG}
CRITERIA = "/IATA_OrderListRQ/Request/OrderSearchFilterCriteria"

# The booking tests' travel day (far enough out for holds) serves here too.
travel_day = booking.travel_day


def order_list_rq(*criteria: str, page_size=None, last_index=None, check=True) -> bytes:
    """The example OrderListRQ with `criteria` (fragments in the `cns:` prefix) as its
    OrderSearchFilterCriteria, and the paging asked (none when neither is given);
    schema-checked unless told (to send a value the schema refuses)."""
    document = example("OrderListRQ")
    search = document.find(".//c:OrderSearchFilterCriteria", NS)
    for child in list(search):
        search.remove(child)
    for fragment in criteria:
        search.append(etree.fromstring(f'<cns:X xmlns:cns="{CNS}">{fragment}</cns:X>')[0])
    paging = document.find("m:AugmentationPoint/ol:Paging", ALL)
    if page_size is None and last_index is None:
        document.remove(document.find("m:AugmentationPoint", NS))
    else:
        for name, value in (("PageSize", page_size), ("LastIndex", last_index)):
            element = paging.find(f"ol:{name}", ALL)
            if value is None:
                paging.remove(element)
            else:
                element.text = str(value)
    return etree.tostring(valid(document) if check else document)


def listed(api, auth, *criteria: str, **paging) -> etree._Element:
    return xml_of(
        post(api, "OrderList", order_list_rq(*criteria, **paging), auth), root="IATA_OrderListRS"
    )


def ids(document: etree._Element) -> list[str]:
    return texts(document, "m:Response/c:MatchedOrder/c:OrderRefID")


def page(document: etree._Element) -> dict[str, str]:
    element = document.find("m:AugmentationPoint/ol:OrderListPage", ALL)
    return {etree.QName(e).localname: e.text for e in element if len(e) == 0}


def json_ids(api, auth, **query) -> list[str]:
    response = api.get("/json/v1/orders", query, **auth)
    assert response.status_code == 200, response.content
    return [o["orderId"] for o in response.json()["data"]["orders"]]


def pax(surname: str, given: str | None = None) -> str:
    given_name = f"<cns:GivenName>{given}</cns:GivenName>" if given else ""
    return (
        f"<cns:PaxFilterCriteria><cns:Individual>{given_name}"
        f"<cns:Surname>{surname}</cns:Surname></cns:Individual></cns:PaxFilterCriteria>"
    )


def flight(*parts: str) -> str:
    return f"<cns:FlightFilterCriteria>{''.join(parts)}</cns:FlightFilterCriteria>"


def dep(station: str, day: str) -> str:
    return (
        f"<cns:DepFilterCriteria><cns:DepDate>{day}</cns:DepDate>"
        f"<cns:StationCode>{station}</cns:StationCode></cns:DepFilterCriteria>"
    )


def arrival(station: str, day: str) -> str:
    return (
        f"<cns:ArrivalFilterCriteria><cns:ArrivalDate>{day}</cns:ArrivalDate>"
        f"<cns:StationCode>{station}</cns:StationCode></cns:ArrivalFilterCriteria>"
    )


def marketing(carrier: str, number: str) -> str:
    return (
        f"<cns:MarketingCarrierInfoNEW><cns:CarrierDesigCode>{carrier}</cns:CarrierDesigCode>"
        f"<cns:MarketingCarrierFlightNumberText>{number}</cns:MarketingCarrierFlightNumberText>"
        "</cns:MarketingCarrierInfoNEW>"
    )


def travel_date(first: str, last: str) -> str:
    return (
        f"<cns:TravelDateFilterCriteria><cns:EffectiveDate>{first}</cns:EffectiveDate>"
        f"<cns:ExpirationDate>{last}</cns:ExpirationDate></cns:TravelDateFilterCriteria>"
    )


def named(priced, given: str, surname: str) -> dict:
    """A hold on `priced` whose lead passenger is `given surname`."""
    body = booking_body(priced)
    body["passengers"][0]["name"] = {"givenName": given, "surname": surname}
    return body


@pytest.fixture
def bookings(api, auth, travel_day, clock):
    """Three holds booked over the JSON API: Ada Lovelace on MX101 and Grace Hopper on
    MX501 on the travel day, Ada Byron on MX101 the day after; by order id."""
    booked = {}
    for key, day, number, given, surname in (
        ("ada", travel_day, 101, "Ada", "Lovelace"),
        ("grace", travel_day, 501, "Grace", "Hopper"),
        ("byron", travel_day + timedelta(days=1), 101, "Ada", "Byron"),
    ):
        priced = price_offer(api, auth, day, flight=number)
        response = book(api, auth, named(priced, given, surname))
        assert response.status_code == 201, response.content
        booked[key] = response.json()["data"]
    return booked


def test_it_lists_the_agencys_bookings_as_json_does(api, auth, bookings):
    document = listed(api, auth)

    assert ids(document) == json_ids(api, auth)
    assert sorted(ids(document)) == sorted(b["order"]["orderId"] for b in bookings.values())
    ada = bookings["ada"]
    [matched] = document.xpath(
        "m:Response/c:MatchedOrder[c:OrderRefID = $id]", namespaces=NS, id=ada["order"]["orderId"]
    )
    outbound = ada["journeys"][0]
    assert matched.findtext("c:Dep/c:DepDate", namespaces=NS) == outbound["departureDateTime"][:10]
    assert matched.findtext("c:Dep/c:StationCode", namespaces=NS) == "PVD"
    assert matched.findtext("c:OrderStatusCode", namespaces=NS) == "ONHOLD"
    assert matched.findtext("c:PaxList/c:Pax/c:Individual/c:GivenName", namespaces=NS) == "Ada"
    assert matched.findtext("c:PaxList/c:Pax/c:Individual/c:Surname", namespaces=NS) == "Lovelace"
    assert matched.findtext("c:TravelAgency/c:AgencyID", namespaces=NS) == "ACMEAGT"
    [extra] = document.xpath(
        "m:AugmentationPoint/ol:OrderListPage/ol:Order[ol:OrderRefID = $id]",
        namespaces=ALL,
        id=ada["order"]["orderId"],
    )
    assert extra.findtext("ol:RecordLocator", namespaces=ALL) == ada["order"]["recordLocator"]
    assert extra.findtext("ol:FlightNumber", namespaces=ALL) == "101"
    assert extra.findtext("ol:DestCode", namespaces=ALL) == "CHS"
    json_page = api.get("/json/v1/orders", **auth).json()["data"]["page"]
    assert page(document) == {
        "PageSize": "1000",
        "Count": "3",
        "LastIndex": str(json_page["lastIndex"]),
        "HasMore": "false",
    }
    assert document.find("m:PayloadAttributes/c:TrxID", NS) is not None


def test_filters_list_what_json_lists_for_the_same_query(api, auth, bookings, travel_day):
    day = travel_day.isoformat()
    ada, grace, byron = (bookings[k]["order"]["orderId"] for k in ("ada", "grace", "byron"))
    cases = [
        ((pax("lovelace"),), {"lastName": "lovelace"}, [ada]),
        ((pax("LOVELACE", "ada"),), {"lastName": "LOVELACE", "firstName": "ada"}, [ada]),
        ((pax("Babbage", "Ada"),), {"lastName": "Babbage", "firstName": "Ada"}, []),
        ((flight(dep("PVD", day)),), {"origin": "PVD", "departureDate": day}, [ada, grace]),
        ((flight(dep("CHS", day)),), {"origin": "CHS", "departureDate": day}, []),
        ((flight(marketing("MX", "501")),), {"flightNumber": "MX501"}, [grace]),
        ((flight(marketing("AA", "501")),), {"flightNumber": "AA501"}, []),
        ((travel_date(day, day),), {"departureDate": day}, [ada, grace]),
        (
            (flight(dep("PVD", day), marketing("MX", "101")), pax("Lovelace")),
            {"origin": "PVD", "departureDate": day, "flightNumber": "101", "lastName": "Lovelace"},
            [ada],
        ),
        ((flight(arrival("PVD", day)),), {"destination": "PVD"}, []),
    ]
    for criteria, query, expected in cases:
        document = listed(api, auth, *criteria)
        assert ids(document) == json_ids(api, auth, **query), criteria
        assert sorted(ids(document)) == sorted(expected), criteria
    assert sorted(json_ids(api, auth, origin="PVD")) == sorted([ada, grace, byron])


def test_an_arrival_date_is_not_applied_and_the_answer_says_so(api, auth, bookings, travel_day):
    document = listed(api, auth, flight(arrival("CHS", "2000-01-01")))

    assert ids(document) == json_ids(api, auth, destination="CHS")
    assert len(ids(document)) == 3
    [warning] = document.findall("m:Response/c:Warning", NS)
    where = f"{CRITERIA}/FlightFilterCriteria/ArrivalFilterCriteria/ArrivalDate"
    assert warning.findtext("c:TagText", namespaces=NS) == where
    assert "arrival station only" in warning.findtext("c:DescText", namespaces=NS)


def test_it_pages_through_the_orders_as_json_does(api, auth, default_seller):
    orders = [order_with_trip(seller=default_seller) for _ in range(12)]

    first = listed(api, auth, page_size=10)
    assert page(first)["Count"] == "10"
    assert page(first)["HasMore"] == "true"
    assert page(first)["PageSize"] == "10"
    second = listed(api, auth, page_size=10, last_index=page(first)["LastIndex"])
    assert page(second)["Count"] == "2"
    assert page(second)["HasMore"] == "false"

    assert ids(first) + ids(second) == [o.order_id for o in orders]
    assert ids(first) == json_ids(api, auth, pageSize=10)
    json_first = api.get("/json/v1/orders", {"pageSize": 10}, **auth).json()["data"]["page"]
    assert page(first)["LastIndex"] == str(json_first["lastIndex"])
    assert ids(second) == json_ids(api, auth, pageSize=10, lastIndex=json_first["lastIndex"])


def test_another_sellers_or_agencys_orders_never_appear(
    api, auth, default_seller, other_seller, stranger_seller
):
    mine = order_with_trip(seller=default_seller, surname="Lovelace")
    order_with_trip(seller=other_seller, surname="Lovelace")
    order_with_trip(seller=stranger_seller, surname="Lovelace")
    order_with_trip(seller=default_seller, surname="Lovelace", agency_code="OTHERAGT")

    assert ids(listed(api, auth)) == [mine.order_id]
    assert ids(listed(api, auth, pax("Lovelace"))) == [mine.order_id]


def test_a_read_only_key_with_an_agency_code_may_list(api, read_only_key, default_seller):
    order = order_with_trip(seller=default_seller)
    read_only = bearer(token_for(api, read_only_key.raw))
    assert ids(listed(api, read_only)) == [order.order_id]


def test_a_key_without_agency_code_is_refused(api, partner, default_seller):
    no_agency = bearer(token_for(api, ApiKeyFactory(partner=partner).raw))
    response = post(api, "OrderList", order_list_rq(), no_agency)
    ndc_error_of(response, 403, "ERR-8001", root="IATA_OrderListRS")


@pytest.mark.parametrize(
    ("criteria", "paging", "where"),
    [
        ((), {"page_size": 9}, "/IATA_OrderListRQ/AugmentationPoint/Paging/PageSize"),
        ((), {"page_size": 1001}, "/IATA_OrderListRQ/AugmentationPoint/Paging/PageSize"),
        ((), {"page_size": "ten"}, "/IATA_OrderListRQ/AugmentationPoint/Paging/PageSize"),
        ((), {"last_index": -1}, "/IATA_OrderListRQ/AugmentationPoint/Paging/LastIndex"),
        (
            (pax("x" * 33),),
            {},
            f"{CRITERIA}/PaxFilterCriteria/Individual/Surname",
        ),
        (
            (pax("Lovelace", "y" * 33),),
            {},
            f"{CRITERIA}/PaxFilterCriteria/Individual/GivenName",
        ),
        (
            (flight(dep("PV1", "2026-11-23")),),
            {},
            f"{CRITERIA}/FlightFilterCriteria/DepFilterCriteria/StationCode",
        ),
        (
            (flight(arrival("CH5", "2026-11-23")),),
            {},
            f"{CRITERIA}/FlightFilterCriteria/ArrivalFilterCriteria/StationCode",
        ),
        (
            (flight(marketing("MXX", "101")),),
            {},
            f"{CRITERIA}/FlightFilterCriteria/MarketingCarrierInfoNEW",
        ),
        (
            (flight(dep("PVD", "2026-11-31")),),
            {},
            f"{CRITERIA}/FlightFilterCriteria/DepFilterCriteria/DepDate",
        ),
        (
            (travel_date("2026-11-23", "2026-11-25"),),
            {},
            f"{CRITERIA}/TravelDateFilterCriteria",
        ),
        (
            (flight(dep("PVD", "2026-11-23")), travel_date("2026-11-24", "2026-11-24")),
            {},
            f"{CRITERIA}/TravelDateFilterCriteria",
        ),
        (
            (
                "<cns:BookingRefFilterCriteria><cns:BookingID>ABC123</cns:BookingID>"
                "</cns:BookingRefFilterCriteria>",
            ),
            {},
            f"{CRITERIA}/BookingRefFilterCriteria",
        ),
        (
            (
                flight(
                    "<cns:MarketingCarrierInfoNEW><cns:CarrierDesigCode>MX</cns:CarrierDesigCode>"
                    "<cns:MarketingCarrierFlightNumberText>101</cns:MarketingCarrierFlightNumberText>"
                    "<cns:RBD_Code>Y</cns:RBD_Code></cns:MarketingCarrierInfoNEW>"
                ),
            ),
            {},
            f"{CRITERIA}/FlightFilterCriteria/MarketingCarrierInfoNEW/RBD_Code",
        ),
    ],
)
def test_bad_filters_are_refused_with_their_xpath(api, auth, criteria, paging, where):
    body = order_list_rq(*criteria, **paging, check=False)
    fields = ndc_error_of(
        post(api, "OrderList", body, auth), 422, "ERR-1005", root="IATA_OrderListRS"
    )
    assert fields["TagText"] == where, fields
    assert fields["DescText"].startswith(where), fields


def test_the_example_request_is_served(api, auth, bookings, travel_day):
    document = example("OrderListRQ")
    document.find(".//c:DepDate", NS).text = travel_day.isoformat()
    response = post(api, "OrderList", etree.tostring(document), auth)
    listed_ids = ids(xml_of(response, root="IATA_OrderListRS"))
    assert listed_ids == [bookings["ada"]["order"]["orderId"]]
    assert listed_ids == json_ids(
        api,
        auth,
        origin="PVD",
        departureDate=travel_day.isoformat(),
        flightNumber="MX101",
        lastName="Lovelace",
        pageSize=10,
    )


def test_an_order_created_after_a_page_does_not_shift_the_next(api, auth, default_seller):
    orders = [order_with_trip(seller=default_seller) for _ in range(11)]
    first = listed(api, auth, page_size=10)
    late = order_with_trip(
        seller=default_seller, departs_at=datetime.now(tz=UTC) + timedelta(days=4)
    )
    second = listed(api, auth, page_size=10, last_index=page(first)["LastIndex"])
    assert ids(first) + ids(second) == [o.order_id for o in orders] + [late.order_id]
