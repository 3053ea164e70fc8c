"""NDC webhook endpoints (issue 17 point 7): a seller that registers `format: ndc` gets
each event as an IATA_OrderChangeNotifRQ, valid against the 21.3 schema, rendered from
the same order view as the JSON event and signed the same way; delivered to a real
receiver on 127.0.0.1."""

from datetime import timedelta

import pytest
from lxml import etree

from ndc.xml import CNS, MSG, schema
from tests.conftest import error_of
from tests.orders.conftest import book, booking_body
from tests.orders.test_airline_changes import DETECTED, RETIMED_101, booked, reload, view_of
from tests.webhooks.conftest import register, verifies
from tests.webhooks.test_admin import endpoint_form
from webhooks.delivery import webhooks_deliver
from webhooks.models import WebhookEndpoint, WebhookEvent

pytestmark = pytest.mark.usefixtures("loopback_allowed")
NS = {"m": MSG, "c": CNS}
ROOT = "IATA_OrderChangeNotifRQ"


def notification(received) -> etree._Element:
    """The delivered body, checked to be a valid IATA_OrderChangeNotifRQ."""
    assert received.headers["Content-Type"] == "application/xml"
    document = etree.fromstring(received.body)
    assert document.tag == f"{{{MSG}}}{ROOT}"
    checker = schema(ROOT)
    assert checker.validate(document), checker.error_log
    return document


def text(document: etree._Element, path: str) -> str:
    return document.findtext(path, namespaces=NS)


def texts(document: etree._Element, path: str) -> list[str]:
    return [e.text for e in document.findall(path, NS)]


def deliver_all(clock, rounds=6) -> None:
    # One event per order is due a round (per-order sequence).
    for _ in range(rounds):
        webhooks_deliver()
        clock.advance(minutes=1)


def test_an_endpoint_registers_with_the_ndc_format_and_shows_it(api, auth, receiver):
    response = register(api, auth, receiver.url, format="ndc")

    assert response.status_code == 201, response.content
    created = response.json()["data"]
    assert created["format"] == "ndc"
    assert WebhookEndpoint.objects.get(webhook_id=created["webhookId"]).format == "ndc"
    [listed] = api.get("/json/v1/webhooks", **auth).json()["data"]["webhooks"]
    assert (listed["webhookId"], listed["format"]) == (created["webhookId"], "ndc")
    # Without a format, JSON as before.
    plain = register(api, auth, receiver.url).json()["data"]
    assert plain["format"] == "json"


def test_an_unknown_format_is_refused_at_its_path(api, auth, receiver):
    error_of(register(api, auth, receiver.url, format="edifact"), 422, "ERR-1005", path="format")
    assert not WebhookEndpoint.objects.exists()


def test_a_booking_reaches_an_ndc_endpoint_as_a_signed_order_change_notification(
    api, auth, priced, receiver
):
    secret = register(api, auth, receiver.url, format="ndc").json()["data"]["secret"]
    created = book(api, auth, booking_body(priced))
    assert created.status_code == 201, created.content
    view = created.json()["data"]

    assert webhooks_deliver() == {"delivered": 1, "retrying": 0, "failed": 0}

    [got] = receiver.received
    assert verifies(secret, got)
    assert not verifies("whsec_wrong", got)
    document = notification(got)
    event = WebhookEvent.objects.get()
    attributes = "m:PayloadAttributes/c:"
    assert text(document, attributes + "TrxID") == event.event_id == got.headers["Webhook-Id"]
    assert text(document, attributes + "CorrelationID") == view["order"]["orderId"]
    assert text(document, attributes + "SeqNumber") == "1"
    operation = "m:Notification/c:ChangeGroup/c:ChangeOperationGroup/c:ChangeOperation/c:"
    assert text(document, operation + "ChangeTypeCode") == "order.created"
    assert text(document, operation + "ReasonCode") == "CREATED"
    order = document.find("m:Notification/c:CurrentOrder/c:Order", NS)
    assert text(order, "c:OrderID") == view["order"]["orderId"]
    assert text(order, "c:StatusCode") == view["order"]["statusCode"] == "ONHOLD"
    locators = set(texts(order, "c:OrderItem/c:Service/c:BookingRef/c:BookingID"))
    assert locators == {view["order"]["recordLocator"]}
    assert text(order, "c:TotalPrice/c:TotalAmount") == (
        f"{view['order']['totalPrice']['total']['amount']:.2f}"
    )
    pax = texts(document, "m:Notification/c:CurrentOrder/c:DataLists/c:PaxList/c:Pax/c:PaxID")
    assert pax == [p["paxId"] for p in view["pax"]]
    assert texts(document, "m:DistributionChain/c:DistributionChainLink/c:OrgRole") == [
        "Carrier",
        "Seller",
    ]


def test_an_airline_initiated_change_reaches_an_ndc_endpoint(
    api, auth, network, tmp_path, receiver, clock
):
    register(api, auth, receiver.url, format="ndc")
    order_id = booked(api, auth, network + timedelta(days=5), flight=101)["order"]["orderId"]
    deliver_all(clock)
    receiver.received.clear()

    reload(tmp_path, network, f101=RETIMED_101)
    deliver_all(clock)

    [got] = receiver.delivered()
    document = notification(got)
    operation = "m:Notification/c:ChangeGroup/c:ChangeOperationGroup/c:ChangeOperation/c:"
    assert text(document, operation + "ChangeTypeCode") == DETECTED
    assert text(document, operation + "ReasonCode") == "RETIMED"
    assert text(document, "m:PayloadAttributes/c:CorrelationID") == order_id
    event = WebhookEvent.objects.get(type=DETECTED)
    assert text(document, "m:PayloadAttributes/c:TrxID") == event.event_id
    assert text(document, "m:PayloadAttributes/c:SeqNumber") == str(event.sequence)
    order = document.find("m:Notification/c:CurrentOrder/c:Order", NS)
    assert text(order, "c:OrderID") == order_id
    assert text(order, "c:StatusCode") == view_of(api, auth, order_id)["order"]["statusCode"]


def test_a_ping_to_an_ndc_endpoint_is_a_notification_without_an_order(api, auth, receiver):
    hook = register(api, auth, receiver.url, format="ndc").json()["data"]
    api.post(f"/json/v1/webhooks/{hook['webhookId']}/ping", **auth)

    webhooks_deliver()

    [got] = receiver.received
    assert verifies(hook["secret"], got)
    document = notification(got)
    assert text(document, "m:PayloadAttributes/c:CorrelationID") == hook["webhookId"]
    assert document.find("m:Notification/c:CurrentOrder", NS) is None


def test_the_back_office_registers_an_ndc_endpoint_and_lists_its_format(
    admin_client, default_seller, receiver
):
    endpoints = "/admin/webhooks/webhookendpoint/"
    form = endpoint_form(admin_client, seller=default_seller.pk, url=receiver.url, format="ndc")
    response = admin_client.post(f"{endpoints}add/", form, follow=True)

    assert response.status_code == 200, response.content
    assert WebhookEndpoint.objects.get().format == "ndc"
    assert "NDC (IATA_OrderChangeNotifRQ)" in admin_client.get(endpoints).content.decode()
