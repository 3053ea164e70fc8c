"""What the network's back-office pages share: a read-only admin (the schedule and
inventory come only from SSIM files) and the carrier filter."""

from django.contrib import admin

from airline.network.models import ScheduleLoad


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class CarrierFilter(admin.SimpleListFilter):
    """The carriers of the loaded schedules (a few rows), not a scan of every leg."""

    title = "carrier"
    parameter_name = "carrier"

    def lookups(self, request, model_admin):
        carriers = ScheduleLoad.objects.order_by("carrier").values_list("carrier", flat=True)
        return [(c, c) for c in dict.fromkeys(carriers)]

    def queryset(self, request, queryset):
        return queryset.filter(carrier=self.value()) if self.value() else queryset
