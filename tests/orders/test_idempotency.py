"""Idempotency-Key on POST /json/{v}/orders and PATCH /json/{v}/orders/{id} (DESIGN.md §4,
§11 "Idempotent changes")."""

import pytest

from airline.api.models import IdempotencyRecord
from orders.models import Order, OrderEvent, OrderStatus
from tests.conftest import bearer, error_of, token_for
from tests.orders.conftest import book, booking_body, price_offer
from tests.sellers.factories import ApiKeyFactory

pytestmark = pytest.mark.django_db


def key(value):
    return {"HTTP_IDEMPOTENCY_KEY": value}


def test_a_repeat_replays_the_first_response_and_books_once(api, auth, priced):
    body = booking_body(priced)
    first = book(api, auth, body, **key("k-1"))
    again = book(api, auth, body, **key("k-1"))

    assert first.status_code == again.status_code == 201
    assert again.json() == first.json()
    assert again["Idempotent-Replayed"] == "true"
    assert Order.objects.count() == 1


def test_the_same_key_with_another_body_is_refused(api, auth, priced, travel_day):
    assert book(api, auth, booking_body(priced), **key("k-1")).status_code == 201
    other = price_offer(api, auth, travel_day)

    error_of(book(api, auth, booking_body(other), **key("k-1")), 422, "ERR-1011", "Idempotency-Key")
    assert Order.objects.count() == 1


def test_a_failed_request_keeps_nothing(api, auth, priced):
    bad = booking_body(priced, contact={"emailAddress": "nope"})
    error_of(book(api, auth, bad, **key("k-1")), 400, "ERR-1004")
    assert not IdempotencyRecord.objects.exists()

    assert book(api, auth, booking_body(priced), **key("k-1")).status_code == 201


def test_a_request_still_running_is_a_conflict(
    api, auth, priced, partner_key, default_seller, clock
):
    IdempotencyRecord.objects.create(
        scope=f"{partner_key.key.prefix}:{default_seller.pk.hex}",
        key="k-1",
        fingerprint="x" * 64,
        state=IdempotencyRecord.State.RUNNING,
        created_at=clock.at,
        updated_at=clock.at,
    )
    error_of(book(api, auth, booking_body(priced), **key("k-1")), 409, "ERR-1012")
    assert not Order.objects.exists()

    # A claim left behind by a worker that died is taken over after its lease.
    clock.advance(minutes=3)
    assert book(api, auth, booking_body(priced), **key("k-1")).status_code == 201


def test_keys_are_scoped_to_the_api_key(api, auth, priced, partner, travel_day):
    assert book(api, auth, booking_body(priced), **key("shared")).status_code == 201
    second = bearer(token_for(api, ApiKeyFactory(partner=partner).raw))
    other = price_offer(api, second, travel_day)

    assert book(api, second, booking_body(other), **key("shared")).status_code == 201
    assert Order.objects.count() == 2


def test_a_replay_never_crosses_sellers(api, auth, priced, partner_key, other_seller):
    first = book(api, auth, booking_body(priced), **key("shared"))
    assert first.status_code == 201
    as_other = bearer(token_for(api, partner_key.raw, other_seller.pk))

    again = book(api, as_other, booking_body(priced), **key("shared"))

    # Not a replay of the first seller's order: the request runs for the other seller,
    # whose offers do not include this one.
    error_of(again, 404, "ERR-3000", "offerId")
    assert "Idempotent-Replayed" not in again.headers
    assert first.json()["data"]["order"]["orderId"] not in again.content.decode()
    assert Order.objects.count() == 1


def test_keys_are_forgotten_after_a_day(api, auth, priced, travel_day, clock):
    assert book(api, auth, booking_body(priced), **key("k-1")).status_code == 201
    clock.advance(hours=24, minutes=1)
    other = price_offer(api, auth, travel_day)

    assert book(api, auth, booking_body(other), **key("k-1")).status_code == 201


@pytest.mark.parametrize("value", ["", "x" * 256, "caf\u00e9"])
def test_malformed_keys(api, auth, priced, value):
    error_of(
        book(api, auth, booking_body(priced), **key(value)), 422, "ERR-1005", "Idempotency-Key"
    )


# --- PATCH /json/{v}/orders/{id}: change order, the same rules (DESIGN.md §11) ------------


def change(api, auth, order_id, body, **headers):
    return api.patch(f"/json/v1/orders/{order_id}", body, format="json", **auth, **headers)


@pytest.fixture
def held(api, auth, priced):
    response = book(api, auth, booking_body(priced))
    assert response.status_code == 201, response.content
    return response.json()["data"]["order"]["orderId"]


CANCEL = {"changes": [{"type": "CancelUnpaidOrder"}]}
CONTACT = {
    "changes": [
        {
            "type": "UpdateContact",
            "contact": {
                "emailAddress": "new@example.com",
                "name": {"givenName": "Ada", "surname": "Byron"},
            },
        }
    ]
}


