"""Orders benchmark. Run with `make bench` (or `python -m benchmarks.orders`).

A real gunicorn (2 workers) on PostgreSQL and Redis (db 3) against a fresh scratch
database `airline_bench`, seeded with the demo airline, serves the order endpoints; load
comes from 8 client processes. Every booking is a round trip for 2 ADT + 1 CHD.

- create order, on hold, paid by card, paid by card through NDC OrderCreate (XML in,
  IATA_OrderViewRS out: the same booking as the JSON one, target p95 <= 1.5x the JSON
  card booking's), and on hold with one seat and one bag in the same request (create
  order's `ancillaries`, from the priced offer's own seat map and
  service list): server time (median, p95) from the service's own access-log line.
  Each priced offer becomes one order, so the clients first search and price their own
  offers (on many markets and days, so that no flight runs out of seats), and fetch the
  seat maps and service lists, before the timed phases, which create orders only.
  Phases alternate hold, card, NDC card and hold-with-ancillaries, REPEATS of each.
- holds per second at 8 clients (the median of the REPEATS phases), as a ratio to the
  same holds' own SQL statements replayed by `pgbench -f` at the same concurrency
  (-c 8 -j 2) on the bench database, right after each hold phase and for as long as it
  took (benchmarks/replay.py: the statements are captured at bench time from holds of
  the benchmark's own offers booked in this process); target >= 0.50x. Beside it the
  CPU per hold of each (from /proc), and the service's CPU per hold against
  PostgreSQL's (target <= 2x). Then the same SQL served over HTTP by the same clients,
  twice: bare (benchmarks/floor.py) and behind the service's framework with nothing of a
  booking (benchmarks/floor_urls.py): what the stack, and then Django and DRF, leave the
  service's own work and the booking's own logic at the target's rate.
- orders per second at 8 clients, as a ratio to pgbench's built-in TPC-B-like
  transaction rate at 8 clients on a scratch database `<BENCH_DATABASE>_pgbench`
  (`airline_bench_pgbench`; PGBENCH_DATABASE names another), measured
  before, between and after the order phases (median): the old reference, kept for
  comparison with earlier runs; and the CPU per order of the gunicorn processes, of
  PostgreSQL, of the clients and of the whole machine in those phases (from /proc),
  which says where the two cores go.
- order retrieve by order id and by record locator: server time at 8 clients.
- OrderList with 100k orders for the key's agency (written by SQL, plus 20k of another
  agency interleaved): server time at 8 clients for pages of 100 and 1000, first (the
  orders just booked through the API come first) and deep (lastIndex mid-way), and with
  lastName / departureDate filters; beside each, the same page in this process one at a
  time and the SQL time of its queries by EXPLAIN ANALYZE, then the plan of the orders
  query where it is slowest.
- seat maps of the largest aircraft (the A320, C12Y138: 150 seats), for a round trip on
  A320 nonstops in economy: POST /offers/{offerId}/seats for a priced offer and POST
  /orders/{orderId}/seats for a hold, one leg (the outbound item) and both: server
  time at 8 clients.
- AcceptOffer (PATCH /orders/{orderId}) on holds: each client adds one open seat to each
  of its own A320 holds, then a CB1 bag to each; seat maps and service lists are fetched
  before the timed phases and the seats handed out so that no two requests want the same
  one. Server time at 8 clients; every answer but 200 is counted and printed.

Bookings carry no Idempotency-Key (the header is optional; it would add a claim row).

Its modules, by what a reader looks for: `scenarios` (the run in order and the
create-order phase), `bookings` (the party, payments and priced offers booked), `load`
(client processes, timed request phases, CPU and the server's own times), `seats` (seat
maps and AcceptOffer), `order_list` (OrderList's data and its SQL), `references`
(pgbench and the hold replay), `report` (the tables) and `sizes` (how big a run is).
"""
