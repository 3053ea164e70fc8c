"""The back office (DESIGN.md §10): create an endpoint (its secret shown once), see its
deliveries, resend failed ones, disable it."""

import pytest
from django.contrib.messages import get_messages

from webhooks.delivery import webhooks_deliver
from webhooks.models import WebhookDelivery, WebhookEndpoint
from webhooks.services import endpoint_ping, endpoint_register

pytestmark = pytest.mark.usefixtures("loopback_allowed")
ENDPOINTS = "/admin/webhooks/webhookendpoint/"


def test_creating_an_endpoint_shows_its_secret_once(admin_client, default_seller, receiver, clock):
    response = admin_client.post(
        f"{ENDPOINTS}add/", {"seller": default_seller.pk, "url": receiver.url}
    )

    endpoint = WebhookEndpoint.objects.get()
    # In the answer to the create itself, never cached; not in a redirect's message
    # cookie (signed, not encrypted), not in the session.
    assert response.status_code == 200
    assert endpoint.secret in response.content.decode()
    assert "no-store" in response["Cache-Control"]
    assert not list(get_messages(response.wsgi_request))
    assert all(endpoint.secret not in morsel.value for morsel in response.cookies.values())
    assert endpoint.secret not in str(dict(admin_client.session))
    page = admin_client.get(f"{ENDPOINTS}{endpoint.pk}/change/").content.decode()
    assert endpoint.secret not in page
    assert endpoint.webhook_id in page


def test_it_refuses_a_private_url(admin_client, default_seller):
    response = admin_client.post(
        f"{ENDPOINTS}add/", {"seller": default_seller.pk, "url": "https://10.0.0.1/"}
    )
    assert response.status_code == 200  # the form again, with the error
    assert "private address" in response.content.decode()
    assert not WebhookEndpoint.objects.exists()


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
        ("Partner management", {"resend_failed", "disable", "enable", "delete_selected"}),
        ("Operations", {"resend_failed"}),
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
