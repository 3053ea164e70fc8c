from django.urls import path

from orders import views

urlpatterns = [
    path("orders", views.OrdersView.as_view(), name="orders"),
    path("orders/<str:orderId>", views.OrderView.as_view(), name="order"),
]
