"""The demo airline's fleet: the two configurations its demo schedule files
(airline/network/demo_schedule.py). Data, loaded by `seed_demo`; edit in the admin."""

from airline.network.fleet import CabinSpec

DEMO_FLEET = [
    {
        "iata_code": "320",
        "carrier_code": "32C",
        "name": "Airbus A320",
        "configuration": "C12Y138",
        "configuration_name": "A320 two-class",
        "blocked_seats": [],
        "cabins": [
            CabinSpec("C", "Business", 1, 3, "AC DF"),
            # Rows 6-28 six abreast; the over-wing exits are rows 12 and 13.
            CabinSpec(
                "Y", "Economy", 6, 28, "ABC DEF", exit_rows=(12, 13), extra_legroom_rows=(6, 7)
            ),
        ],
    },
    {
        "iata_code": "E75",
        "carrier_code": "E7Y",
        "name": "Embraer 175",
        "configuration": "Y76",
        "configuration_name": "E175 single-class",
        "blocked_seats": [],
        "cabins": [
            CabinSpec("Y", "Economy", 1, 19, "AB CD", exit_rows=(10,), extra_legroom_rows=(1, 2)),
        ],
    },
]
