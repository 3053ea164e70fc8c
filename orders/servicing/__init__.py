"""Changing an order after it is booked (SPEC.md §4.10-4.13; DESIGN.md §7, §11):
change order as a table of actions (`changes`), each a check that makes a `plan`
and a write that carries it out; reshop, what a change would cost (`reshop`, with
`reshop_request`, what each instruction's handler receives); cancelling journeys
and orders (`cancel`); correcting passengers and contacts (`amend`); the airline's
own schedule changes (`airline_changes`); and itinerary exchange, reshop to quote
to accept (`exchange/`). It builds on booking and money, which import nothing of it.
"""
