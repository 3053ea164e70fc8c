"""The back office (DESIGN.md §10): create an endpoint (its secret shown once), see its
deliveries, resend failed ones, disable it."""

import re
from datetime import timedelta

import pytest
from django.contrib.messages import get_messages
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.api.test_metrics import metrics_on, value
from tests.network.test_admin import djangos_rows
from webhooks.delivery import webhooks_deliver
from webhooks.models import WebhookDelivery, WebhookEndpoint
from webhooks.services import endpoint_ping, endpoint_register

pytestmark = pytest.mark.usefixtures("loopback_allowed")
metrics_on = metrics_on  # the fixture, used by name below
ENDPOINTS = "/admin/webhooks/webhookendpoint/"
DELIVERIES = "/admin/webhooks/webhookdelivery/"


def pings(seller, endpoint, clock, count: int) -> None:
    for _ in range(count):
        endpoint_ping(seller=seller, webhook_id=endpoint.webhook_id, now=clock.at)


def endpoint_form(admin_client, **fields) -> dict:
    """The add form's fields as the browser sends them, with the form's one-time token."""
    page = admin_client.get(f"{ENDPOINTS}add/").content.decode()
    token = re.search(r'name="form_once" value="([^"]+)"', page).group(1)
    return {"form_once": token, **fields}


def shown_secret(response) -> str | None:
    shown = re.search(r'<code id="webhook-secret">([^<]+)</code>', response.content.decode())
    return shown.group(1) if shown else None


def test_creating_an_endpoint_shows_its_secret_once(admin_client, default_seller, receiver, clock):
    form = endpoint_form(admin_client, seller=default_seller.pk, url=receiver.url)
    response = admin_client.post(f"{ENDPOINTS}add/", form, follow=True)

    endpoint = WebhookEndpoint.objects.get()
    # On the page the create redirects to, never cached; not in a message cookie (signed,
    # not encrypted), not in the session.
    registered = f"{ENDPOINTS}{endpoint.pk}/registered/"
    assert response.redirect_chain == [(registered, 302)]
    assert shown_secret(response) == endpoint.secret
    assert "no-store" in response["Cache-Control"]
    assert not list(get_messages(response.wsgi_request))
    assert all(endpoint.secret not in morsel.value for morsel in response.cookies.values())
    assert endpoint.secret not in str(dict(admin_client.session))
    page = admin_client.get(f"{ENDPOINTS}{endpoint.pk}/change/").content.decode()
    assert endpoint.secret not in page
    assert endpoint.webhook_id in page


def test_a_reload_of_the_secret_page_shows_nothing_and_registers_nothing(
    admin_client, default_seller, receiver, clock
):
    form = endpoint_form(admin_client, seller=default_seller.pk, url=receiver.url)
    first = admin_client.post(f"{ENDPOINTS}add/", form, follow=True)
    endpoint = WebhookEndpoint.objects.get()
    assert shown_secret(first) == endpoint.secret

    reload = admin_client.get(f"{ENDPOINTS}{endpoint.pk}/registered/")

    assert reload.status_code == 200
    assert "no-store" in reload["Cache-Control"]
    assert shown_secret(reload) is None
    assert endpoint.secret not in reload.content.decode()
    assert 'id="webhook-secret-gone"' in reload.content.decode()
    assert WebhookEndpoint.objects.count() == 1


def test_the_same_form_sent_again_registers_no_second_endpoint(
    admin_client, default_seller, receiver, clock
):
    form = endpoint_form(admin_client, seller=default_seller.pk, url=receiver.url)
    admin_client.post(f"{ENDPOINTS}add/", form)
    secret = WebhookEndpoint.objects.get().secret

    again = admin_client.post(f"{ENDPOINTS}add/", form, follow=True)

    assert WebhookEndpoint.objects.count() == 1
    assert again.redirect_chain == [(ENDPOINTS, 302)]
    assert shown_secret(again) is None
    assert secret not in again.content.decode()
    assert "This form was sent already" in again.content.decode()
    # A POST without the form's token (not from the form) registers nothing either.
    admin_client.post(f"{ENDPOINTS}add/", {**form, "form_once": ""})
    assert WebhookEndpoint.objects.count() == 1


