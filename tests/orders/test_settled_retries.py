"""A request cut short with a card payment open gets a true answer on its retry with the
same Idempotency-Key: the payment reconciler finishes the key's record with the order
it booked (201, as if the first request had succeeded) or with the error when the
payment came to nothing; until then the retry is told the outcome is being settled,
never run again (it would charge the card twice). No key is left `running`."""

import pytest

from airline.api.models import IdempotencyRecord
from orders.booking.reconcile import payments_reconcile
from orders.models import Order, OrderStatus, PaymentIntent
from tests.conftest import error_of
from tests.ndc.conftest import ndc_error_of, xml_of
from tests.ndc.test_orders import VIEW, body, create_request, order_id_of
from tests.orders.conftest import CARD, book, booking_body
from tests.orders.test_order_ancillaries import change, open_seat, seats
from tests.orders.test_payment_intents import Killed, die_at, ledger

pytestmark = pytest.mark.django_db

KEY = {"HTTP_IDEMPOTENCY_KEY": "book-once-1"}
TIMES_OUT = {**CARD, "cardNumber": "4000000000000119"}


@pytest.fixture
def no_cleanup(monkeypatch):
    """A killed worker runs no except clause: no refund, no release of the seats."""
    monkeypatch.setattr("orders.money.intents.intent_refund", lambda *a, **k: None)
    monkeypatch.setattr("orders.booking.paying.order_abandon", lambda *a, **k: True)


def states() -> list[str]:
    return list(IdempotencyRecord.objects.values_list("state", flat=True))


def unfinished() -> int:
    return IdempotencyRecord.objects.filter(
        state__in=[IdempotencyRecord.State.RUNNING, IdempotencyRecord.State.SETTLING]
    ).count()


def test_a_booking_whose_worker_died_after_the_charge_is_answered_201_on_its_retry(
    api, auth, priced, clock, monkeypatch, no_cleanup
):
    body = booking_body(priced, payment=CARD)
    die_at(monkeypatch, "orders.booking.paying.order_confirm_paid")
    with pytest.raises(Killed):
        book(api, auth, body, **KEY)
    monkeypatch.undo()
    assert states() == [IdempotencyRecord.State.SETTLING]

    # Before the reconciler: told to come back, never booked (or charged) a second time.
    early = book(api, auth, body, **KEY)
    error = error_of(early, 409, "ERR-1012", "Idempotency-Key")
    assert error["reason"] == "OUTCOME_PENDING"
    assert early["Retry-After"] == "30"
    assert Order.objects.count() == 1
    assert len(ledger()) == 1

    clock.advance(minutes=3)
    assert payments_reconcile() == {"attached": 1}

    order = Order.objects.get()
    assert order.status == OrderStatus.CONFIRMED
    retried = book(api, auth, body, **KEY)
    assert retried.status_code == 201, retried.content
    assert retried["Idempotent-Replayed"] == "true"
    view = retried.json()["data"]
    assert view["order"]["orderId"] == order.order_id
    assert view["order"]["statusCode"] == "CONFIRMED"
    assert len({t["ticketNumber"] for t in view["tickets"]}) == 3
    assert book(api, auth, body, **KEY).json() == retried.json()  # recorded, replayed
    assert states() == [IdempotencyRecord.State.DONE]
    assert ledger() == [("CHARGE", PaymentIntent.objects.get().ref, order.total)]


def test_a_gateway_timeout_is_told_as_being_settled_then_answered_with_the_error(
    api, auth, priced, clock
):
    body = booking_body(priced, payment=TIMES_OUT)

    first = book(api, auth, body, **KEY)

    error = error_of(first, 503, "ERR-6005", "payment")
    assert error["reason"] == "OUTCOME_PENDING"
    assert "same Idempotency-Key" in error["description"]
    assert "nothing was booked or charged" not in error["description"]
    assert first["Retry-After"] == "30"
    assert states() == [IdempotencyRecord.State.SETTLING]
    error_of(book(api, auth, body, **KEY), 409, "ERR-1012")

    clock.advance(minutes=3)
    assert payments_reconcile() == {"void": 1}

    retried = book(api, auth, body, **KEY)
    error = error_of(retried, 400, "ERR-4001", None)
    assert error["reason"] == "PAYMENT_NOT_COMPLETED"
    assert retried["Idempotent-Replayed"] == "true"
    assert states() == [IdempotencyRecord.State.FAILED]
    assert not Order.objects.exists()
    # A new key books it afresh.
    fresh = book(api, auth, booking_body(priced, payment=CARD), HTTP_IDEMPOTENCY_KEY="book-2")
    assert fresh.status_code == 201, fresh.content