def test_a_repeated_cancellation_answers_the_first_and_cancels_once(api, auth, held):
    first = change(api, auth, held, CANCEL, **key("cancel-1"))
    events = OrderEvent.objects.filter(order__order_id=held).count()

    again = change(api, auth, held, CANCEL, **key("cancel-1"))

    assert first.status_code == again.status_code == 200, first.content
    assert again.json() == first.json()
    assert again["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in first.headers
    assert Order.objects.get(order_id=held).status == OrderStatus.CANCELLED
    assert OrderEvent.objects.filter(order__order_id=held).count() == events
    # Without the key the same request is a new one, refused: the order is cancelled.
    error_of(change(api, auth, held, CANCEL), 400, "ERR-4002")


def test_a_change_key_reused_with_another_body_is_err_1011(api, auth, held):
    assert change(api, auth, held, CONTACT, **key("c-1")).status_code == 200

    error_of(change(api, auth, held, CANCEL, **key("c-1")), 422, "ERR-1011", "Idempotency-Key")
    assert Order.objects.get(order_id=held).status != OrderStatus.CANCELLED


def test_a_change_key_reused_on_another_order_is_err_1011(api, auth, priced, held, travel_day):
    other = book(api, auth, booking_body(price_offer(api, auth, travel_day)))
    other_id = other.json()["data"]["order"]["orderId"]
    assert change(api, auth, held, CANCEL, **key("c-1")).status_code == 200

    error_of(change(api, auth, other_id, CANCEL, **key("c-1")), 422, "ERR-1011")
    assert Order.objects.get(order_id=other_id).status != OrderStatus.CANCELLED


def test_a_change_still_running_is_err_1012(api, auth, held, partner_key, default_seller, clock):
    IdempotencyRecord.objects.create(
        scope=f"{partner_key.key.prefix}:{default_seller.pk.hex}",
        key="c-1",
        fingerprint="x" * 64,
        state=IdempotencyRecord.State.RUNNING,
        created_at=clock.at,
        updated_at=clock.at,
    )

    response = change(api, auth, held, CANCEL, **key("c-1"))

    error_of(response, 409, "ERR-1012", "Idempotency-Key")
    assert response["Retry-After"] == "1"
    assert Order.objects.get(order_id=held).status != OrderStatus.CANCELLED


def test_a_failed_change_keeps_nothing(api, auth, held):
    bad = {"changes": [{"type": "UpdateContact", "contact": {"emailAddress": "x"}}]}
    assert change(api, auth, held, bad, **key("c-1")).status_code >= 400
    assert not IdempotencyRecord.objects.exists()

    assert change(api, auth, held, CANCEL, **key("c-1")).status_code == 200


def test_a_change_committed_without_its_answer_is_answered_not_repeated(
    api, auth, held, monkeypatch
):
    """The worker fails (or dies) after the change committed and before its answer was
    recorded: the retry gets the order as the change left it, and nothing is done twice."""
    from orders import views

    rendered = views.presenters.order_view_cached

    def lost(order, **kwargs):
        monkeypatch.setattr(views.presenters, "order_view_cached", rendered)
        raise RuntimeError("the worker failed after the commit")

    monkeypatch.setattr(views.presenters, "order_view_cached", lost)
    failed = change(api, auth, held, CANCEL, **key("cancel-1"))
    assert failed.status_code == 500
    assert IdempotencyRecord.objects.get().state == IdempotencyRecord.State.APPLIED

    retry = change(api, auth, held, CANCEL, **key("cancel-1"))
    again = change(api, auth, held, CANCEL, **key("cancel-1"))

    assert retry.status_code == 200, retry.content
    assert retry["Idempotent-Replayed"] == "true"
    assert retry.json()["data"]["order"]["statusCode"] == OrderStatus.CANCELLED
    assert again.json() == retry.json()
    assert IdempotencyRecord.objects.get().state == IdempotencyRecord.State.DONE
    assert (
        OrderEvent.objects.filter(order__order_id=held, kind=OrderEvent.Kind.HOLD_CANCELLED).count()
        == 1
    )
    error_of(change(api, auth, held, CONTACT, **key("cancel-1")), 422, "ERR-1011")


def test_an_applied_change_is_never_taken_over_after_the_lease(api, auth, held, monkeypatch, clock):
    from orders import views

    rendered = views.presenters.order_view_cached

    def lost(order, **kwargs):
        monkeypatch.setattr(views.presenters, "order_view_cached", rendered)
        raise RuntimeError("the worker failed after the commit")

    monkeypatch.setattr(views.presenters, "order_view_cached", lost)
    assert change(api, auth, held, CONTACT, **key("c-1")).status_code == 500
    clock.advance(minutes=10)  # well past IDEMPOTENCY_LEASE_SECONDS

    retry = change(api, auth, held, CONTACT, **key("c-1"))

    assert retry["Idempotent-Replayed"] == "true"
    assert (
        OrderEvent.objects.filter(
            order__order_id=held, kind=OrderEvent.Kind.CONTACT_UPDATED
        ).count()
        == 1
    )
