from django.apps import AppConfig


class NetworkConfig(AppConfig):
    """Stations, fleet and seat configurations, the SSIM schedule, flight-date legs and
    their seat inventory, and the itineraries they make."""

    name = "airline.network"
    label = "network"

    def ready(self) -> None:
        from airline.api.readiness import register_readiness_check
        from airline.network.itineraries import network_is_ready

        register_readiness_check("schedule", network_is_ready)