def test_it_refuses_a_private_url(admin_client, default_seller, receiver, clock):
    form = endpoint_form(admin_client, seller=default_seller.pk, url="https://10.0.0.1/")
    response = admin_client.post(f"{ENDPOINTS}add/", form)
    assert response.status_code == 200  # the form again, with the error
    assert "private address" in response.content.decode()
    assert not WebhookEndpoint.objects.exists()

    # The corrected form, with the same token, is registered.
    admin_client.post(f"{ENDPOINTS}add/", {**form, "url": receiver.url})
    assert WebhookEndpoint.objects.get().url == receiver.url


def test_resend_failed_and_disable(admin_client, default_seller, receiver, clock):
    endpoint = endpoint_register(
        seller=default_seller, url=receiver.url, events=[], now=clock.at
    ).endpoint
    endpoint_ping(seller=default_seller, webhook_id=endpoint.webhook_id, now=clock.at)
    WebhookDelivery.objects.update(status="FAILED", attempts=50)
    page = admin_client.get(f"{ENDPOINTS}{endpoint.pk}/change/").content.decode()
    assert "FAILED" in page

    admin_client.post(ENDPOINTS, {"action": "resend_failed", "_selected_action": [endpoint.pk]})
    assert webhooks_deliver()["delivered"] == 1
    assert len(receiver.delivered()) == 1

    admin_client.post(ENDPOINTS, {"action": "disable", "_selected_action": [endpoint.pk]})
    endpoint.refresh_from_db()
    assert endpoint.active is False
    endpoint_ping(seller=default_seller, webhook_id=endpoint.webhook_id, now=clock.at)
    assert webhooks_deliver() == {}  # nothing is sent to a disabled endpoint


@pytest.mark.parametrize(
    ("role", "actions"),
    [
        (
            "Partner management",
            {"resend_failed", "retry_pending_now", "disable", "enable", "delete_selected"},
        ),
        ("Operations", {"resend_failed", "retry_pending_now"}),
        ("Support", set()),
    ],
)
def test_each_role_gets_only_its_actions(client, role, actions, default_seller, receiver, clock):
    from tests.orders.test_admin_roles import staff_in

    endpoint_register(seller=default_seller, url=receiver.url, events=[], now=clock.at)
    staff = staff_in(client, role)

    page = staff.get(ENDPOINTS)

    assert page.status_code == 200
    form = page.context["action_form"]  # None when no action is offered
    choices = form.fields["action"].choices if form is not None else []
    offered = {name for name, _ in choices if name}
    assert offered == actions


def test_operations_resend_and_the_log_says_who(client, default_seller, receiver, clock):
    from django.contrib.admin.models import LogEntry

    from tests.orders.test_admin_roles import staff_in

    endpoint = endpoint_register(
        seller=default_seller, url=receiver.url, events=[], now=clock.at
    ).endpoint
    endpoint_ping(seller=default_seller, webhook_id=endpoint.webhook_id, now=clock.at)
    WebhookDelivery.objects.update(status="FAILED", attempts=50)
    staff = staff_in(client, "Operations")

    staff.post(ENDPOINTS, {"action": "resend_failed", "_selected_action": [endpoint.pk]})

    assert WebhookDelivery.objects.get().status == "PENDING"
    [entry] = LogEntry.objects.filter(user=staff.user)
    assert entry.change_message == "Resent 1 failed deliveries"
    # A second resend finds nothing failed: a warning, and nothing logged.
    staff.post(ENDPOINTS, {"action": "resend_failed", "_selected_action": [endpoint.pk]})
    assert LogEntry.objects.filter(user=staff.user).count() == 1


def test_retry_now_makes_pending_deliveries_due_and_they_are_sent(
    admin_client, default_seller, receiver, clock
):
    endpoint = endpoint_register(
        seller=default_seller, url=receiver.url, events=[], now=clock.at
    ).endpoint
    pings(default_seller, endpoint, clock, 2)
    # Failing for a while: backed off an hour, as the worker leaves them.
    later = clock.at + timedelta(hours=1)
    WebhookDelivery.objects.update(attempts=3, last_status_code=503, next_attempt_at=later)
    assert webhooks_deliver() == {}  # nothing due: resend would not help (nothing FAILED)
    first, second = WebhookDelivery.objects.order_by("id")

    response = admin_client.post(
        DELIVERIES, {"action": "retry_now", "_selected_action": [first.pk]}, follow=True
    )

    assert [str(m) for m in response.context["messages"]] == [
        "1 pending deliver(ies) due now; the worker sends them at its next poll."
    ]
    first.refresh_from_db()
    second.refresh_from_db()
    assert first.next_attempt_at == clock.at
    assert first.attempts == 3
    assert second.next_attempt_at == later
    assert webhooks_deliver()["delivered"] == 1
    assert len(receiver.delivered()) == 1
    # A delivered one is not pending: retrying it again does nothing.
    admin_client.post(DELIVERIES, {"action": "retry_now", "_selected_action": [first.pk]})
    first.refresh_from_db()
    assert first.status == "DELIVERED"


