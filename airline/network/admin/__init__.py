"""Back office for stations, fleet, booking classes, the schedule and inventory.

Fleet and booking classes are edited here; the schedule comes only from SSIM files
(`load_schedule`, or an upload here that previews its changes first), so schedule and
inventory screens are read-only. Times are shown in the station's own zone and say which
(docs/operators/back-office.md). Each module registers its pages when imported."""

from airline.network.admin import aircraft, legs, schedule, stations

__all__ = ["aircraft", "legs", "schedule", "stations"]
