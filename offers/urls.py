from django.urls import path

from offers import views

urlpatterns = [
    path("offers", views.OffersView.as_view(), name="offers"),
    path("offers/byJourney", views.OffersByJourneyView.as_view(), name="offers-by-journey"),
    path("offers/price", views.OfferPriceView.as_view(), name="offers-price"),
    path("offers/<str:offerId>/seats", views.OfferSeatsView.as_view(), name="offer-seats"),
    path("offers/<str:offerId>/services", views.OfferServicesView.as_view(), name="offer-services"),
]