def test_retry_now_for_an_endpoint_leaves_failed_and_delivered_ones(
    admin_client, default_seller, receiver, clock
):
    endpoint = endpoint_register(
        seller=default_seller, url=receiver.url, events=[], now=clock.at
    ).endpoint
    pings(default_seller, endpoint, clock, 3)
    later = clock.at + timedelta(hours=1)
    WebhookDelivery.objects.update(next_attempt_at=later)
    pending, failed, delivered = WebhookDelivery.objects.order_by("id")
    WebhookDelivery.objects.filter(pk=failed.pk).update(status="FAILED")
    WebhookDelivery.objects.filter(pk=delivered.pk).update(status="DELIVERED")

    admin_client.post(ENDPOINTS, {"action": "retry_pending_now", "_selected_action": [endpoint.pk]})

    due = dict(WebhookDelivery.objects.values_list("pk", "next_attempt_at"))
    assert due == {pending.pk: clock.at, failed.pk: later, delivered.pk: later}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"status__exact": "PENDING"}, {"pending", "other"}),
        ({"last_code": "5xx"}, {"pending", "failed"}),
        ({"last_code": "503"}, {"failed"}),
        ({"last_code": "2xx"}, {"delivered"}),
        ({"last_code": "untried"}, {"other"}),
        ({"event_type": "ping"}, {"pending", "failed", "delivered", "other"}),
        ({"event_type": "order.created"}, set()),
        ({"endpoint__id__exact": "OTHER"}, {"other"}),
    ],
)
def test_the_deliveries_list_filters(
    admin_client, default_seller, receiver, clock, query, expected
):
    endpoint, other = (
        endpoint_register(seller=default_seller, url=receiver.url, events=[], now=clock.at).endpoint
        for _ in range(2)
    )
    pings(default_seller, endpoint, clock, 3)
    pending, failed, delivered = WebhookDelivery.objects.order_by("id")
    WebhookDelivery.objects.filter(pk=pending.pk).update(attempts=2, last_status_code=500)
    WebhookDelivery.objects.filter(pk=failed.pk).update(
        status="FAILED", attempts=9, last_status_code=503
    )
    WebhookDelivery.objects.filter(pk=delivered.pk).update(
        status="DELIVERED", attempts=1, last_status_code=204
    )
    endpoint_ping(seller=default_seller, webhook_id=other.webhook_id, now=clock.at)
    names = {pending.pk: "pending", failed.pk: "failed", delivered.pk: "delivered"}
    if query.get("endpoint__id__exact") == "OTHER":
        query = {"endpoint__id__exact": str(other.pk)}

    page = admin_client.get(DELIVERIES, query)

    assert page.status_code == 200
    shown = {names.get(d.pk, "other") for d in page.context["cl"].result_list}
    assert shown == expected


def endpoint_page_queries(admin_client, endpoint) -> int:
    with CaptureQueriesContext(connection) as queries:
        page = admin_client.get(f"{ENDPOINTS}{endpoint.pk}/change/")
    assert page.status_code == 200
    return len(queries)


def test_the_endpoint_page_reads_as_many_queries_for_one_delivery_as_for_sixty(
    admin_client, default_seller, receiver, clock
):
    endpoint = endpoint_register(
        seller=default_seller, url=receiver.url, events=[], now=clock.at
    ).endpoint
    pings(default_seller, endpoint, clock, 1)
    # The first page a process shows reads the content types once (Django caches them):
    # shown once before counting, whichever test ran before this one.
    endpoint_page_queries(admin_client, endpoint)
    with_one = endpoint_page_queries(admin_client, endpoint)
    pings(default_seller, endpoint, clock, 59)

    with_sixty = endpoint_page_queries(admin_client, endpoint)

    assert with_sixty == with_one
    page = admin_client.get(f"{ENDPOINTS}{endpoint.pk}/change/").content.decode()
    newest = WebhookDelivery.objects.order_by("-id").first()
    assert page.count('<tr><td><a href="/admin/webhooks/webhookdelivery/') == 50
    assert newest.event.event_id in page
    assert f"?endpoint__id__exact={endpoint.pk}" in page  # the rest are in the list


