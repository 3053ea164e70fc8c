"""Network back office: fleet and booking classes editable, schedule and inventory read-only."""

import pytest
from django.contrib.auth import get_user_model

from airline.network.models import CabinLayout, FlightLeg
from tests.network.factories import FlightLegFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(client):
    client.force_login(
        get_user_model().objects.create_user("ops", is_staff=True, is_superuser=True)
    )
    return client


@pytest.mark.parametrize(
    "model",
    [
        "station",
        "aircrafttype",
        "seatconfiguration",
        "bookingclass",
        "scheduleload",
        "scheduledleg",
        "flightleg",
    ],
)
def test_every_network_list_renders(staff, model):
    FlightLegFactory()

    assert staff.get(f"/admin/network/{model}/").status_code == 200


def test_a_flight_date_leg_shows_its_inventory_read_only(staff):
    leg = FlightLegFactory()

    page = staff.get(f"/admin/network/flightleg/{leg.pk}/change/")

    assert page.status_code == 200
    assert page.content.decode().count('<td class="field-rbd">') == 9  # J C D, Y B M H K L
    assert staff.post(f"/admin/network/flightleg/{leg.pk}/delete/").status_code == 403
    assert FlightLeg.objects.filter(pk=leg.pk).exists()


def test_a_cabin_layout_can_be_edited(staff):
    configuration = FlightLegFactory().configuration
    economy = configuration.cabins.get(cabin="Y")
    form = {
        "aircraft_type": configuration.aircraft_type_id,
        "code": configuration.code,
        "name": "Renamed",
        "blocked_seats": '["12A"]',
        "cabins-TOTAL_FORMS": "2",
        "cabins-INITIAL_FORMS": "2",
        "cabins-MIN_NUM_FORMS": "0",
        "cabins-MAX_NUM_FORMS": "1000",
    }
    for i, cabin in enumerate(configuration.cabins.order_by("first_row")):
        form.update(
            {
                f"cabins-{i}-id": cabin.pk,
                f"cabins-{i}-configuration": configuration.pk,
                f"cabins-{i}-cabin": cabin.cabin,
                f"cabins-{i}-name": cabin.name,
                f"cabins-{i}-first_row": cabin.first_row,
                f"cabins-{i}-last_row": cabin.last_row + (1 if cabin.pk == economy.pk else 0),
                f"cabins-{i}-seat_letters": cabin.seat_letters,
                f"cabins-{i}-skipped_rows": "[]",
                f"cabins-{i}-exit_rows": "[10]" if cabin.pk == economy.pk else "[]",
                f"cabins-{i}-extra_legroom_rows": "[]",
            }
        )

    response = staff.post(f"/admin/network/seatconfiguration/{configuration.pk}/change/", form)

    assert response.status_code == 302, response.content.decode()[:2000]
    assert CabinLayout.objects.get(pk=economy.pk).last_row == 13
    configuration.refresh_from_db()
    assert configuration.blocked_seats == ["12A"]
