"""A seat blocked in the back office of one node, while clients book seats on its flight
through two (issue 24 item 3): from the block's commit on, both nodes refuse to sell it
(the booking re-reads the configuration under its locks) and, within 1 s, no worker of
either shows it open on a seat map (its layout cache follows the network version)."""

import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
import requests
from django.contrib.auth import get_user_model

from airline.fares.services import fares_ensure_demo
from airline.network.demo_fleet import DEMO_FLEET
from airline.network.demo_schedule import distance_km
from airline.network.models import FlightLeg
from airline.network.services import fleet_ensure
from orders.models import Service
from sellers.models import Partner
from tests.e2e.servers import gunicorn, manage, wait_until_ready
from tests.e2e.test_two_nodes import bearer, env_of_node, schedule
from tests.offers.conftest import first_day, search_body
from tests.orders.conftest import booking_body
from tests.orders.test_admin_flights import configuration_form
from tests.sellers.factories import ApiKeyFactory, PartnerFactory, SellerFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True, serialized_rollback=True)]

ONE = [{"type": "ADT"}]
STALE_SECONDS = 1.0  # issue 24 target: a seat map is right within 1 s of the block's commit
WATCH_SECONDS = 5.0  # how long after the block both nodes are watched
PASSWORD = "seat-block-e2e-password"


def priced_seat(node, headers, day):
    """A priced MX101 offer for one adult and its seat map (the first leg's): (priced
    offer, seat offer id, units by designator)."""
    found = requests.post(
        node.url + "/json/v1/offers",
        json=search_body(("PVD", "CHS", day), passengers=ONE),
        headers=headers,
        timeout=10,
    ).json()["data"]["offers"]
    offer = next(o for o in found if o["offerItems"][0]["flight"]["flightNumbers"] == ["MX101"])
    selection = {
        "offerId": offer["offerId"],
        "offerItemIds": [offer["offerItems"][0]["offerItemId"]],
    }
    priced = requests.post(
        node.url + "/json/v1/offers/price",
        json={"selections": [selection], "passengers": ONE},
        headers=headers,
        timeout=10,
    ).json()["data"]
    return (priced, *seat_map(node, headers, priced))


def seat_map(node, headers, priced):
    response = requests.post(
        f"{node.url}/json/v1/offers/{priced['offer']['offerId']}/seats",
        json={"offerItemIds": [i["offerItemId"] for i in priced["offer"]["items"]]},
        headers=headers,
        timeout=10,
    )
    assert response.status_code == 200, response.text
    data = response.json()["data"]
    units = {
        u["designator"]: u
        for d in data["legSeatMaps"][0]["decks"]
        for c in d["compartments"]
        for u in c["units"]
    }
    return data["offerId"], units


def book_seat(node, headers, priced, offer_id, unit):
    pricing = unit["passengerPricing"][0]
    seat = {
        "offerId": offer_id,
        "offerItemId": pricing["offerItemId"],
        "passengerIds": [pricing["paxRefId"]],
        "seat": {"row": int(unit["designator"][:-1]), "column": unit["designator"][-1]},
    }
    return requests.post(
        node.url + "/json/v1/orders",
        json=booking_body(priced, ancillaries=[seat]),
        headers=headers,
        timeout=10,
    )


def admin_session(node, username):
    """A requests session signed in to the node's back office, as staff do."""
    session = requests.Session()
    session.get(node.url + "/admin/login/", timeout=10)
    signed_in = session.post(
        node.url + "/admin/login/?next=/admin/",
        data={
            "username": username,
            "password": PASSWORD,
            "csrfmiddlewaretoken": session.cookies["csrftoken"],
        },
        timeout=10,
    )
    assert signed_in.url.endswith("/admin/"), signed_in.text[:2000]
    return session


