"""OrderList (IATA_OrderListRQ -> IATA_OrderListRS): the request's filter criteria mapped to
the query of GET /json/{v}/orders, validated by the same serializer (OrderListQuery),
checked and scoped by the same check (orders.requests.checks.check_order_search: the acting seller,
then the key's agency code), answered by the same selector and rendered from the same
JSON `data` (orders.reading.presenters.order_list_page), so both channels list the same orders in
the same order and page through them with the same cursor (SPEC.md §4.8).

How each criterion maps, what is refused, and the paging carried in
`AugmentationPoint` (namespace AUGMENTATION_NS) are described once, in the NDC guide
(docs/partners/ndc.md, "OrderList"); ORDER_LIST_PATHS is the field table it shows.
"""

from typing import Any

from lxml import etree

from airline.api.quick_validation import validated
from ndc import xml
from ndc.errors import payload_attributes
from ndc.xml import MSG, c, element_path, refused, sub, text
from orders.reading.presenters import order_list_page
from orders.reading.selectors import orders_list
from orders.requests.checks import check_order_search
from orders.requests.serializers import OrderListQuery
from sellers.authentication import Principal

AUGMENTATION_NS = "urn:x-airline:ndc:order-list"

_CRITERIA = "/IATA_OrderListRQ/Request/OrderSearchFilterCriteria"
_FLIGHT = f"{_CRITERIA}/FlightFilterCriteria"
_PAGING = "/IATA_OrderListRQ/AugmentationPoint/Paging"
ORDER_LIST_PATHS = {
    "firstName": f"{_CRITERIA}/PaxFilterCriteria/Individual/GivenName",
    "lastName": f"{_CRITERIA}/PaxFilterCriteria/Individual/Surname",
    "departureDate": f"{_FLIGHT}/DepFilterCriteria/DepDate",
    "origin": f"{_FLIGHT}/DepFilterCriteria/StationCode",
    "destination": f"{_FLIGHT}/ArrivalFilterCriteria/StationCode",
    "flightNumber": f"{_FLIGHT}/MarketingCarrierInfoNEW",
    "pageSize": f"{_PAGING}/PageSize",
    "lastIndex": f"{_PAGING}/LastIndex",
}

# The criteria read (paths below OrderSearchFilterCriteria, by local name); CarrierName
# only names the carrier its code already gives.
_SUPPORTED = {
    "PaxFilterCriteria",
    "PaxFilterCriteria/Individual",
    "PaxFilterCriteria/Individual/GivenName",
    "PaxFilterCriteria/Individual/Surname",
    "FlightFilterCriteria",
    "FlightFilterCriteria/DepFilterCriteria",
    "FlightFilterCriteria/DepFilterCriteria/DepDate",
    "FlightFilterCriteria/DepFilterCriteria/StationCode",
    "FlightFilterCriteria/ArrivalFilterCriteria",
    "FlightFilterCriteria/ArrivalFilterCriteria/ArrivalDate",
    "FlightFilterCriteria/ArrivalFilterCriteria/StationCode",
    "FlightFilterCriteria/MarketingCarrierInfoNEW",
    "FlightFilterCriteria/MarketingCarrierInfoNEW/CarrierDesigCode",
    "FlightFilterCriteria/MarketingCarrierInfoNEW/CarrierName",
    "FlightFilterCriteria/MarketingCarrierInfoNEW/MarketingCarrierFlightNumberText",
    "TravelDateFilterCriteria",
    "TravelDateFilterCriteria/EffectiveDate",
    "TravelDateFilterCriteria/ExpirationDate",
}
_SUPPORTED_TEXT = (
    "surname and given name (PaxFilterCriteria/Individual), departure station and "
    "date, arrival station, marketing flight (FlightFilterCriteria) or one travel "
    "date (TravelDateFilterCriteria); find one order by its id or record locator "
    "with OrderRetrieve"
)


def order_list(*, principal: Principal, document: etree._Element, request_id: str | None) -> bytes:
    """IATA_OrderListRQ -> IATA_OrderListRS (as GET /json/{v}/orders)."""
    query, warnings = order_list_query(document)
    checked = validated(OrderListQuery, query)
    search = check_order_search(checked, principal=principal)
    orders, more = orders_list(search)
    return order_list_rs(order_list_page(search, orders, more), warnings, request_id=request_id)


# --- Request -------------------------------------------------------------------------


def order_list_query(document: etree._Element) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """The query GET /json/{v}/orders would take for this request, and the warnings its
    answer carries ((XPath, text) of criteria read but not applied)."""
    criteria = document.find(f"{{{MSG}}}Request").find(c("OrderSearchFilterCriteria"))
    _refuse_unsupported(criteria)
    query: dict[str, str] = {}
    warnings: list[tuple[str, str]] = []

    individual = criteria.find(f"{c('PaxFilterCriteria')}/{c('Individual')}")
    if individual is not None:
        query["lastName"] = text(individual, "Surname")
        given = [e.text.strip() for e in individual.findall(c("GivenName")) if e.text]
        if given:
            query["firstName"] = " ".join(given)

    flight = criteria.find(c("FlightFilterCriteria"))
    departure = flight.find(c("DepFilterCriteria")) if flight is not None else None
    if departure is not None:
        query["origin"] = text(departure, "StationCode")
        query["departureDate"] = text(departure, "DepDate")
    arrival = flight.find(c("ArrivalFilterCriteria")) if flight is not None else None
    if arrival is not None:
        query["destination"] = text(arrival, "StationCode")
        arrival_date = arrival.find(c("ArrivalDate"))
        warnings.append(
            (
                element_path(arrival_date),
                f"{element_path(arrival_date)}: orders are not searched by arrival date; "
                "this list is filtered by the arrival station only",
            )
        )
    carrier = flight.find(c("MarketingCarrierInfoNEW")) if flight is not None else None
    if carrier is not None:
        query["flightNumber"] = text(carrier, "CarrierDesigCode") + text(
            carrier, "MarketingCarrierFlightNumberText"
        )

    travel = criteria.find(c("TravelDateFilterCriteria"))
    if travel is not None:
        day = _one_day(travel)
        if query.get("departureDate", day) != day:
            raise refused(travel, f"the travel date {day} is not DepFilterCriteria/DepDate")
        query["departureDate"] = day

    query.update(_paging(document))
    return query, warnings


