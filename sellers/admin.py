"""Back office for partners, sellers and API keys. Writes go through sellers.services."""

import copy

from django import forms
from django.contrib import admin, messages
from django.shortcuts import get_object_or_404, redirect
from django.urls import path, reverse

from airline.api import clock
from airline.backoffice import (
    FormOnce,
    form_once_claim,
    form_once_release,
    log_action,
    one_time_page,
    reveal_keep,
    reveal_pop,
    utc_column,
)
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

    def get_urls(self):
        issued = self.admin_site.admin_view(self.issued_view)
        return [
            path("<path:object_id>/issued/", issued, name="sellers_apikey_issued"),
            *super().get_urls(),
        ]

    def add_view(self, request, form_url="", extra_context=None):
        """Issue a key at most once per add form: its one-time token is claimed before
        anything is created, so a resubmitted form (a reload, back and send again, a
        double click) issues nothing; a form sent back with errors returns its token."""
        if request.method != "POST":
            return super().add_view(request, form_url, extra_context)
        token = request.POST.get("form_once", "")
        if not form_once_claim(token):
            self.message_user(
                request,
                "This form was sent already: no other key was created. Create a new key "
                "from a fresh form.",
                messages.WARNING,
            )
            return redirect("admin:sellers_apikey_changelist")
        response = super().add_view(request, form_url, extra_context)
        if response.status_code != 302:
            form_once_release(token)
        return response

    def save_model(self, request, obj, form, change):
        if change:
            api_key_update(key=obj, fields=form.changed_data)
            return
        fields = {f: form.cleaned_data[f] for f in ApiKeyForm.Meta.fields}
        issued = api_key_create(**fields)
        obj.pk, obj.prefix = issued.key.pk, issued.key.prefix
        reveal_keep(request, f"apikey:{issued.key.pk}", issued.raw)

    def response_add(self, request, obj, post_url_continue=None):
        """Post/redirect/get: the create redirects to the page that shows the key once, so
        a reload reads that page again (no secret) and never sends the form again."""
        return redirect(reverse("admin:sellers_apikey_issued", args=[obj.pk]))

    def issued_view(self, request, object_id):
        """The one page that shows a new key (DESIGN.md §5): its secret on the first read
        after the create, never cached; any later read says it was shown already."""
        if not self.has_add_permission(request):
            return redirect("admin:index")
        key = get_object_or_404(ApiKey.objects.select_related("partner", "seller"), pk=object_id)
        return one_time_page(
            self,
            request,
            "admin/sellers/apikey/issued.html",
            title="API key created",
            object_label=key.prefix,
            key=key,
            raw=reveal_pop(request, f"apikey:{key.pk}"),
        )

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