def test_a_disabled_endpoints_backlog_has_its_own_gauge(
    api, admin_client, default_seller, receiver, clock, metrics_on
):
    endpoint, other = (
        endpoint_register(seller=default_seller, url=receiver.url, events=[], now=clock.at).endpoint
        for _ in range(2)
    )
    pings(default_seller, endpoint, clock, 2)
    pings(default_seller, other, clock, 3)

    admin_client.post(ENDPOINTS, {"action": "disable", "_selected_action": [other.pk]})

    assert value(api, "airline_webhook_deliveries_pending") == 2
    assert value(api, "airline_webhook_deliveries_pending_disabled") == 3
    admin_client.post(ENDPOINTS, {"action": "enable", "_selected_action": [other.pk]})
    assert value(api, "airline_webhook_deliveries_pending") == 5
    assert value(api, "airline_webhook_deliveries_pending_disabled") == 0


def test_delete_in_the_admin_keeps_the_endpoint_behind_a_filter(
    admin_client, default_seller, receiver, clock
):
    doomed, kept = (
        endpoint_register(seller=default_seller, url=receiver.url, events=[], now=clock.at).endpoint
        for _ in range(2)
    )
    pings(default_seller, doomed, clock, 2)
    WebhookDelivery.objects.filter(pk=WebhookDelivery.objects.order_by("id")[0].pk).update(
        status="FAILED"
    )

    confirm = admin_client.post(
        ENDPOINTS, {"action": "delete_selected", "_selected_action": [doomed.pk]}
    )
    assert confirm.status_code == 200  # the confirmation page
    admin_client.post(
        ENDPOINTS,
        {"action": "delete_selected", "_selected_action": [doomed.pk], "post": "yes"},
    )

    doomed.refresh_from_db()
    assert (doomed.active, doomed.deleted_at) == (False, clock.at)
    statuses = list(WebhookDelivery.objects.order_by("id").values_list("status", flat=True))
    assert statuses == ["FAILED", "CANCELLED"]

    def listed(**query):
        page = admin_client.get(ENDPOINTS, query)
        return {e.pk for e in page.context["cl"].result_list}

    assert listed() == {kept.pk}
    assert listed(deleted="yes") == {doomed.pk}
    assert listed(deleted="all") == {doomed.pk, kept.pk}
    page = admin_client.get(f"{ENDPOINTS}{doomed.pk}/change/")
    assert page.status_code == 200
    assert "CANCELLED" in page.content.decode()
    assert admin_client.get(f"{ENDPOINTS}{doomed.pk}/delete/").status_code == 403

    # Neither enabled again nor resent.
    for action in ("enable", "resend_failed", "retry_pending_now"):
        admin_client.post(ENDPOINTS, {"action": action, "_selected_action": [doomed.pk]})
    doomed.refresh_from_db()
    assert doomed.active is False
    assert list(WebhookDelivery.objects.order_by("id").values_list("status", flat=True)) == statuses
    assert webhooks_deliver() == {}
    assert receiver.received == []
    # The endpoint page's own delete is the same soft delete.
    admin_client.post(f"{ENDPOINTS}{kept.pk}/delete/", {"post": "yes"})
    assert WebhookEndpoint.objects.get(pk=kept.pk).deleted_at == clock.at
    assert WebhookEndpoint.objects.count() == 2


@pytest.mark.parametrize("query", [{}, {"status__exact": "PENDING", "o": "-7"}])
def test_the_deliveries_list_writes_the_rows_django_would(
    admin_client, default_seller, receiver, clock, query
):
    # WebhookDeliveryAdmin's rows are written in one pass (airline.backoffice_lists.OnePassRows):
    # the same bytes as Django's items_for_result, checkbox and links included.
    endpoint = endpoint_register(
        seller=default_seller, url=receiver.url, events=[], now=clock.at
    ).endpoint
    pings(default_seller, endpoint, clock, 3)
    WebhookDelivery.objects.filter(pk=WebhookDelivery.objects.first().pk).update(
        status="FAILED", attempts=6, last_status_code=404
    )

    page = admin_client.get(DELIVERIES, query)

    changelist = page.context["cl"]
    assert changelist.results_table is not None
    written = [row[0] for row in changelist.results_table["results"]]
    assert written == djangos_rows(changelist)
    assert len(written) == (3 if not query else 2)
    for row in written:
        assert f"<tr>{row}</tr>" in page.content.decode()
