"""Itinerary exchange (SPEC.md §3 "Change flow for itineraries", §4.12 ReshopItinerary,
§4.13 quote order, §4.10 AcceptReshopOffer; DESIGN.md §7, §11 "Reshop and quote").

1. `reshop_itinerary` shops replacement journeys for the order's journeys: each in the
   bundle of the item it replaces (or the cabin asked for), priced as the difference
   against what that item cost, plus the bundle's change fee. A bundle that does not
   allow changes (No Flex) is refused. The offers are stored with source "reshop": only
   quote order prices them (ERR-3004 on price offer).
2. `order_quote` prices the chosen replacements again on live inventory and stores the
   quote under a new offer id (source "quote") with the order's version.
3. AcceptReshopOffer (a change-order action) applies a quote to the order it was made
   for, as it still stands in what was quoted (its replaced items live, its status, the
   seats and bags of those journeys: an unrelated change such as UpdateContact leaves a
   quote good): the new seats sold and the old released in one inventory call (legs
   locked in id order, as every sale), the old item CANCELLED, paid seats and bags moved
   to the new flights where they exist, tickets reissued (old coupons EXCHANGED), and the
   difference collected by card, or given back as the bundle says.

Every reshop offer and quote says what happens to each seat and bag of a replaced journey
(`serviceChanges`: MOVED at the price paid, or DROPPED with its value given back or netted
against the difference), and its `priceDifferential` counts the dropped ones in `oldTotal`:
its `balanceDelta` is what accepting it charges or gives back, to the cent.

The modules, in the order a request meets them: `reshop` (1), `quote` (2), `accept` and
`apply` (3, the check and the write of the change-order action); below them
`replacements` (a replacement priced and the rules on what may change), `moves` (where
seats and bags go), `wire` (what the client reads) and `records` (what the offer store
keeps).
"""
