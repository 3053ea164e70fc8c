"""Bookings in the back office (DESIGN.md §10), read-only: the bookings list with its
search and filters, the booking page with its tables, and the money records. A module
for each thing a reader looks for:

- `bookings`: the list and the page (OrderAdmin), and the one write, "Cancel unpaid
  hold", through the service the API uses (STYLE.md 11);
- `booking_page`: what the page's tables share (flight status in words, deliveries);
- `inlines`: the page's tables (passengers, journeys, segments, payments, history...);
- `filters`: the list's filters (holds expiring, schedule changed, disputed...);
- `flags`: what flags a booking (a cancelled flight, a dispute, money given back);
- `search`: the search box's words;
- `money`: airline credit, refunds and card charges.

A booking on a flight the schedule has since cancelled (FlightLeg.is_cancelled: dropped by
a newer schedule while it still had sales) is flagged wherever its status shows: its
status reads CONFIRMED, but the passengers have no flight."""

from orders.admin import bookings, money

__all__ = ["bookings", "money"]
