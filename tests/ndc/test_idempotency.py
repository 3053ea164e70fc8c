"""Idempotency-Key on NDC OrderCreate and OrderChange (DESIGN.md §11 "Idempotent
changes"): the JSON endpoints' rules, the answers XML: the same key and document replay
the first OrderViewRS; another document is ERR-1011; one still running ERR-1012."""

import pytest

from airline.api.models import IdempotencyRecord
from orders.models import Order, OrderEvent, OrderStatus
from tests.ndc.conftest import ndc_error_of, post, xml_of
from tests.ndc.test_orders import (
    VIEW,
    body,
    change_request,
    choose,
    create_request,
    hold,  # noqa: F401 (fixture)
    order_id_of,
    priced,  # noqa: F401 (fixture)
    retrieve_request,
    sub,
)

pytestmark = pytest.mark.django_db


def key(value: str) -> dict[str, str]:
    return {"HTTP_IDEMPOTENCY_KEY": value}


def cancel_request(order_id: str) -> bytes:
    document = change_request(order_id)
    cancel = choose(document, "CancelUnpaidOrder")
    sub(cancel, "OrderRefID", order_id)
    sub(cancel, "OwnerCode", "MX")
    return body(document)


def test_a_repeated_order_create_answers_the_first_and_books_once(api, auth, priced):  # noqa: F811
    document = body(create_request(priced, pay=False))

    first = post(api, "OrderCreate", document, auth, **key("ndc-1"))
    # The same document written out otherwise (attribute quoting) is the same request.
    again = post(api, "OrderCreate", document.replace(b'"', b"'"), auth, **key("ndc-1"))

    xml_of(first, 200, VIEW)
    assert again.status_code == 200
    assert again.content == first.content
    assert again["Content-Type"] == first["Content-Type"]
    assert again["Idempotent-Replayed"] == "true"
    assert Order.objects.count() == 1


def test_an_order_create_key_with_another_document_is_err_1011(api, auth, priced):  # noqa: F811
    assert post(api, "OrderCreate", body(create_request(priced, pay=False)), auth, **key("k"))
    other = body(create_request(priced, pay=True))

    error = ndc_error_of(post(api, "OrderCreate", other, auth, **key("k")), 422, "ERR-1011", VIEW)

    assert error["TagText"] == "Idempotency-Key"
    assert Order.objects.count() == 1


def test_a_repeated_order_change_answers_the_first_and_changes_once(api, auth, hold):  # noqa: F811
    order_id = order_id_of(hold)
    cancel = cancel_request(order_id)

    first = post(api, "OrderChange", cancel, auth, **key("cancel-1"))
    again = post(api, "OrderChange", cancel, auth, **key("cancel-1"))

    xml_of(first, 200, VIEW)
    assert again.content == first.content
    assert again["Idempotent-Replayed"] == "true"
    assert Order.objects.get(order_id=order_id).status == OrderStatus.CANCELLED
    assert (
        OrderEvent.objects.filter(
            order__order_id=order_id, kind=OrderEvent.Kind.HOLD_CANCELLED
        ).count()
        == 1
    )


def test_an_order_change_still_running_is_err_1012(
    api,
    auth,
    hold,  # noqa: F811
    partner_key,
    default_seller,
    clock,
):
    IdempotencyRecord.objects.create(
        scope=f"{partner_key.key.prefix}:{default_seller.pk.hex}",
        key="cancel-1",
        fingerprint="x" * 64,
        state=IdempotencyRecord.State.RUNNING,
        created_at=clock.at,
        updated_at=clock.at,
    )
    order_id = order_id_of(hold)

    response = post(api, "OrderChange", cancel_request(order_id), auth, **key("cancel-1"))

    ndc_error_of(response, 409, "ERR-1012", VIEW)
    assert Order.objects.get(order_id=order_id).status != OrderStatus.CANCELLED


def test_a_document_the_schema_refuses_keeps_nothing(api, auth, hold):  # noqa: F811
    response = post(api, "OrderChange", b"<not-ndc/>", auth, **key("cancel-1"))

    assert response.status_code >= 400
    assert not IdempotencyRecord.objects.exists()


def test_reads_ignore_the_key(api, auth, hold):  # noqa: F811
    retrieve = post(api, "OrderRetrieve", retrieve_request(order_id_of(hold)), auth, **key("r"))

    xml_of(retrieve, 200, VIEW)
    assert "Idempotent-Replayed" not in retrieve.headers
    assert not IdempotencyRecord.objects.exists()


def test_an_order_change_committed_without_its_answer_is_answered_not_repeated(
    api,
    auth,
    hold,  # noqa: F811
    monkeypatch,
):
    from orders.reading import presenters

    rendered = presenters.order_view_data  # what OrderViewRS renders from

    def lost(order, **kwargs):
        monkeypatch.setattr(presenters, "order_view_data", rendered)
        raise RuntimeError("the worker failed after the commit")

    monkeypatch.setattr(presenters, "order_view_data", lost)
    order_id = order_id_of(hold)
    cancel = cancel_request(order_id)
    assert post(api, "OrderChange", cancel, auth, **key("cancel-1")).status_code == 500

    retry = post(api, "OrderChange", cancel, auth, **key("cancel-1"))

    answer = xml_of(retry, 200, VIEW)
    assert retry["Idempotent-Replayed"] == "true"
    assert order_id_of(answer) == order_id
    assert Order.objects.get(order_id=order_id).status == OrderStatus.CANCELLED
    assert (
        OrderEvent.objects.filter(
            order__order_id=order_id, kind=OrderEvent.Kind.HOLD_CANCELLED
        ).count()
        == 1
    )
