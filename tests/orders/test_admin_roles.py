"""Staff roles in the back office (issue 18): the groups a migration creates, what each
role may see and do through the admin, every action in Django's log with who and when,
and no secret, card number or token on any page a role can open."""

import pytest
from django.contrib.admin.models import ADDITION, CHANGE, LogEntry
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from orders.models import OrderStatus, PaymentIntent
from sellers.models import ApiKey
from tests.conftest import token_for
from tests.orders import test_admin as bookings
from tests.orders.test_admin import CHANGELIST, cancel
from tests.sellers.test_admin import add_key

pytestmark = pytest.mark.django_db

held, paid = bookings.held, bookings.paid
ROLES = {"Partner management", "Operations", "Support"}


def staff_in(client, role: str):
    user = get_user_model().objects.create_user(role.lower().replace(" ", "-"), is_staff=True)
    user.groups.add(Group.objects.get(name=role))
    client.force_login(user)
    client.user = user
    return client


def statuses(client, *paths) -> list[int]:
    return [client.get(path).status_code for path in paths]


def logged(user) -> list[tuple[int, str, str]]:
    return list(
        LogEntry.objects.filter(user=user)
        .order_by("id")
        .values_list("action_flag", "object_repr", "change_message")
    )


def test_the_roles_are_groups_made_by_a_migration():
    assert set(Group.objects.values_list("name", flat=True)) >= ROLES
    operations = Group.objects.get(name="Operations")
    assert operations.permissions.filter(codename="cancel_hold").exists()
    assert (
        not Group.objects.get(name="Support")
        .permissions.exclude(codename__startswith="view_")
        .exists()
    )


def test_partner_management_issues_and_revokes_keys_and_the_log_says_who(
    client, partner, default_seller
):
    staff = staff_in(client, "Partner management")

    assert statuses(staff, "/admin/sellers/apikey/add/", "/admin/sellers/partner/") == [200, 200]
    assert statuses(staff, CHANGELIST, "/admin/network/flightleg/") == [403, 403]
    created = add_key(staff, partner)
    assert created.status_code == 200
    key = ApiKey.objects.get()
    staff.post("/admin/sellers/apikey/", {"action": "revoke", "_selected_action": [key.pk]})

    key.refresh_from_db()
    assert not key.is_active
    assert logged(staff.user) == [
        (ADDITION, str(key), '[{"added": {}}]'),
        (CHANGE, str(key), "Revoked; its tokens stop working at once."),
    ]
    entry = LogEntry.objects.filter(user=staff.user).last()
    assert entry.action_time is not None
    assert entry.object_id == str(key.pk)


def test_operations_cancel_a_hold_and_the_log_says_who(client, held):
    staff = staff_in(client, "Operations")

    assert statuses(
        staff,
        f"{CHANGELIST}{held.pk}/change/",
        "/admin/network/flightleg/",
        "/admin/network/seatconfiguration/",
    ) == [200, 200, 200]
    assert statuses(staff, "/admin/sellers/apikey/", "/admin/sellers/apikey/add/") == [403, 403]
    assert "cancel_unpaid_hold" in staff.get(CHANGELIST).content.decode()
    cancel(staff, held)

    held.refresh_from_db()
    assert held.status == OrderStatus.CANCELLED
    assert held.events.last().actor == "admin:operations"
    assert logged(staff.user) == [(CHANGE, str(held), "Cancelled unpaid hold; its seats are free.")]


def test_an_action_that_did_nothing_is_not_logged(client, paid):
    staff = staff_in(client, "Operations")

    cancel(staff, paid)

    assert logged(staff.user) == []


def test_support_reads_everything_and_changes_nothing(client, api, held, paid, partner_key):
    staff = staff_in(client, "Support")
    intent = PaymentIntent.objects.get(order=paid)
    key = partner_key.key

    pages = [
        CHANGELIST,
        f"{CHANGELIST}{paid.pk}/change/",
        "/admin/orders/paymentintent/",
        f"/admin/orders/paymentintent/{intent.pk}/change/",
        "/admin/sellers/apikey/",
        f"/admin/sellers/apikey/{key.pk}/change/",
        "/admin/sellers/partner/",
        "/admin/network/flightleg/",
        "/admin/network/scheduleload/",
        "/admin/fares/bundle/",
    ]
    assert statuses(staff, *pages) == [200] * len(pages)
    assert statuses(staff, "/admin/sellers/apikey/add/", "/admin/auth/user/") == [403, 403]
    assert (
        'name="_save"' not in staff.get(f"/admin/sellers/apikey/{key.pk}/change/").content.decode()
    )
    assert "cancel_unpaid_hold" not in staff.get(CHANGELIST).content.decode()
    cancel(staff, held)
    held.refresh_from_db()
    assert held.status == OrderStatus.ONHOLD
    assert logged(staff.user) == []

    # Never a key's secret after creation, a card number or a token, on any page.
    token = token_for(api, partner_key.raw)
    secret = partner_key.raw.split(".")[1]
    for page in pages:
        text = staff.get(page).content.decode()
        for never in (secret, key.secret_hash, "4111111111111111", token):
            assert never not in text, page


@pytest.mark.parametrize("role", sorted(ROLES))
def test_every_page_a_role_is_offered_opens(client, role, held, paid):
    staff = staff_in(client, role)

    index = staff.get("/admin/")

    offered = [m["admin_url"] for app in index.context["app_list"] for m in app["models"]]
    assert offered
    assert statuses(staff, *offered) == [200] * len(offered)
