"""Aircraft types and their seat configurations: cabins and blocked seats, whose changes
are saved by the service that tells the bookings they take seats from."""

import re

from django import forms
from django.contrib import admin, messages
from django.shortcuts import redirect

from airline.api import clock
from airline.network import fleet
from airline.network.configurations import ConfigurationBusy, cabin_spec, configuration_edit
from airline.network.models import AircraftType, CabinLayout, SeatConfiguration


class CabinLayoutInline(admin.TabularInline):
    model = CabinLayout
    extra = 0


SEAT = re.compile(r"^(\d{1,3})([A-Z])$")


class SeatConfigurationForm(forms.ModelForm):
    class Meta:
        model = SeatConfiguration
        fields = ["aircraft_type", "code", "name", "blocked_seats"]

    def clean_blocked_seats(self):
        """A list of seat designators, upper case. A seat a passenger holds may be
        blocked: the save gives that booking an airline change (configuration_edit)."""
        blocked = self.cleaned_data["blocked_seats"] or []
        if not isinstance(blocked, list) or not all(
            isinstance(seat, str) and SEAT.match(seat.upper()) for seat in blocked
        ):
            raise forms.ValidationError('A list of seats, e.g. ["12A", "12F"].')
        return list(dict.fromkeys(seat.upper() for seat in blocked))


@admin.register(SeatConfiguration)
class SeatConfigurationAdmin(admin.ModelAdmin):
    """A change (blocked seats, cabins) is saved by `configuration_edit`, under the
    configuration's lock, with the bookings it takes seats from told
    (docs/operators/back-office.md); a new configuration has no bookings and is saved
    as usual."""

    form = SeatConfigurationForm
    list_display = ["aircraft_type", "code", "name"]
    list_filter = ["aircraft_type"]
    inlines = [CabinLayoutInline]

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except ConfigurationBusy as exc:
            # Raised inside the admin's transaction, which rolled back whole.
            self.message_user(request, f"Not saved, nothing changed: {exc}", messages.ERROR)
            return redirect(request.get_full_path())

    def save_model(self, request, obj, form, change):
        if not change:
            super().save_model(request, obj, form, change)
        # A change is saved with its cabins, in save_related: one service call for both.

    def save_related(self, request, form, formsets, change):
        if not change:
            super().save_related(request, form, formsets, change)
            return
        configuration = form.instance

        def write() -> None:
            configuration.save(update_fields=["aircraft_type", "code", "name", "blocked_seats"])
            super(SeatConfigurationAdmin, self).save_related(request, form, formsets, change)

        edited = configuration_edit(
            configuration_id=configuration.pk,
            blocked_seats=configuration.blocked_seats,
            cabins=_cabins_after(formsets),
            write=write,
            now=clock.now(),
        )
        if edited.orders_changed:
            self.message_user(
                request,
                f"{edited.orders_changed} booking(s) held seats or a cabin this edit takes "
                "away: each has an airline change (EQUIPMENT) and its seller a webhook.",
                messages.WARNING,
            )


def _cabins_after(formsets) -> list[fleet.CabinSpec]:
    """The cabins a configuration will have once its inline forms are saved: every
    layout form not deleted and not an empty extra one, with its edited values (the
    forms' instances hold them once validated)."""
    cabins = []
    for formset in formsets:
        if formset.model is not CabinLayout:
            continue
        deleted = set(map(id, formset.deleted_forms))
        for form in formset.forms:
            if id(form) in deleted or (form.instance.pk is None and not form.has_changed()):
                continue
            layout = form.instance
            cabins.append(
                cabin_spec(
                    cabin=layout.cabin,
                    name=layout.name,
                    first_row=layout.first_row,
                    last_row=layout.last_row,
                    seat_letters=layout.seat_letters,
                    skipped_rows=layout.skipped_rows,
                    exit_rows=layout.exit_rows,
                    extra_legroom_rows=layout.extra_legroom_rows,
                )
            )
    return cabins


class SeatConfigurationInline(admin.TabularInline):
    model = SeatConfiguration
    extra = 0
    show_change_link = True


@admin.register(AircraftType)
class AircraftTypeAdmin(admin.ModelAdmin):
    list_display = ["iata_code", "carrier_code", "name"]
    inlines = [SeatConfigurationInline]
