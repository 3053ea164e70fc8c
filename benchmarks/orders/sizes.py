"""How big the orders benchmark runs: clients, phases and data, each shrunk by
`BENCH_TINY` (benchmarks.common.tiny)."""

from benchmarks.common import (
    tiny,
)

CLIENTS = tiny(8, 2)
REPEATS = tiny(3, 1)  # phases of each payment type; every rate is the median of these
ORDERS_PER_CLIENT = tiny(30, 2)  # per phase
WARMUP_PER_CLIENT = tiny(2, 1)
SECONDS = tiny(3, 0.5)  # per time-bounded phase (retrieve, list)
PGBENCH_SECONDS = tiny(10, 1)
LIST_ORDERS = tiny(100_000, 1_000)  # the agency's orders written by SQL for OrderList
OTHER_EVERY = 6  # every 6th order written by SQL is another agency's
A320_OFFERS_PER_CLIENT = tiny(4, 1)  # priced offers for the offer seat maps
A320_HOLDS_PER_CLIENT = tiny(25, 2)  # holds for the order seat maps and AcceptOffer
