"""A schedule uploaded in the back office (issue 18): its preview says which flights it
adds, retimes, changes and cancels and which bookings sit on them, written nowhere; the
confirm loads it as `manage.py load_schedule` does."""

from datetime import UTC, time, timedelta

import pytest
from django.contrib.admin.models import ADDITION, LogEntry
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test.utils import CaptureQueriesContext

from airline.backoffice import local_time
from airline.network.models import FlightLeg, ScheduleLoad
from airline.network.preview import schedule_preview
from airline.network.ssim import parse_ssim
from tests.network.ssim_builder import Leg, ssim_file
from tests.network.test_schedule_load import SAMPLES
from tests.offers.conftest import CST
from tests.orders import conftest as booking
from tests.orders import test_admin as bookings
from tests.orders.test_admin_roles import staff_in

pytestmark = pytest.mark.django_db

network, auth, travel_day, priced = (
    booking.network,
    booking.auth,
    booking.travel_day,
    booking.priced,
)
held, paid = bookings.held, bookings.paid
LOADS = "/admin/network/scheduleload/"
UPLOAD = f"{LOADS}upload/"


def pvd_chs(start, *, flight_101: dict | None, add_103=False) -> str:
    """The test network's MX101/102 again (MX101 as given, None: dropped), perhaps with a
    new MX103; its other flights dropped (nothing is sold on them)."""
    end = start + timedelta(days=60)
    legs = [Leg(102, "CHS", "PVD", time(10, 0), time(12, 5), start, end)]
    if flight_101 is not None:
        legs.append(Leg(101, "PVD", "CHS", start=start, end=end, **flight_101))
    if add_103:
        legs.append(Leg(103, "PVD", "CHS", time(18, 0), time(20, 5), start, end))
    return ssim_file(legs)


RETIMED_101 = {"departs": time(8, 30), "arrives": time(10, 35)}


def upload(client, text: str, name: str = "w27.ssim"):
    return client.post(UPLOAD, {"file": SimpleUploadedFile(name, text.encode("latin-1"))})


def confirm(client, preview_page, **overrides):
    form = {
        "confirm": "Load this schedule",
        "sha256": preview_page.context["sha256"],
        "version": preview_page.context["version"],
        **overrides,
    }
    return client.post(UPLOAD, form, follow=True)


def schedule_state():
    return (
        ScheduleLoad.objects.count(),
        sorted(FlightLeg.objects.values_list("pk", "departs_at", "is_cancelled")),
    )


def test_the_preview_lists_the_changes_and_the_bookings_on_them_and_writes_nothing(
    admin_client, network, held, paid, travel_day
):
    before = schedule_state()
    text = pvd_chs(network, flight_101=RETIMED_101, add_103=True)

    with CaptureQueriesContext(connection) as queries:
        page = upload(admin_client, text)

    assert page.status_code == 200, page.content.decode()[:3000]
    writes = [
        q["sql"]
        for q in queries.captured_queries
        if q["sql"].lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE"))
        and "django_session" not in q["sql"]
    ]
    assert writes == []
    assert schedule_state() == before
    preview = page.context["preview"]
    days = 61
    assert (len(preview.added), len(preview.retimed), len(preview.changed)) == (days, days, 0)
    assert (len(preview.cancelled), len(preview.removed)) == (0, 4 * days)  # 501 x2, 701, 702
    assert preview.unchanged == days  # MX102
    booked = [c for c in preview.retimed if c.bookings]
    assert [c.flight for c in booked] == [f"MX101 {travel_day} PVD-CHS"]
    assert booked[0].bookings == 2
    assert booked[0].change == retiming(
        FlightLeg.objects.get(flight_number=101, flight_date=travel_day),
        timedelta(minutes=90),  # 07:00 -> 08:30
        "America/New_York",
    )
    assert sorted(b.record_locator for b in preview.bookings) == sorted(
        [held.record_locator, paid.record_locator]
    )
    html = page.content.decode()
    for expected in (
        'id="count-added">61<',
        'id="count-retimed">61<',
        'id="count-removed">244<',
        'id="count-bookings">2<',
        held.record_locator,
        paid.record_locator,
        f"MX103 {travel_day} PVD-CHS",
        "Load this schedule",
    ):
        assert expected in html, expected


def test_confirming_loads_it_as_load_schedule_does_and_the_log_says_who(
    admin_client, admin_user, network, held, travel_day
):
    page = upload(admin_client, pvd_chs(network, flight_101=RETIMED_101, add_103=True))

    done = confirm(admin_client, page)

    load = ScheduleLoad.objects.first()
    assert load.file_name == "w27.ssim"
    assert (load.legs_created, load.legs_updated, load.legs_removed) == (61, 61, 244)
    leg = FlightLeg.objects.get(flight_number=101, flight_date=travel_day)
    assert leg.departs_at.astimezone(UTC).time() == time(13, 30)  # 08:30 EST
    assert FlightLeg.objects.filter(flight_number=103).count() == 61
    assert done.redirect_chain[-1][0] == f"/admin/network/scheduleload/{load.pk}/change/"
    assert f"Loaded w27.ssim (version {load.pk}): 61 flight-date legs created" in (
        done.content.decode()
    )
    entry = LogEntry.objects.get(user=admin_user, object_id=str(load.pk))
    assert entry.action_flag == ADDITION
    assert "61 flight-date legs created" in entry.change_message


