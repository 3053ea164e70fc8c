"""The bookings list's filters staff use to find the bookings that need someone: holds
about to lapse, schedule changes waiting for the seller, disputes, refunds outside this
service, flights the schedule cancelled."""

from datetime import timedelta

from django.contrib import admin
from django.db.models import (
    Exists,
    OuterRef,
)

from airline.api import clock
from orders.admin.flags import LIVE, disputes, on_cancelled_flight, refunds_outside
from orders.models import (
    AirlineChange,
    OrderStatus,
)


class HoldExpiringFilter(admin.SimpleListFilter):
    """Unpaid holds about to lapse: the bookings a call to the agency may still save."""

    title = "hold expiring"
    parameter_name = "hold_expires"
    WITHIN = {"1h": timedelta(hours=1), "24h": timedelta(hours=24)}

    def lookups(self, request, model_admin):
        return [
            ("1h", "Within an hour"),
            ("24h", "Within 24 hours"),
            ("lapsed", "Lapsed, not yet swept"),
        ]

    def queryset(self, request, queryset):
        now = clock.now()
        holds = queryset.filter(status=OrderStatus.ONHOLD)
        if self.value() in self.WITHIN:
            return holds.filter(
                payment_time_limit__gt=now, payment_time_limit__lte=now + self.WITHIN[self.value()]
            )
        if self.value() == "lapsed":
            return holds.filter(payment_time_limit__lte=now)
        return queryset


class ScheduleChangedFilter(admin.SimpleListFilter):
    """Live bookings with a pending airline change: the agency still has to answer."""

    title = "schedule changed by the airline"
    parameter_name = "schedule_changed"

    def lookups(self, request, model_admin):
        return [("yes", "Waiting for the seller's answer")]

    def queryset(self, request, queryset):
        if self.value() == "yes":
            pending = AirlineChange.objects.filter(
                order=OuterRef("pk"), status=AirlineChange.Status.PENDING
            )
            return queryset.filter(Exists(pending), status__in=LIVE)
        return queryset


class DisputedFilter(admin.SimpleListFilter):
    """Bookings with a card payment disputed with the bank, whatever their status: the
    money may go back by the bank's decision, not ours."""

    title = "payment disputed"
    parameter_name = "disputed"

    def lookups(self, request, model_admin):
        return [("yes", "A payment disputed by the cardholder")]

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(Exists(disputes()))
        return queryset


class RefundedOutsideFilter(admin.SimpleListFilter):
    """Bookings the payment provider gave money back for outside this service (its
    dashboard): the status and tickets stand while the money went."""

    title = "refunded outside this service"
    parameter_name = "refunded_outside"

    def lookups(self, request, model_admin):
        return [("yes", "Money given back at the payment provider")]

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(Exists(refunds_outside()))
        return queryset


class CancelledFlightFilter(admin.SimpleListFilter):
    title = "flight cancelled by schedule"
    parameter_name = "flight_cancelled"

    def lookups(self, request, model_admin):
        return [("yes", "Booked on a cancelled flight")]

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(on_cancelled_flight(), status__in=LIVE)
        return queryset
