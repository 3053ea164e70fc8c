"""Network back office: fleet and booking classes editable, schedule and inventory read-only."""

from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth import get_user_model

from airline.network.inventory import inventory_sell
from airline.network.models import CabinLayout, FlightLeg, LegInventory, ScheduleLoad
from tests.network.factories import FlightLegFactory
from tests.network.test_schedule_load import JAN, load, pvd_chs

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


def test_plural_labels_read_as_english(staff):
    text = staff.get("/admin/network/").content.decode()

    assert "Booking classes" in text
    assert "Booking classs" not in text
    assert (
        "Leg inventorys"
        not in staff.get(
            f"/admin/network/flightleg/{FlightLegFactory().pk}/change/"
        ).content.decode()
    )


def test_the_schedule_load_record_names_the_flights_removed_and_kept(staff, tmp_path):
    load(tmp_path, [pvd_chs(), pvd_chs(number=102, origin="CHS", destination="PVD")])
    booked = FlightLeg.objects.get(flight_number=101, flight_date=JAN)
    inventory_sell(leg_ids=[booked.pk], rbd="Y", seats=2)

    load(tmp_path, [pvd_chs(start=JAN + timedelta(days=1))], "v2.ssim")

    record = ScheduleLoad.objects.first()
    assert record.flights_kept_with_sales == ["MX101 2027-01-04 PVD-CHS"]
    assert len(record.flights_removed) == 7
    assert "MX102 2027-01-06 CHS-PVD" in record.flights_removed
    page = staff.get(f"/admin/network/scheduleload/{record.pk}/change/").content.decode()
    assert "Kept, cancelled, because they have sales" in page
    assert "MX101 2027-01-04 PVD-CHS" in page
    assert "MX102 2027-01-06 CHS-PVD" in page
    assert "Loaded (UTC)" in page


def test_the_flight_list_flags_a_cancelled_flight_and_labels_its_times(staff):
    FlightLegFactory(is_cancelled=True)

    text = staff.get("/admin/network/flightleg/").content.decode()

    assert "CANCELLED by schedule, has bookings" in text
    assert "Departs (local time)" in text
    assert "2027-03-01 09:00 EST" in text  # 14:00 UTC at PVD


def djangos_rows(changelist) -> list[str]:
    """The list's rows as Django's own admin writes them, cell by cell."""
    from django.contrib.admin.templatetags.admin_list import results

    return ["".join(row) for row in results(changelist)]


@pytest.mark.parametrize(
    "query",
    [
        {},
        {"o": "12"},  # by load factor
        {"o": "-13.2", "q": "PVD", "is_cancelled__exact": "1"},  # links keep the filters
    ],
)
def test_the_flight_list_writes_the_rows_django_would(staff, query):
    # FlightLegChangeList writes each row in one pass (airline.backoffice_lists.OnePassRows):
    # the same bytes as Django's items_for_result, which a Django upgrade may change.
    sold = FlightLegFactory()
    inventory_sell(leg_ids=[sold.pk], rbd="Y", seats=2)
    FlightLegFactory(is_cancelled=True, origin_id="CHS", destination_id="PVD")
    bare = FlightLegFactory(departs_at=datetime(2027, 1, 4, 17, 0, tzinfo=UTC))
    LegInventory.objects.filter(leg=bare).delete()  # no capacity, no load factor

    page = staff.get("/admin/network/flightleg/", query)

    changelist = page.context["cl"]
    assert changelist.results_table is not None
    written = [row[0] for row in changelist.results_table["results"]]
    assert written == djangos_rows(changelist)
    assert len(written) == (1 if "q" in query else 3)
    text = page.content.decode()
    for row in written:
        assert f"<tr>{row}</tr>" in text


def test_with_one_pass_rows_off_django_writes_the_same_rows(staff, settings):
    FlightLegFactory()
    on = staff.get("/admin/network/flightleg/").content.decode()
    settings.ADMIN_ONE_PASS_ROWS = False

    page = staff.get("/admin/network/flightleg/")

    assert page.context["cl"].results_table is None
    row = djangos_rows(page.context["cl"])[0]
    assert row in page.content.decode()
    assert row in on


def test_a_popup_flight_list_is_written_by_django(staff):
    FlightLegFactory()

    page = staff.get("/admin/network/flightleg/", {"_popup": "1"})

    assert page.context["cl"].results_table is None
    assert djangos_rows(page.context["cl"])[0] in page.content.decode()


@pytest.mark.parametrize("order", ["12", "-12"])
def test_legs_of_the_same_load_are_listed_oldest_first(staff, order):
    # Thousands of legs tie on load; oldest first is what keeps that sort cheap (the
    # top-100 sort then turns each tied leg away at once).
    tied = [FlightLegFactory().pk for _ in range(3)]
    fuller = FlightLegFactory()
    inventory_sell(leg_ids=[fuller.pk], rbd="Y", seats=2)

    page = staff.get("/admin/network/flightleg/", {"o": order})

    listed = [leg.pk for leg in page.context["cl"].result_list]
    assert [pk for pk in listed if pk in tied] == sorted(tied)
    assert listed.index(fuller.pk) == (3 if order == "12" else 0)
