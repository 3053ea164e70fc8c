"""Create order (SPEC.md §3, §4.7; DESIGN.md §8): a priced offer booked on hold or paid
by card.

Every write is one transaction: the order and its seats are written together or not at
all. A card booking reserves first (the order PENDING with its seats and its payment
intent, committed), then charges the card under the intent (no row is locked while a
gateway thinks), then confirms the order and attaches the charge in a second
transaction; a refused card gives the reservation back, a failed confirmation refunds
(orders/money/intents.py), and whatever a dead worker leaves the reconciler settles
(orders/booking/reconcile.py).

The modules: `create` (order_create, the flow), `priced` (the offer's journeys and the
check that they are still as priced), `paying` (hold, credit, card and what a refused
card undoes) and `writes` (the rows of an order, which imports and exchanges write too);
beside them `ancillaries` (seats and services, sold with the booking or later by a
change), `holds` (unpaid holds: their limit, cancelling one, expiring those past it),
`imports` (bookings made in another channel) and `reconcile` (the payment reconciler:
what a dead worker left pending is confirmed, given back or refunded).
"""
