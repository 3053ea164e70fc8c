"""Back office for the network; its modules register their pages when imported."""

from airline.network.admin import schedule

__all__ = ["schedule"]
