"""Back office for bundles (fare families), published fares and ancillary products: all
are data that revenue management edits here. The bundle JSON is validated against SPEC.md
§2.2 on save (airline/fares/validators.py), since it goes on the wire as stored. Pricing
reads these tables through per-process memos (airline/fares/reference.py,
airline/fares/ancillaries.py), so an edit reaches every worker within a minute."""

from django.contrib import admin

from airline.backoffice_lists import RowCheckbox
from airline.fares.models import Ancillary, Bundle, Fare


@admin.register(Bundle)
class BundleAdmin(admin.ModelAdmin):
    list_display = [
        "rank",
        "code",
        "name",
        "cabin",
        "supplement",
        "carry_on_included",
        "checked_bags_included",
        "seat_selection",
        "changeable",
        "refund_method",
    ]
    list_display_links = ["code"]
    list_editable = ["supplement"]
    fieldsets = [
        (None, {"fields": ["code", "name", "rank", "cabin", "description"]}),
        ("Price", {"fields": ["supplement", "fare_basis_suffix"]}),
        (
            "What the services act on",
            {
                "fields": [
                    "carry_on_included",
                    "checked_bags_included",
                    "seat_selection",
                    "changeable",
                    "change_fee",
                    "name_change_fee",
                    "refund_method",
                ]
            },
        ),
        (
            "Shown to partners (SPEC.md §2.2 shapes, camelCase keys)",
            {"fields": ["benefits", "baggage_disclosures", "penalties", "seat_profiles"]},
        ),
    ]


@admin.register(Fare)
class FareAdmin(RowCheckbox, admin.ModelAdmin):
    list_display = ["origin", "destination", "rbd", "base_amount", "fare_basis"]
    list_display_links = ["origin", "destination"]
    list_editable = ["base_amount"]
    list_filter = ["rbd", "origin"]
    search_fields = ["origin", "destination", "fare_basis"]
    list_per_page = 100


@admin.register(Ancillary)
class AncillaryAdmin(admin.ModelAdmin):
    list_display = [
        "rank",
        "code",
        "name",
        "category",
        "scope",
        "price",
        "taxable",
        "requires",
        "is_active",
    ]
    list_display_links = ["code"]
    list_editable = ["price"]
    list_filter = ["category", "scope", "taxable", "is_active"]
    list_select_related = ["requires"]
    search_fields = ["code", "name", "ssr_code"]
    fieldsets = [
        (None, {"fields": ["code", "name", "category", "rank", "is_active"]}),
        ("Price", {"fields": ["scope", "price", "taxable"]}),
        ("Codes on tickets and EMDs", {"fields": ["ssr_code", "fee_code"]}),
        # What the bundle includes is priced at zero by comparing with these
        # (airline/fares/ancillaries.py is_included): a bag's piece number, a seat's zone.
        ("What it is", {"fields": ["requires", "pieces", "seat_zone"]}),
    ]
