"""Back office for partners, sellers and API keys. Writes go through sellers.services."""

import copy

from django import forms
from django.contrib import admin, messages

from airline.api import clock
from airline.backoffice import log_action, utc_column
from airline.backoffice_secrets import FormOnce, OneTimeSecretAdmin
from sellers.models import ApiKey, Partner, Seller
from sellers.services import (
    api_key_create,
    api_key_revoke,
    api_key_update,
    check_api_key,
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
        """The service's rules (sellers.services.check_api_key) as form errors."""
        cleaned = super().clean()
        candidate = copy.copy(self.instance)
        for name, value in cleaned.items():
            setattr(candidate, name, value)
        check_api_key(candidate)
        return cleaned


class ApiKeyAddForm(FormOnce, ApiKeyForm):
    """The form that issues a key: sent twice with the same token, it issues one."""


class SellerInline(admin.TabularInline):
    model = Seller
    extra = 0
    fields = ["code", "name", "is_default", "is_active"]
    readonly_fields = ["is_default"]
    show_change_link = True


@admin.register(Partner)
class PartnerAdmin(admin.ModelAdmin):
    list_display = ["code", "name", "is_active", "created_at_utc"]
    created_at_utc = staticmethod(utc_column("created_at", "Created"))
    search_fields = ["code", "name"]
    inlines = [SellerInline]


@admin.register(Seller)
class SellerAdmin(admin.ModelAdmin):
    list_display = ["code", "name", "partner", "is_default", "is_active", "id"]
    list_filter = ["is_active", "partner"]
    search_fields = ["code", "name", "id"]
    readonly_fields = ["id", "is_default", "created_at_utc"]
    created_at_utc = staticmethod(utc_column("created_at", "Created"))
    actions = ["make_default"]

    @admin.action(description="Make the selected seller its partner's default")
    def make_default(self, request, queryset):
        if queryset.count() != 1:
            self.message_user(request, "Select exactly one seller.", messages.ERROR)
            return
        seller = queryset.get()
        seller_make_default(seller=seller)
        log_action(request, [seller], "Made its partner's default seller.")
        self.message_user(request, "Default seller changed.")


@admin.register(ApiKey)
class ApiKeyAdmin(OneTimeSecretAdmin):
    """API keys; a new key is shown once, on the page its create redirects to (DESIGN.md
    §5), as it is stored only as a hash."""

    form = ApiKeyForm
    reveal_path = "issued"
    reveal_template = "admin/sellers/apikey/issued.html"
    reveal_title = "API key created"
    reveal_label_field = "prefix"
    reveal_select_related = ("partner", "seller")
    resent_message = (
        "This form was sent already: no other key was created. Create a new key from a fresh form."
    )
    list_display = [
        "prefix",
        "name",
        "partner",
        "seller",
        "access_level",
        "agency_code",
        "requests_per_minute",
        "is_active",
        "created_at_utc",
    ]
    list_filter = ["is_active", "access_level", "partner"]
    search_fields = ["prefix", "name", "agency_code"]
    readonly_fields = ["prefix", "is_active", "created_at_utc", "revoked_at_utc"]
    created_at_utc = staticmethod(utc_column("created_at", "Created"))
    revoked_at_utc = staticmethod(utc_column("revoked_at", "Revoked"))
    list_select_related = ["partner", "seller"]
    actions = ["revoke"]

    def get_readonly_fields(self, request, obj=None):
        # Who a key belongs to is fixed at creation; issue a new key instead.
        return [*self.readonly_fields, "partner", "seller"] if obj else self.readonly_fields

    def get_form(self, request, obj=None, **kwargs):
        if obj is None:
            kwargs["form"] = ApiKeyAddForm
        return super().get_form(request, obj, **kwargs)

    def save_model(self, request, obj, form, change):
        if change:
            api_key_update(key=obj, fields=form.changed_data)
            return
        fields = {f: form.cleaned_data[f] for f in ApiKeyForm.Meta.fields}
        issued = api_key_create(**fields)
        obj.pk, obj.prefix = issued.key.pk, issued.key.prefix
        self.secret_keep(request, obj, issued.raw)

    @admin.action(description="Revoke the selected keys (their tokens stop working at once)")
    def revoke(self, request, queryset):
        revoked = [key for key in queryset if api_key_revoke(key=key, at=clock.now())]
        log_action(request, revoked, "Revoked; its tokens stop working at once.")
        if not revoked:
            self.message_user(request, "No key revoked: all were already.", messages.WARNING)
            return
        self.message_user(request, f"{len(revoked)} key(s) revoked.")

    def has_delete_permission(self, request, obj=None):
        return False  # keys are revoked, never deleted: orders name the key that made them