def test_a_timeout_without_a_key_says_to_look_in_the_order_list(api, auth, priced):
    response = book(api, auth, booking_body(priced, payment=TIMES_OUT))

    error = error_of(response, 503, "ERR-6005", "payment")
    assert error["reason"] == "OUTCOME_PENDING"
    assert "order list" in error["description"]
    assert not IdempotencyRecord.objects.exists()


def test_a_declined_card_frees_its_key_at_once(api, auth, priced):
    declined = {**CARD, "cardNumber": "4000000000000002"}

    error_of(book(api, auth, booking_body(priced, payment=declined), **KEY), 400, "ERR-6002")

    assert not IdempotencyRecord.objects.exists()
    assert book(api, auth, booking_body(priced, payment=CARD), **KEY).status_code == 201


def test_a_change_whose_charge_never_committed_is_answered_with_the_error(
    api, auth, priced, clock, monkeypatch, no_cleanup
):
    order = book(api, auth, booking_body(priced, payment=CARD)).json()["data"]
    order_id = order["order"]["orderId"]
    seat_data = seats(api, auth, order_id).json()["data"]
    unit, row = open_seat(seat_data["legSeatMaps"][0], order["pax"][0]["paxId"])
    body = {
        "changes": [
            {
                "type": "AcceptOffer",
                "offerId": seat_data["offerId"],
                "offerItemId": row["offerItemId"],
                "passengerIds": [row["paxRefId"]],
                "seat": {"row": int(unit["designator"][:-1]), "column": unit["designator"][-1]},
            }
        ],
        "payment": CARD,
    }
    die_at(monkeypatch, "orders.servicing.changes.services_write")
    with pytest.raises(Killed):
        change(api, auth, order_id, body, **KEY)
    monkeypatch.undo()
    error_of(change(api, auth, order_id, body, **KEY), 409, "ERR-1012")

    clock.advance(minutes=3)
    assert payments_reconcile() == {"refunded": 1}

    error = error_of(change(api, auth, order_id, body, **KEY), 400, "ERR-4002", None)
    assert error["reason"] == "PAYMENT_NOT_COMPLETED"
    assert unfinished() == 0


def test_an_ndc_booking_whose_worker_died_is_answered_with_its_order_view(
    api, auth, priced, clock, monkeypatch, no_cleanup
):
    """The same through NDC: OrderCreateRQ's retry gets IATA_OrderViewRS."""
    document = body(create_request(priced))
    die_at(monkeypatch, "orders.booking.paying.order_confirm_paid")
    with pytest.raises(Killed):
        _ndc_create(api, auth, document)
    monkeypatch.undo()
    ndc_error_of(_ndc_create(api, auth, document), 409, "ERR-1012", VIEW)

    clock.advance(minutes=3)
    assert payments_reconcile() == {"attached": 1}

    retried = _ndc_create(api, auth, document)
    assert retried["Idempotent-Replayed"] == "true"
    view = xml_of(retried, 200, VIEW)
    assert order_id_of(view) == Order.objects.get().order_id


def _ndc_create(api, auth, document: bytes):
    return api.post("/ndc/v1/OrderCreate", document, content_type="application/xml", **auth, **KEY)


def test_the_reconciler_leaves_no_key_running(api, auth, priced, clock):
    """A request that died before any payment (no intent) leaves RUNNING; the
    reconciler's run frees it once past the lease, so a retry runs."""
    now = clock()
    IdempotencyRecord.objects.create(
        scope="x:y", key="died", fingerprint="f", state="running", created_at=now, updated_at=now
    )
    assert payments_reconcile() == {}  # a request may still be running it

    clock.advance(minutes=3)
    assert payments_reconcile() == {"keys_released": 1}
    assert not IdempotencyRecord.objects.exists()
