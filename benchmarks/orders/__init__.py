"""The orders benchmark: `python -m benchmarks.orders` (benchmarks/orders/scenarios.py)."""
