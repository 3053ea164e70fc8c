from django.urls import path

from webhooks import views

urlpatterns = [
    path("webhooks", views.WebhooksView.as_view(), name="webhooks"),
    path("webhooks/<str:webhookId>", views.WebhookView.as_view(), name="webhook"),
    path("webhooks/<str:webhookId>/ping", views.WebhookPingView.as_view(), name="webhook-ping"),
]
