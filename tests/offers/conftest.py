"""A small network for shopping tests, loaded through the real SSIM loader, with demo
fares for its markets: from tomorrow for 60 days,

- MX101/102  PVD-CHS-PVD nonstop, E175 (economy only), daily
- MX501      PVD-CHS-TPA direct one-stop, A320 (business and economy), daily; its
             CHS-TPA leg is filed "subject to government approval" (DEI 901)
- MX701/702  PVD-CLT, CLT-MSY: PVD-MSY by connection only (75 minutes at CLT)
"""

from datetime import UTC, datetime, time, timedelta
from io import StringIO

import pytest
from django.core.management import call_command

from airline.fares.services import fares_ensure_demo
from airline.network.demo_fleet import DEMO_FLEET
from airline.network.demo_schedule import distance_km
from airline.network.itineraries import reset_network_index
from airline.network.services import fleet_ensure
from tests.conftest import bearer, token_for
from tests.network.ssim_builder import Leg, ssim_file
from tests.replay import replayed

EST = timedelta(hours=-5)
CST = timedelta(hours=-6)
MARKETS = [
    ("PVD", "CHS"),
    ("CHS", "PVD"),
    ("CHS", "TPA"),
    ("PVD", "TPA"),
    ("PVD", "CLT"),
    ("CLT", "MSY"),
]


def first_day():
    return datetime.now(tz=UTC).date() + timedelta(days=1)


@pytest.fixture
def network(db, tmp_path_factory):
    """The first day the network flies (tomorrow); loaded through the SSIM loader once,
    then copied in from what it wrote (tests/replay.py), in each test's transaction."""
    start = first_day()
    replayed(("shopping network", start), lambda: _load_network(start, tmp_path_factory))
    reset_network_index()
    yield start
    reset_network_index()


def _load_network(start, tmp_path_factory):
    end = start + timedelta(days=60)
    fleet_ensure(DEMO_FLEET)
    legs = [
        Leg(101, "PVD", "CHS", time(7, 0), time(9, 5), start, end),
        Leg(102, "CHS", "PVD", time(10, 0), time(12, 5), start, end),
        Leg(
            501,
            "PVD",
            "CHS",
            time(13, 0),
            time(15, 5),
            start,
            end,
            aircraft="320",
            configuration="C12Y138",
        ),
        Leg(
            501,
            "CHS",
            "TPA",
            time(15, 50),
            time(17, 20),
            start,
            end,
            sequence=2,
            aircraft="320",
            configuration="C12Y138",
            segment_data=[(901, "SUBJECT TO GOVERNMENT APPROVAL")],
        ),
        Leg(701, "PVD", "CLT", time(8, 0), time(9, 55), start, end),
        Leg(702, "CLT", "MSY", time(11, 10), time(12, 15), start, end, arrival_offset=CST),
    ]
    path = tmp_path_factory.mktemp("network") / "net.ssim"
    path.write_text(ssim_file(legs))
    call_command("load_schedule", str(path), stdout=StringIO())
    fares_ensure_demo((o, d, distance_km(o, d)) for o, d in MARKETS)


@pytest.fixture
def auth(api, partner_key, network):
    """Bearer headers of a full-access partner key acting as its default seller."""
    return bearer(token_for(api, partner_key.raw))


def search_body(*directions, passengers=None, **extra):
    """originDestinations from (origin, destination, date) triples."""
    return {
        "originDestinations": [
            {"origin": o, "destination": d, "departureDate": day.isoformat()}
            for o, d, day in directions
        ],
        "passengers": passengers or [{"type": "ADT"}],
        **extra,
    }
