from django.apps import AppConfig


class FaresConfig(AppConfig):
    """Fare families (bundles), published fares per market and booking class, US taxes,
    and the pure pricing of an offer option (DESIGN.md §7)."""

    name = "airline.fares"
    label = "fares"

    def ready(self) -> None:
        from django.core.signals import setting_changed

        from airline.fares.taxes import forget_tax_rules

        # Tests change US_TAXES with override_settings; the parsed rules must follow.
        setting_changed.connect(forget_tax_rules, dispatch_uid="fares.forget_tax_rules")
