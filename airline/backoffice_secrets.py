"""Back-office add pages that issue a secret (an API key, a webhook signing secret): the
add form creates at most once, and the secret is shown on one page, once, never cached
(DESIGN.md §5 and §10)."""

import secrets

from django import forms
from django.contrib import admin, messages
from django.core.cache import cache
from django.db.models import Model, QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.cache import add_never_cache_headers


def one_time_page(
    model_admin: admin.ModelAdmin, request: HttpRequest, template: str, **context
) -> TemplateResponse:
    """A page that shows a new secret (extends admin/one_time_secret.html), marked never to
    be cached, so no browser or proxy keeps a copy to show again."""
    response = TemplateResponse(
        request,
        template,
        {**model_admin.admin_site.each_context(request), "opts": model_admin.opts, **context},
    )
    add_never_cache_headers(response)
    return response


# How long a new secret waits for the page that shows it (the GET after the create's
# redirect, normally a few milliseconds later).
REVEAL_SECONDS = 600
# How long an add form's token is remembered: longer than anyone keeps a form open.
FORM_ONCE_SECONDS = 86_400


def reveal_keep(request: HttpRequest, label: str, secret: str) -> None:
    """Keep a new secret for one read by this session (post/redirect/get: the create
    redirects to a page that shows it once). The secret waits in the server's cache under
    a random handle; the session holds only the handle, so the secret is in no cookie and
    no session row, and is gone after REVEAL_SECONDS if never shown."""
    handle = secrets.token_urlsafe(24)
    cache.set(f"reveal:{handle}", secret, REVEAL_SECONDS)
    request.session[f"reveal:{label}"] = handle


def reveal_pop(request: HttpRequest, label: str) -> str | None:
    """The secret kept by reveal_keep, once: None on any later read. The cache delete
    decides between two reloads racing for it (only one of them deletes the entry)."""
    handle = request.session.pop(f"reveal:{label}", None)
    if handle is None:
        return None
    secret = cache.get(f"reveal:{handle}")
    return secret if cache.delete(f"reveal:{handle}") else None


class FormOnce(forms.Form):
    """A hidden one-time token on an add form that issues something (a key, a secret): a
    browser that sends the same form again (a reload of the answer, a back-and-resubmit,
    a double click) carries the same token and creates nothing. See form_once_claim."""

    form_once = forms.CharField(
        widget=forms.HiddenInput, initial=lambda: secrets.token_urlsafe(24), max_length=64
    )


def form_once_claim(token: str) -> bool:
    """Claim an add form's token before it creates anything: True the first time only.
    The cache's atomic add decides between two sends racing with the same token."""
    return bool(token) and cache.add(f"form-once:{token}", 1, FORM_ONCE_SECONDS)


def form_once_release(token: str) -> None:
    """Give a token back when its send created nothing (the form had errors), so the
    corrected form can be sent."""
    cache.delete(f"form-once:{token}")


class OneTimeSecretAdmin(admin.ModelAdmin):
    """An admin whose add form issues a secret: a resent form issues nothing
    (form_once_claim), and the create redirects (post/redirect/get) to a page under the
    new object's URL that shows the secret on its first read only (reveal_keep,
    reveal_pop), so a reload never sends the form again nor shows the secret twice.

    A subclass names the page and says what a resent form is told; its save_model creates
    the object through its service and hands the secret to `secret_keep`."""

    reveal_path: str  # the page's URL under the object's, e.g. "issued"
    reveal_template: str  # extends admin/one_time_secret.html; gets `object` and `secret`
    reveal_title: str
    reveal_label_field: str  # the field that names the object in the breadcrumbs
    resent_message: str  # what a form sent a second time is told
    reveal_select_related: tuple[str, ...] = ()

    def _secret_url_name(self) -> str:
        return f"{self.opts.app_label}_{self.opts.model_name}_{self.reveal_path}"

    def _secret_label(self, pk) -> str:
        return f"{self.opts.label_lower}:{pk}"

    def get_urls(self):
        view = self.admin_site.admin_view(self.secret_view)
        return [
            path(f"<path:object_id>/{self.reveal_path}/", view, name=self._secret_url_name()),
            *super().get_urls(),
        ]

    def add_view(self, request, form_url="", extra_context=None):
        """Create at most once per add form: its one-time token is claimed before anything
        is created, so a resubmitted form (a reload, back and send again, a double click)
        creates nothing; a form sent back with errors returns its token."""
        if request.method != "POST":
            return super().add_view(request, form_url, extra_context)
        token = request.POST.get("form_once", "")
        if not form_once_claim(token):
            self.message_user(request, self.resent_message, messages.WARNING)
            return redirect(f"admin:{self.opts.app_label}_{self.opts.model_name}_changelist")
        response = super().add_view(request, form_url, extra_context)
        if response.status_code != 302:
            form_once_release(token)
        return response

    def secret_keep(self, request: HttpRequest, obj: Model, secret: str) -> None:
        """Keep a new object's secret for the one read of its page."""
        reveal_keep(request, self._secret_label(obj.pk), secret)

    def response_add(self, request, obj, post_url_continue=None):
        return redirect(reverse(f"admin:{self._secret_url_name()}", args=[obj.pk]))

    def reveal_queryset(self) -> QuerySet:
        return self.model._default_manager.select_related(*self.reveal_select_related)

    def secret_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """The one page that shows the new secret: on the first read after the create,
        never cached; any later read says it was shown already."""
        if not self.has_add_permission(request):
            return redirect("admin:index")
        obj = get_object_or_404(self.reveal_queryset(), pk=object_id)
        return one_time_page(
            self,
            request,
            self.reveal_template,
            title=self.reveal_title,
            object_label=getattr(obj, self.reveal_label_field),
            object=obj,
            secret=reveal_pop(request, self._secret_label(obj.pk)),
        )
