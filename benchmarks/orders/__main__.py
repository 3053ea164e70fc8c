"""`python -m benchmarks.orders`: the whole run in a scratch database and Redis db."""

from benchmarks.common import scratch
from benchmarks.orders.scenarios import main

if __name__ == "__main__":
    with scratch():
        main()
