"""Webhooks in the back office (DESIGN.md §10): endpoints (the secret shown once, when
created; deleted ones behind a filter), each one's newest deliveries (status, attempts,
last response code and time), the deliveries list filtered by status, last code,
endpoint and event type, and the actions resend failed deliveries, retry pending ones
now, disable, enable and delete an endpoint, all through the services the API uses
(STYLE.md 11)."""

import functools

from django import forms
from django.contrib import admin, messages
from django.db.models import Q
from django.urls import get_script_prefix, reverse
from django.utils.html import format_html, format_html_join

from airline.api import clock
from airline.backoffice import StandbyChangelist, log_action, utc_time
from airline.backoffice_lists import PK_MARK, ROWS_LIST_TEMPLATE, OnePassChangeList, RowCheckbox
from airline.backoffice_secrets import FormOnce, OneTimeSecretAdmin
from webhooks.addresses import RefusedUrl, check_url
from webhooks.models import WebhookDelivery, WebhookEndpoint
from webhooks.outbox import PING, PUBLIC_TYPES
from webhooks.services import (
    deliveries_resend,
    deliveries_retry_now,
    endpoint_disable,
    endpoint_enable,
    endpoint_register,
    endpoints_delete,
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
            check_url(url)
        except RefusedUrl as exc:
            raise forms.ValidationError(f"The webhook URL {exc}") from None
        return url


class WebhookEndpointAddForm(FormOnce, WebhookEndpointForm):
    """The form that registers an endpoint: sent twice with the same token, it registers
    one."""


DELIVERIES_SHOWN = 50  # on an endpoint's page, the newest; the deliveries list has all


def deliveries_url(**filters: str) -> str:
    query = "&".join(f"{k}={v}" for k, v in filters.items())
    return f"{reverse('admin:webhooks_webhookdelivery_changelist')}?{query}"


class DeletedFilter(admin.SimpleListFilter):
    """Deleted endpoints are kept with their deliveries' history, out of the list unless
    asked for."""

    title = "deleted"
    parameter_name = "deleted"

    def lookups(self, request, model_admin):
        return [("yes", "Deleted"), ("all", "All")]

    def choices(self, changelist):
        yield {
            "selected": self.value() is None,
            "query_string": changelist.get_query_string(remove=[self.parameter_name]),
            "display": "Not deleted",
        }
        for value, label in self.lookup_choices:
            yield {
                "selected": self.value() == value,
                "query_string": changelist.get_query_string({self.parameter_name: value}),
                "display": label,
            }

    def queryset(self, request, queryset):
        if self.value() == "all":
            return queryset
        return queryset.filter(deleted_at__isnull=self.value() != "yes")


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(OneTimeSecretAdmin):
    form = WebhookEndpointForm
    reveal_path = "registered"
    reveal_template = "admin/webhooks/webhookendpoint/registered.html"
    reveal_title = "Webhook endpoint registered"
    reveal_label_field = "webhook_id"
    reveal_select_related = ("seller",)
    resent_message = (
        "This form was sent already: no other endpoint was registered. Register a new one "
        "from a fresh form."
    )
    list_display = [
        "webhook_id",
        "seller",
        "url",
        "format",
        "active",
        "failing_since",
        "created_at",
    ]
    list_filter = [DeletedFilter, "active", "format"]
    search_fields = ["webhook_id", "url", "seller__code"]
    list_select_related = ["seller"]
    # The secret is never a field: it is shown once, on the page the create redirects to.
    readonly_fields = [
        "webhook_id",
        "active",
        "created_at",
        "failing_since",
        "disabled_at",
        "disabled_reason",
        "deleted_at",
        "newest_deliveries",
    ]
    actions = ["resend_failed", "retry_pending_now", "disable", "enable"]

    @admin.display(description="Newest deliveries")
    def newest_deliveries(self, endpoint: WebhookEndpoint) -> str:
        """The newest DELIVERIES_SHOWN in one query, however many the endpoint has (not
        an inline: a formset of every delivery is a page of thousands of rows)."""
        rows = list(
            WebhookDelivery.objects.filter(endpoint=endpoint)
            .select_related("event__order")
            .order_by("-id")[:DELIVERIES_SHOWN]
        )
        if not rows:
            return "None yet"
        body = format_html_join(
            "",
            '<tr><td><a href="{}">{}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>'
            "<td>{}</td><td>{}</td><td>{}</td></tr>",
            (
                (
                    reverse("admin:webhooks_webhookdelivery_change", args=[d.pk]),
                    d.event.event_id,
                    d.event.type,
                    d.event.order.record_locator if d.event.order else "-",
                    d.status,
                    d.attempts,
                    d.last_status_code or "-",
                    utc_time(d.last_attempt_at),
                    d.last_error or "-",
                )
                for d in rows
            ),
        )
        return format_html(
            '<table id="endpoint-deliveries"><thead><tr><th>Event</th><th>Type</th>'
            "<th>Booking</th><th>Status</th><th>Attempts</th><th>Last code</th>"
            "<th>Last attempt</th><th>Last error</th></tr></thead><tbody>{}</tbody></table>"
            '<a href="{}">All deliveries to this endpoint</a>',
            body,
            deliveries_url(endpoint__id__exact=str(endpoint.pk)),
        )

    def get_fields(self, request, obj=None):
        if obj is None:
            return ["seller", "url", "events", "format", "form_once"]
        return ["seller", "url", "events", "format", *self.readonly_fields]

    def get_readonly_fields(self, request, obj=None):
        # Where an endpoint sends is fixed at creation: register a new one instead.
        return [*self.readonly_fields, "seller", "url", "events", "format"] if obj else []

    def get_form(self, request, obj=None, **kwargs):
        if obj is None:
            kwargs["form"] = WebhookEndpointAddForm
        return super().get_form(request, obj, **kwargs)

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
        self.secret_keep(request, obj, registered.secret)

    def has_delete_permission(self, request, obj=None) -> bool:
        if obj is not None and obj.deleted_at is not None:
            return False  # deleted already: nothing more to do
        return super().has_delete_permission(request, obj)

    # Django's delete (the page's button and the "delete selected" action) is the soft
    # delete of the API: the rows stay, with their deliveries.
    def get_deleted_objects(self, objs, request):
        endpoints = list(objs)
        return [str(e) for e in endpoints], {"webhook endpoints": len(endpoints)}, set(), []

    def delete_model(self, request, obj):
        endpoints_delete(endpoints=WebhookEndpoint.objects.filter(pk=obj.pk), now=clock.now())

    def delete_queryset(self, request, queryset):
        endpoints_delete(endpoints=queryset, now=clock.now())

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

    @admin.action(
        description="Retry the pending deliveries of the selected endpoints now",
        permissions=["resend"],
    )
    def retry_pending_now(self, request, queryset):
        count = deliveries_retry_now(
            deliveries=WebhookDelivery.objects.filter(endpoint__in=queryset), now=clock.now()
        )
        if count:
            log_action(request, queryset, f"Retried {count} pending deliveries now")
        self.message_user(
            request,
            f"{count} pending deliver(ies) due now.",
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


class LastCodeFilter(admin.SimpleListFilter):
    """The last answer's HTTP status by class, or none at all (a timeout, a refused
    connection); `?last_code=503` narrows to one code."""

    title = "last code"
    parameter_name = "last_code"
    CLASSES = {"2xx": (200, 299), "4xx": (400, 499), "5xx": (500, 599)}

    def lookups(self, request, model_admin):
        return [
            ("2xx", "2xx (accepted)"),
            ("4xx", "4xx"),
            ("5xx", "5xx"),
            ("none", "No answer (timeout, connection refused)"),
            ("untried", "Not tried yet"),
        ]

    def queryset(self, request, queryset):
        value = self.value()
        if value in self.CLASSES:
            low, high = self.CLASSES[value]
            return queryset.filter(last_status_code__gte=low, last_status_code__lte=high)
        if value == "none":
            return queryset.filter(last_status_code__isnull=True, attempts__gt=0)
        if value == "untried":
            return queryset.filter(attempts=0)
        if value and value.isdigit():
            return queryset.filter(last_status_code=int(value))
        return queryset


class EventTypeFilter(admin.SimpleListFilter):
    """The public event types (webhooks.outbox), with no scan of the events for them."""

    title = "event type"
    parameter_name = "event_type"

    def lookups(self, request, model_admin):
        return [(t, t) for t in (*PUBLIC_TYPES, PING)]

    def queryset(self, request, queryset):
        return queryset.filter(event__type=self.value()) if self.value() else queryset


@functools.cache
def _booking_url(script_prefix: str) -> tuple[str, str]:
    """A booking page's URL either side of its id: one reverse() for the deliveries list,
    not one a row."""
    before, _, after = reverse("admin:orders_order_change", args=[PK_MARK]).partition(PK_MARK)
    return before, after


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(RowCheckbox, StandbyChangelist, admin.ModelAdmin):
    # What staff read first (how it went) before what it was (event, endpoint): in view
    # at 1,400 pixels.
    list_display = [
        "id",
        "event_type",
        "booking",
        "status",
        "attempts",
        "last_status_code",
        "last_attempt_at",
        "next_attempt_at",
        "event",
        "endpoint",
    ]
    list_filter = ["status", LastCodeFilter, "endpoint", EventTypeFilter]
    search_fields = ["event__event_id", "endpoint__webhook_id", "order__record_locator"]
    search_help_text = "Event id, webhook id or record locator"
    list_select_related = ["event", "endpoint", "order"]
    raw_id_fields = ["event", "endpoint", "order"]
    actions = ["resend", "retry_now"]
    show_full_result_count = False
    # A page a screen or two long: staff filter and search here rather than scroll, and
    # each row costs as much to write as a query (docs/benchmarks/figures/admin.md).
    list_per_page = 50
    change_list_template = ROWS_LIST_TEMPLATE  # its rows written in one pass (get_changelist)

    def get_changelist(self, request, **kwargs):
        return OnePassChangeList

    def get_queryset(self, request):
        # Each event's id and type, never the order view it carries (kilobytes a row);
        # the delivery's page names its event, endpoint and booking from the one query.
        return (
            super()
            .get_queryset(request)
            .select_related("event", "endpoint", "order")
            .defer("event__data")
        )

    def get_search_results(self, request, queryset, search_term):
        term = search_term.strip()
        if not term:
            return queryset, False
        # Exact matches, each an indexed lookup (a locator is stored upper case).
        return queryset.filter(
            Q(event__event_id=term)
            | Q(endpoint__webhook_id=term)
            | Q(order__record_locator=term.upper())
        ), False

    @admin.display(description="Type", ordering="event__type")
    def event_type(self, delivery: WebhookDelivery) -> str:
        return delivery.event.type

    @admin.display(description="Booking")
    def booking(self, delivery: WebhookDelivery) -> str:
        if delivery.order is None:
            return "-"
        before, after = _booking_url(get_script_prefix())
        url = f"{before}{delivery.order_id}{after}"
        return format_html('<a href="{}">{}</a>', url, delivery.order.record_locator)

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

    @admin.action(description="Retry the selected pending deliveries now", permissions=["resend"])
    def retry_now(self, request, queryset):
        pending = list(queryset.filter(status=WebhookDelivery.Status.PENDING))
        count = deliveries_retry_now(deliveries=queryset, now=clock.now())
        if count:
            log_action(request, pending, "Retried now")
        self.message_user(
            request,
            f"{count} pending deliver(ies) due now; the worker sends them at its next poll.",
            messages.SUCCESS if count else messages.WARNING,
        )
