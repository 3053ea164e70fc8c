from django.urls import path

from orders import views

urlpatterns = [
    path("orders", views.OrdersView.as_view(), name="orders"),
    path("orders/<str:orderId>", views.OrderView.as_view(), name="order"),
    path("orders/<str:orderId>/seats", views.OrderSeatsView.as_view(), name="order-seats"),
    path("orders/<str:orderId>/services", views.OrderServicesView.as_view(), name="order-services"),
    path("orders/<str:orderId>/reshop", views.OrderReshopView.as_view(), name="order-reshop"),
    path("orders/<str:orderId>/quote", views.OrderQuoteView.as_view(), name="order-quote"),
]