def test_a_dropped_flight_with_bookings_shows_as_cancelled_with_them(
    admin_client, network, held, travel_day
):
    page = upload(admin_client, pvd_chs(network, flight_101=None))

    preview = page.context["preview"]
    assert [(c.flight, c.bookings) for c in preview.cancelled] == [
        (f"MX101 {travel_day} PVD-CHS", 1)
    ]
    assert len(preview.removed) == 60 + 4 * 61  # MX101's other days, and 501, 701, 702
    [impact] = preview.bookings
    assert impact.record_locator == held.record_locator
    assert impact.flights == (f"MX101 {travel_day} PVD-CHS: cancelled",)

    confirm(admin_client, page)

    assert FlightLeg.objects.get(flight_number=101, flight_date=travel_day).is_cancelled


def test_a_new_aircraft_is_a_change_not_a_retiming(admin_client, network, held):
    aircraft = {"departs": time(7, 0), "arrives": time(9, 5), "aircraft": "320"}
    preview = upload(
        admin_client, pvd_chs(network, flight_101={**aircraft, "configuration": "C12Y138"})
    ).context["preview"]

    assert (len(preview.retimed), len(preview.changed)) == (0, 61)
    assert preview.changed[0].change == "aircraft E75 Y76 -> 320 C12Y138"
    assert len(preview.bookings) == 1


def test_a_load_between_preview_and_confirm_shows_the_preview_again(admin_client, network):
    first = upload(admin_client, pvd_chs(network, flight_101=RETIMED_101))
    other = upload(admin_client, pvd_chs(network, flight_101=None), "other.ssim")
    confirm(admin_client, other)
    loads = ScheduleLoad.objects.count()

    again = confirm(admin_client, first)

    assert ScheduleLoad.objects.count() == loads
    assert again.context["preview"].retimed == []  # MX101 is gone now: it comes back
    assert len(again.context["preview"].added) == 61
    assert "The schedule changed since this preview" in again.content.decode()
    confirm(admin_client, again)
    assert ScheduleLoad.objects.count() == loads + 1


def test_an_expired_preview_loads_nothing(admin_client, network):
    page = upload(admin_client, pvd_chs(network, flight_101=RETIMED_101))
    cache.delete_pattern("*")
    before = schedule_state()

    done = confirm(admin_client, page)

    assert schedule_state() == before
    assert "That preview has expired; upload the file again." in done.content.decode()
    assert confirm(admin_client, page, sha256="not-a-hash").status_code == 200
    assert schedule_state() == before


def test_a_bad_file_is_refused_with_its_errors(admin_client, network):
    before = schedule_state()
    text = pvd_chs(network, flight_101=RETIMED_101).replace("PVD", "QQQ", 1)

    page = upload(admin_client, text)

    assert page.status_code == 200
    assert "This file cannot be loaded; nothing changed." in page.content.decode()
    assert "QQQ" in page.content.decode()
    assert schedule_state() == before


def test_the_file_loaded_last_changes_nothing(admin_client, network):
    text = pvd_chs(network, flight_101=RETIMED_101)
    confirm(admin_client, upload(admin_client, text))
    loads = ScheduleLoad.objects.count()

    page = upload(admin_client, text)

    assert page.context["preview"].same_as_last
    assert "This is the schedule loaded last" in page.content.decode()
    done = confirm(admin_client, page)
    assert "is the schedule loaded last; nothing changed" in done.content.decode()
    assert ScheduleLoad.objects.count() == loads


def test_operations_upload_and_support_may_not(client, network):
    operations = staff_in(client, "Operations")
    assert 'id="upload-schedule"' in operations.get(LOADS).content.decode()
    assert operations.get(UPLOAD).status_code == 200
    client.logout()

    support = staff_in(client, "Support")
    assert 'id="upload-schedule"' not in support.get(LOADS).content.decode()
    assert support.get(UPLOAD).status_code == 403
    assert upload(support, pvd_chs(network, flight_101=None)).status_code == 403


def test_the_preview_of_a_schedule_reads_the_file_as_the_loader_does(network):
    text = pvd_chs(network, flight_101=RETIMED_101)

    preview = schedule_preview(schedule=parse_ssim(text), sha256="x" * 64)

    assert preview.carriers == ["MX"]
    assert not preview.same_as_last
    assert preview.problems == []
    assert preview.changes_anything


def test_the_third_party_sample_previews_and_loads(admin_client):
    sample = (SAMPLES / "avionworx-sample.ssim").read_text(encoding="latin-1")

    page = upload(admin_client, sample, "avionworx-sample.ssim")

    preview = page.context["preview"]
    assert preview.carriers == ["XX"]
    assert preview.added
    assert (preview.retimed, preview.cancelled, preview.removed) == ([], [], [])
    assert f'id="count-added">{len(preview.added)}<' in page.content.decode()
    confirm(admin_client, page)
    assert FlightLeg.objects.filter(carrier="XX").count() == len(preview.added)


def test_times_are_local_to_each_station(network):
    end = network + timedelta(days=60)
    later = Leg(702, "CLT", "MSY", time(11, 40), time(12, 45), network, end, arrival_offset=CST)

    preview = schedule_preview(schedule=parse_ssim(ssim_file([later])), sha256="y" * 64)

    assert preview.retimed[0].change == retiming(
        FlightLeg.objects.get(flight_number=702, flight_date=network),
        timedelta(minutes=30),
        "America/Chicago",  # MSY's; the departure is CLT's, New York's zone
    )


def retiming(leg: FlightLeg, later: timedelta, arrival_zone: str) -> str:
    """What the preview says of `leg` moved `later`, in each station's local time (EST or
    EDT as the date falls)."""
    departs, arrives = leg.departs_at, leg.arrives_at
    return (
        f"departs {local_time(departs, 'America/New_York')}"
        f" -> {local_time(departs + later, 'America/New_York')}; "
        f"arrives {local_time(arrives, arrival_zone)}"
        f" -> {local_time(arrives + later, arrival_zone)}"
    )
