"""Webhooks in the back office (DESIGN.md §10): endpoints (the secret shown once, when
created), each one's deliveries (status, attempts, last response code and time), and
the actions resend failed deliveries, disable and enable an endpoint, all through the
services the API uses (STYLE.md 11)."""

from django import forms
from django.contrib import admin, messages

from airline.api import clock
from airline.backoffice import log_action, one_time_page
from webhooks.addresses import RefusedUrl, url_check
from webhooks.models import WebhookDelivery, WebhookEndpoint
from webhooks.outbox import PUBLIC_TYPES
from webhooks.services import (
    deliveries_resend,
    endpoint_disable,
    endpoint_enable,
    endpoint_register,
)


class WebhookEndpointForm(forms.ModelForm):
    events = forms.MultipleChoiceField(
        choices=[(t, t) for t in PUBLIC_TYPES],
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="None ticked: every event type.",
    )
    format = forms.ChoiceField(
        choices=WebhookEndpoint.Format.choices,
        initial=WebhookEndpoint.Format.JSON,
        required=False,
        widget=forms.RadioSelect,
        help_text="What each event is sent as; JSON when none is chosen.",
    )

    class Meta:
        model = WebhookEndpoint
        fields = ["seller", "url", "events", "format"]

    def clean_format(self) -> str:
        return self.cleaned_data["format"] or WebhookEndpoint.Format.JSON

    def clean_url(self) -> str:
        url = self.cleaned_data["url"]
        try:
            url_check(url)
        except RefusedUrl as exc:
            raise forms.ValidationError(f"The webhook URL {exc}") from None
        return url


class DeliveryInline(admin.TabularInline):
    model = WebhookDelivery
    fk_name = "endpoint"
    extra = 0
    can_delete = False
    fields = [
        "event",
        "status",
        "attempts",
        "last_status_code",
        "last_attempt_at",
        "last_error",
        "next_attempt_at",
        "delivered_at",
    ]
    readonly_fields = fields
    ordering = ["-id"]
    show_change_link = True

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("event")


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(admin.ModelAdmin):
    form = WebhookEndpointForm
    list_display = [
        "webhook_id",
        "seller",
        "url",
        "format",
        "active",
        "failing_since",
        "created_at",
    ]
    list_filter = ["active", "format"]
    search_fields = ["webhook_id", "url", "seller__code"]
    list_select_related = ["seller"]
    # The secret is never a field: it is shown once, in the message after creation.
    readonly_fields = [
        "webhook_id",
        "active",
        "created_at",
        "failing_since",
        "disabled_at",
        "disabled_reason",
    ]
    inlines = [DeliveryInline]
    actions = ["resend_failed", "disable", "enable"]

    def get_inlines(self, request, obj=None):
        return self.inlines if obj else []  # a new endpoint has no deliveries

    def get_fields(self, request, obj=None):
        if obj is None:
            return ["seller", "url", "events", "format"]
        return ["seller", "url", "events", "format", *self.readonly_fields]

    def get_readonly_fields(self, request, obj=None):
        # Where an endpoint sends is fixed at creation: register a new one instead.
        return [*self.readonly_fields, "seller", "url", "events", "format"] if obj else []

    def save_model(self, request, obj, form, change):
        if change:
            return
        registered = endpoint_register(
            seller=form.cleaned_data["seller"],
            url=form.cleaned_data["url"],
            events=form.cleaned_data["events"],
            format=form.cleaned_data["format"],
            now=clock.now(),
        )
        obj.pk, obj.webhook_id = registered.endpoint.pk, registered.endpoint.webhook_id
        # Kept on this request only, for response_add: never in the session or a message
        # (Django's message cookie is signed, not encrypted), as API keys are.
        request.registered_webhook = registered

    def response_add(self, request, obj, post_url_continue=None):
        """The one and only time the signing secret is shown: in the body of the answer
        to the create, marked never to be cached; no redirect, so it never travels in a
        cookie and a reload cannot show it again."""
        registered = request.registered_webhook
        return one_time_page(
            self,
            request,
            "admin/webhooks/webhookendpoint/registered.html",
            title="Webhook endpoint registered",
            object_label=registered.endpoint.webhook_id,
            endpoint=registered.endpoint,
            secret=registered.secret,
        )

    def has_resend_permission(self, request) -> bool:
        return request.user.has_perm("webhooks.resend_webhookdelivery")

    @admin.action(
        description="Resend the failed deliveries of the selected endpoints",
        permissions=["resend"],
    )
    def resend_failed(self, request, queryset):
        count = deliveries_resend(
            deliveries=WebhookDelivery.objects.filter(endpoint__in=queryset), now=clock.now()
        )
        if count:
            log_action(request, queryset, f"Resent {count} failed deliveries")
        self.message_user(
            request,
            f"{count} failed deliver(ies) queued again.",
            messages.SUCCESS if count else messages.WARNING,
        )

    @admin.action(description="Disable the selected endpoints", permissions=["change"])
    def disable(self, request, queryset):
        endpoints = list(queryset.select_related("seller__partner"))
        for endpoint in endpoints:
            endpoint_disable(endpoint=endpoint, now=clock.now(), reason=f"by {request.user}")
        log_action(request, endpoints, "Disabled")
        self.message_user(request, f"{len(endpoints)} endpoint(s) disabled.")

    @admin.action(description="Enable the selected endpoints", permissions=["change"])
    def enable(self, request, queryset):
        endpoints = list(queryset)
        for endpoint in endpoints:
            endpoint_enable(endpoint=endpoint)
        log_action(request, endpoints, "Enabled")
        self.message_user(request, f"{len(endpoints)} endpoint(s) enabled.")


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "event",
        "endpoint",
        "status",
        "attempts",
        "last_status_code",
        "last_attempt_at",
        "next_attempt_at",
    ]
    list_filter = ["status"]
    search_fields = ["event__event_id", "endpoint__webhook_id", "order__record_locator"]
    list_select_related = ["event", "endpoint"]
    raw_id_fields = ["event", "endpoint", "order"]
    actions = ["resend"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_resend_permission(self, request) -> bool:
        return request.user.has_perm("webhooks.resend_webhookdelivery")

    @admin.action(description="Resend the selected failed deliveries", permissions=["resend"])
    def resend(self, request, queryset):
        failed = list(queryset.filter(status=WebhookDelivery.Status.FAILED))
        count = deliveries_resend(deliveries=queryset, now=clock.now())
        if count:
            log_action(request, failed, "Queued again")
        self.message_user(
            request,
            f"{count} failed deliver(ies) queued again.",
            messages.SUCCESS if count else messages.WARNING,
        )
