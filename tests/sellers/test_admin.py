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


def key_form(staff_client, partner, **fields):
    """The add form's fields as the browser sends them, with the form's one-time token."""
    page = staff_client.get("/admin/sellers/apikey/add/").content.decode()
    token = re.search(r'name="form_once" value="([^"]+)"', page).group(1)
    return {
        "partner": partner.pk,
        "seller": "",
        "name": "Agency X",
        "access_level": "read",
        "agency_code": "agx01",
        "allowed_bundles": "nice, nicer",
        "allowed_ancillary_categories": "",
        "requests_per_minute": 120,
        "form_once": token,
        **fields,
    }


def add_key(staff_client, partner, **fields):
    form = key_form(staff_client, partner, **fields)
    return staff_client.post("/admin/sellers/apikey/add/", form, follow=True)


def shown_key(response) -> str | None:
    shown = re.search(r'<code id="issued-api-key">([^<]+)</code>', response.content.decode())
    return shown.group(1) if shown else None


def test_creating_a_key_shows_the_secret_once(staff_client, partner, default_seller, api):
    response = add_key(staff_client, partner)

    raw = shown_key(response)
    assert re.fullmatch(r"[0-9a-f]{12}\.[A-Za-z0-9_-]+", raw or ""), response.content.decode()
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


def test_the_create_redirects_and_a_reload_shows_no_secret_and_issues_nothing(
    staff_client, partner
):
    response = add_key(staff_client, partner)
    key = ApiKey.objects.get()
    issued_url = f"/admin/sellers/apikey/{key.pk}/issued/"
    assert response.redirect_chain == [(issued_url, 302)]
    assert "no-store" in response["Cache-Control"]
    secret = shown_key(response).split(".")[1]

    reload = staff_client.get(issued_url)

    assert reload.status_code == 200
    assert "no-store" in reload["Cache-Control"]
    assert shown_key(reload) is None
    assert secret not in reload.content.decode()
    assert 'id="issued-api-key-gone"' in reload.content.decode()
    assert ApiKey.objects.count() == 1


def test_the_same_form_sent_again_issues_no_second_key(staff_client, partner):
    form = key_form(staff_client, partner)
    first = staff_client.post("/admin/sellers/apikey/add/", form, follow=True)
    assert shown_key(first)

    again = staff_client.post("/admin/sellers/apikey/add/", form, follow=True)

    assert ApiKey.objects.count() == 1
    assert again.redirect_chain == [("/admin/sellers/apikey/", 302)]
    assert shown_key(again) is None
    assert "This form was sent already" in again.content.decode()
    # A POST without the form's token (not from the form) issues nothing either.
    staff_client.post("/admin/sellers/apikey/add/", {**form, "form_once": ""})
    assert ApiKey.objects.count() == 1


def test_a_form_sent_back_with_errors_can_be_corrected_and_sent(staff_client, partner):
    form = key_form(staff_client, partner, agency_code="not a code!")
    refused = staff_client.post("/admin/sellers/apikey/add/", form)
    assert refused.status_code == 200
    assert ApiKey.objects.count() == 0

    sent = staff_client.post(
        "/admin/sellers/apikey/add/", {**form, "agency_code": "AGX01"}, follow=True
    )

    assert shown_key(sent)
    assert ApiKey.objects.count() == 1


def test_the_secret_never_travels_in_a_cookie_or_the_session(staff_client, partner):
    response = add_key(staff_client, partner)

    assert response.status_code == 200
    raw = shown_key(response)
    secret = raw.split(".")[1]
    # Django's message cookie is signed, not encrypted: no message carries the key.
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
