from django.urls import path

from sellers import views

auth_urlpatterns = [
    path("token", views.TokenView.as_view(), name="auth-token"),
    path("sellers", views.SellersView.as_view(), name="auth-sellers"),
]

json_urlpatterns = [
    path("whoami", views.WhoAmIView.as_view(), name="whoami"),
]
