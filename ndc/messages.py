"""The NDC messages served under /ndc/{version}/ (SPEC.md §4.14, DESIGN.md §9): for
each endpoint name, the root its request must have and the root of its response, errors
included. A table that imports nothing: the error renderer (ndc.errors) picks an
error's RS root from it, and the presenters of the services ndc.endpoints lists import
the error renderer (PayloadAttributes), so the table sits below both."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Message:
    request_root: str
    response_root: str


MESSAGES: dict[str, Message] = {
    "AirShopping": Message("IATA_AirShoppingRQ", "IATA_AirShoppingRS"),
    "OfferPrice": Message("IATA_OfferPriceRQ", "IATA_OfferPriceRS"),
    "SeatAvailability": Message("IATA_SeatAvailabilityRQ", "IATA_SeatAvailabilityRS"),
    "ServiceList": Message("IATA_ServiceListRQ", "IATA_ServiceListRS"),
    "OrderList": Message("IATA_OrderListRQ", "IATA_OrderListRS"),
    "OrderReshop": Message("IATA_OrderReshopRQ", "IATA_OrderReshopRS"),
    # 21.3 has no OrderQuoteRS: OrderQuoteRQ is answered with an OrderReshopRS.
    "OrderQuote": Message("IATA_OrderQuoteRQ", "IATA_OrderReshopRS"),
    "OrderCreate": Message("IATA_OrderCreateRQ", "IATA_OrderViewRS"),
    "OrderRetrieve": Message("IATA_OrderRetrieveRQ", "IATA_OrderViewRS"),
    "OrderChange": Message("IATA_OrderChangeRQ", "IATA_OrderViewRS"),
}