def test_a_seat_blocked_on_one_node_is_refused_by_both_within_a_second(tmp_path):
    partner = PartnerFactory()
    SellerFactory(partner=partner, is_default=True)
    raw = ApiKeyFactory(partner=Partner.objects.get(pk=partner.pk), requests_per_minute=10**8).raw
    get_user_model().objects.create_user("ops", password=PASSWORD, is_staff=True, is_superuser=True)
    fleet_ensure(DEMO_FLEET)
    fares_ensure_demo([("PVD", "CHS", distance_km("PVD", "CHS"))])
    env = env_of_node()
    manage(env, "load_schedule", str(schedule(tmp_path, 101)))
    day = first_day() + timedelta(days=5)
    configuration = FlightLeg.objects.get(flight_number=101, flight_date=day).configuration

    with (
        gunicorn(env, tmp_path / "a.log", workers=2) as a,
        gunicorn(env, tmp_path / "b.log", workers=2) as b,
    ):
        assert wait_until_ready(a).status_code == 200
        assert wait_until_ready(b).status_code == 200
        headers = bearer(a, raw)
        nodes = (a, b)
        # Seat maps shown before the block, on both nodes (their workers' layouts cached).
        shown = [priced_seat(node, headers, day) for node in nodes for _ in range(3)]
        units = shown[0][2]
        target = next(d for d, u in units.items() if u["availability"] == "Open")
        assert all(s[2][target]["availability"] == "Open" for s in shown)
        staff = admin_session(a, "ops")
        page = staff.get(f"{a.url}/admin/network/seatconfiguration/{configuration.pk}/change/")
        csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)

        # Clients book other seats of the flight through both nodes all along.
        stop = threading.Event()

        def traffic(node):
            booked = 0
            while not stop.is_set():
                priced, offer_id, seats = priced_seat(node, headers, day)
                free = [
                    u
                    for d, u in seats.items()
                    if d != target and u["availability"] == "Open" and u.get("passengerPricing")
                ]
                if not free:
                    break  # every other seat is sold: the traffic has done its part
                if book_seat(node, headers, priced, offer_id, free[booked % len(free)]).ok:
                    booked += 1
            return booked

        with ThreadPoolExecutor(max_workers=2) as pool:
            clients = [pool.submit(traffic, node) for node in nodes]
            form = {
                **configuration_form(configuration, f'["{target}"]'),
                "csrfmiddlewaretoken": csrf,
            }
            blocked = staff.post(
                f"{a.url}/admin/network/seatconfiguration/{configuration.pk}/change/",
                data=form,
                headers={"Referer": page.url},
                timeout=30,
            )
            committed = time.monotonic()  # the edit commits before its answer is sent
            assert blocked.status_code == 200, blocked.text[:2000]  # the list, after its redirect

            # Booking the seat from a map shown before the block: refused at once.
            refusals = [
                book_seat(nodes[n // 3], headers, priced, offer_id, seats[target])
                for n, (priced, offer_id, seats) in enumerate(shown)
            ]
            # Seat maps of both nodes (all their workers) until WATCH_SECONDS: the last
            # time either showed the seat open.
            last_open = committed
            answers = 0
            while time.monotonic() - committed < WATCH_SECONDS:
                for node in nodes:
                    _priced, _offer_id, seats = priced_seat(node, headers, day)
                    answers += 1
                    if seats[target]["availability"] == "Open":
                        last_open = time.monotonic()
            stop.set()
            booked = sum(c.result() for c in clients)

    assert [r.status_code for r in refusals] == [400] * len(shown), [r.text for r in refusals]
    assert {r.json()["error"]["code"] for r in refusals} == {"ERR-4001"}
    assert not Service.objects.filter(
        status=Service.Status.ACTIVE,
        flight_leg__configuration=configuration,
        seat_row=int(target[:-1]),
        seat_column=target[-1],
    ).exists()
    assert booked > 0  # the traffic did book
    stale = last_open - committed
    print(f"seat {target} shown open {stale:.2f} s after the block; {answers} seat maps")
    assert stale <= STALE_SECONDS, f"seat {target} still shown open {stale:.2f} s after its block"