def _refuse_unsupported(criteria: etree._Element) -> None:
    for element in criteria.iterdescendants(tag=etree.Element):
        steps = []
        node = element
        while node is not criteria:
            steps.append(etree.QName(node).localname)
            node = node.getparent()
        if "/".join(reversed(steps)) not in _SUPPORTED:
            reason = f"not an OrderList filter we apply; filter by {_SUPPORTED_TEXT}"
            raise refused(element, reason)


def _one_day(travel: etree._Element) -> str:
    first, last = text(travel, "EffectiveDate"), text(travel, "ExpirationDate")
    if first is None or first != last:
        raise refused(
            travel,
            "orders are searched by one departure date: send EffectiveDate and "
            "ExpirationDate with the same date",
        )
    return first


def _paging(document: etree._Element) -> dict[str, str]:
    """pageSize and lastIndex from AugmentationPoint/Paging (other augmentations are
    someone else's and are left alone)."""
    point = document.find(f"{{{MSG}}}AugmentationPoint")
    paging = point.find(f"{{{AUGMENTATION_NS}}}Paging") if point is not None else None
    if paging is None:
        return {}
    found = {}
    for name, field in (("PageSize", "pageSize"), ("LastIndex", "lastIndex")):
        element = paging.find(f"{{{AUGMENTATION_NS}}}{name}")
        if element is not None:
            found[field] = (element.text or "").strip()
    return found


# --- Response ------------------------------------------------------------------------


def order_list_rs(
    data: dict[str, Any], warnings: list[tuple[str, str]], *, request_id: str | None
) -> bytes:
    """The JSON `data` of GET /json/{v}/orders as IATA_OrderListRS."""
    root = xml.message_root("IATA_OrderListRS")
    response = xml.msg_sub(root, "Response")
    for summary in data["orders"]:
        _matched_order(sub(response, "MatchedOrder"), summary)
    for where, description in warnings:
        warning = sub(response, "Warning")
        sub(warning, "DescText", description)
        sub(warning, "LangCode", "EN")
        sub(warning, "TagText", where)
    _page(xml.msg_sub(root, "AugmentationPoint"), data)
    payload_attributes(root, request_id)
    return xml.serialize(root)


def _matched_order(element: etree._Element, summary: dict[str, Any]) -> None:
    """MatchedOrderType, in its schema's order: the summarised journey's departure, the
    order, its lead passenger and the agency that booked it. Arrival is left out: it
    needs a date the summary does not have."""
    if "departureDate" in summary:
        departure = sub(element, "Dep")
        sub(departure, "DepDate", summary["departureDate"])
        sub(departure, "StationCode", summary["origin"])
    sub(element, "OrderRefID", summary["orderId"])
    sub(element, "OrderStatusCode", summary["statusCode"])
    name = summary.get("passengerName") or {}
    if name.get("surname"):
        pax = sub(sub(element, "PaxList"), "Pax")
        individual = sub(pax, "Individual")
        if name.get("givenName"):
            sub(individual, "GivenName", name["givenName"])
        sub(individual, "Surname", name["surname"])
        # The summary names the lead passenger but not their PAX- id (OrderRetrieve has
        # it): an id local to this answer.
        sub(pax, "PaxID", f"{summary['orderId']}-LEAD")
    if "sourceOrganizationCode" in summary:
        sub(sub(element, "TravelAgency"), "AgencyID", summary["sourceOrganizationCode"])


def _page(point: etree._Element, data: dict[str, Any]) -> None:
    """The JSON `page`, and per order what MatchedOrder has no element for."""
    page = etree.SubElement(
        point, f"{{{AUGMENTATION_NS}}}OrderListPage", nsmap={"ol": AUGMENTATION_NS}
    )
    for name, key in (
        ("PageSize", "pageSize"),
        ("Count", "count"),
        ("LastIndex", "lastIndex"),
        ("HasMore", "hasMore"),
    ):
        _aug(page, name, data["page"][key])
    for summary in data["orders"]:
        order = _aug(page, "Order")
        _aug(order, "OrderRefID", summary["orderId"])
        _aug(order, "RecordLocator", summary["recordLocator"])
        for name, key in (
            ("FlightNumber", "flightNumber"),
            ("OriginCode", "origin"),
            ("DestCode", "destination"),
        ):
            if key in summary:
                _aug(order, name, summary[key])


def _aug(parent: etree._Element, name: str, value: Any = None) -> etree._Element:
    element = etree.SubElement(parent, f"{{{AUGMENTATION_NS}}}{name}")
    if value is not None:
        element.text = ("true" if value else "false") if isinstance(value, bool) else str(value)
    return element
