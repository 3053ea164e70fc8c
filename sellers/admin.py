"""Back office for partners, sellers and API keys. Writes go through sellers.services."""

import copy

from django import forms
from django.contrib import admin, messages

from airline.api import clock
from sellers.models import ApiKey, Partner, Seller
from sellers.services import (
    api_key_check,
    api_key_create,
    api_key_revoke,
    api_key_update,
    seller_make_default,
)


class CodesField(forms.CharField):
    """A list of codes edited as comma-separated text; empty means all."""

    def prepare_value(self, value):
        return ", ".join(value) if isinstance(value, list) else value

    def to_python(self, value):
        return [code.strip().upper() for code in (value or "").split(",") if code.strip()]


class ApiKeyForm(forms.ModelForm):
    allowed_bundles = CodesField(
        required=False, help_text="Comma-separated bundle codes; empty means all."
    )
    allowed_ancillary_categories = CodesField(
        required=False, help_text="Comma-separated ancillary categories; empty means all."
    )

    class Meta:
        model = ApiKey
        fields = [
            "partner",
            "seller",
            "name",
            "access_level",
            "agency_code",
            "allowed_bundles",
            "allowed_ancillary_categories",
            "requests_per_minute",
        ]

    def clean(self):
        """The service's rules (sellers.services.api_key_check) as form errors."""
        cleaned = super().clean()
        candidate = copy.copy(self.instance)
        for name, value in cleaned.items():
            setattr(candidate, name, value)
        api_key_check(candidate)
        return cleaned


class SellerInline(admin.TabularInline):
    model = Seller
    extra = 0
    fields = ["code", "name", "is_default", "is_active"]
    readonly_fields = ["is_default"]
    show_change_link = True


@admin.register(Partner)
class PartnerAdmin(admin.ModelAdmin):
    list_display = ["code", "name", "is_active", "created_at"]
    search_fields = ["code", "name"]
    inlines = [SellerInline]


@admin.register(Seller)
class SellerAdmin(admin.ModelAdmin):
    list_display = ["code", "name", "partner", "is_default", "is_active", "id"]
    list_filter = ["is_active", "partner"]
    search_fields = ["code", "name", "id"]
    readonly_fields = ["id", "is_default", "created_at"]
    actions = ["make_default"]

    @admin.action(description="Make the selected seller its partner's default")
    def make_default(self, request, queryset):
        if queryset.count() != 1:
            self.message_user(request, "Select exactly one seller.", messages.ERROR)
            return
        seller_make_default(seller=queryset.get())
        self.message_user(request, "Default seller changed.")


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    form = ApiKeyForm
    list_display = [
        "prefix",
        "name",
        "partner",
        "seller",
        "access_level",
        "agency_code",
        "requests_per_minute",
        "is_active",
        "created_at",
    ]
    list_filter = ["is_active", "access_level", "partner"]
    search_fields = ["prefix", "name", "agency_code"]
    readonly_fields = ["prefix", "is_active", "created_at", "revoked_at"]
    list_select_related = ["partner", "seller"]
    actions = ["revoke"]

    def get_readonly_fields(self, request, obj=None):
        # Who a key belongs to is fixed at creation; issue a new key instead.
        return [*self.readonly_fields, "partner", "seller"] if obj else self.readonly_fields

    def save_model(self, request, obj, form, change):
        if change:
            api_key_update(key=obj, fields=form.changed_data)
            return
        issued = api_key_create(**{f: form.cleaned_data[f] for f in ApiKeyForm.Meta.fields})
        obj.pk, obj.prefix = issued.key.pk, issued.key.prefix
        # The one and only time the key is shown (DESIGN.md §5).
        self.message_user(
            request,
            f"API key created. Copy it now, it will not be shown again: {issued.raw}",
            messages.WARNING,
        )

    @admin.action(description="Revoke the selected keys (their tokens stop working at once)")
    def revoke(self, request, queryset):
        revoked = sum(api_key_revoke(key=key, at=clock.now()) for key in queryset)
        self.message_user(request, f"{revoked} key(s) revoked.")

    def has_delete_permission(self, request, obj=None):
        return False  # keys are revoked, never deleted: orders name the key that made them
