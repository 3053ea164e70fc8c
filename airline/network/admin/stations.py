"""Stations (read-only: they come with the schedule) and booking classes, whose
authorized share of each cabin is edited in the list."""

from django.contrib import admin

from airline.network.admin.base import ReadOnlyAdmin
from airline.network.models import BookingClass, Station


@admin.register(Station)
class StationAdmin(ReadOnlyAdmin):
    list_display = ["code", "name", "city", "country", "time_zone"]
    search_fields = ["code", "name", "city"]


@admin.register(BookingClass)
class BookingClassAdmin(admin.ModelAdmin):
    list_display = ["cabin", "rank", "rbd", "authorized_percent"]
    list_editable = ["authorized_percent"]
    list_display_links = ["rbd"]
