"""Back office for partners, sellers and keys (DESIGN.md §10)."""

import re

import pytest
from django.contrib.auth import get_user_model

from sellers.keys import hash_key
from sellers.models import ApiKey
from tests.conftest import token_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client(client):
    user = get_user_model().objects.create_user(
        "ops", password="pw", is_staff=True, is_superuser=True
    )
    client.force_login(user)
    return client


def add_key(staff_client, partner, **fields):
    form = {
        "partner": partner.pk,
        "seller": "",
        "name": "Agency X",
        "access_level": "read",
        "agency_code": "agx01",
        "allowed_bundles": "nice, nicer",
        "allowed_ancillary_categories": "",
        "requests_per_minute": 120,
        **fields,
    }
    return staff_client.post("/admin/sellers/apikey/add/", form, follow=True)


def test_creating_a_key_shows_the_secret_once(staff_client, partner, default_seller, api):
    response = add_key(staff_client, partner)

    key_html = r'<code id="issued-api-key">([0-9a-f]{12}\.[A-Za-z0-9_-]+)</code>'
    shown = re.search(key_html, response.content.decode())
    assert shown, response.content.decode()
    raw = shown.group(1)
    key = ApiKey.objects.get()
    assert key.secret_hash == hash_key(raw)
    assert (key.access_level, key.agency_code, key.allowed_bundles, key.requests_per_minute) == (
        "read",
        "AGX01",
        ["NICE", "NICER"],
        120,
    )
    token_for(api, raw)  # the shown key works

    change_page = staff_client.get(f"/admin/sellers/apikey/{key.pk}/change/").content.decode()
    listing = staff_client.get("/admin/sellers/apikey/").content.decode()
    assert raw not in change_page
    assert raw not in listing
    assert raw.split(".")[1] not in change_page + listing


def test_the_secret_never_travels_in_a_cookie_or_the_session(staff_client, partner):
    # The page is the answer to the POST itself: no redirect, so no message cookie.
    response = add_key(staff_client, partner)

    assert response.redirect_chain == []
    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    raw = re.search(r'id="issued-api-key">([^<]+)<', response.content.decode()).group(1)
    secret = raw.split(".")[1]
    # Django's message cookie is signed, not encrypted: before issue 18 the key was in it.
    assert all(secret not in morsel.OutputString() for morsel in response.cookies.values())
    assert "messages" not in response.cookies
    session = staff_client.session
    assert all(secret not in str(value) for value in session.values())
    # And no later page shows it: the next page carries no pending message either.
    assert secret not in staff_client.get("/admin/sellers/apikey/").content.decode()


def test_a_seller_key_must_belong_to_the_keys_partner(staff_client, partner, stranger_seller):
    response = add_key(staff_client, partner, seller=stranger_seller.pk)

    assert ApiKey.objects.count() == 0
    assert "must belong to the key" in response.content.decode()


def test_editing_permissions_takes_effect_for_existing_tokens(staff_client, partner_key, api):
    key = partner_key.key
    form = {
        "name": key.name,
        "access_level": "read",
        "agency_code": "",
        "allowed_bundles": "",
        "allowed_ancillary_categories": "BAGGAGE",
        "requests_per_minute": 5,
    }

    staff_client.post(f"/admin/sellers/apikey/{key.pk}/change/", form)

    key.refresh_from_db()
    assert (
        key.access_level,
        key.agency_code,
        key.allowed_ancillary_categories,
        key.requests_per_minute,
    ) == ("read", "", ["BAGGAGE"], 5)


def test_the_revoke_action_revokes_and_tokens_stop(staff_client, partner_key, api):
    token = token_for(api, partner_key.raw)

    staff_client.post(
        "/admin/sellers/apikey/", {"action": "revoke", "_selected_action": [partner_key.key.pk]}
    )

    partner_key.key.refresh_from_db()
    assert not partner_key.key.is_active
    assert partner_key.key.revoked_at is not None
    assert api.get("/json/v1/whoami", HTTP_AUTHORIZATION=f"Bearer {token}").status_code == 401


def test_keys_cannot_be_deleted(staff_client, partner_key):
    response = staff_client.get(f"/admin/sellers/apikey/{partner_key.key.pk}/delete/")

    assert response.status_code == 403


def test_make_default_moves_the_default(staff_client, default_seller, other_seller):
    staff_client.post(
        "/admin/sellers/seller/", {"action": "make_default", "_selected_action": [other_seller.pk]}
    )

    default_seller.refresh_from_db()
    other_seller.refresh_from_db()
    assert (default_seller.is_default, other_seller.is_default) == (False, True)


@pytest.mark.parametrize(
    "path", ["/admin/sellers/apikey/", "/admin/sellers/partner/", "/admin/sellers/seller/"]
)
def test_the_back_office_is_staff_only(client, path, partner):
    # force_login: client.login() calls authenticate() without the request, which the
    # admin's login throttle (django-axes) needs.
    client.force_login(get_user_model().objects.create_user("agent", is_staff=False))

    response = client.get(path)

    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")
