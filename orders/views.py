"""Order endpoints: validate, call one service, render (SPEC.md §4.7-4.9)."""

from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.utils import OpenApiParameter, extend_schema

from airline.api.endpoints import ServiceView
from airline.api.errors import ApiError, Err
from airline.api.idempotency import idempotent
from airline.api.openapi import ERROR_RESPONSES, IDEMPOTENCY_HEADER
from airline.api.responses import error_response, json_response, ok
from offers.ancillaries import seat_maps, service_list
from offers.endpoints import AncillariesView
from offers.openapi import SEAT_MAPS_RESPONSE, SERVICES_RESPONSE
from orders.booking.create import order_create
from orders.money.provider_events import provider_event_receive
from orders.openapi import (
    CHANGE_EXAMPLES,
    CREATE_EXAMPLES,
    ORDER_LIST_RESPONSE,
    ORDER_VIEW_RESPONSE,
    QUOTE_RESPONSE,
    RESHOP_EXAMPLES,
    RESHOP_RESPONSE,
)
from orders.reading import presenters
from orders.reading.selectors import OrderScope, order_get, orders_list
from orders.reading.trips import order_trip
from orders.requests.checks import check_order_search
from orders.requests.serializers import (
    ChangeOrderIn,
    CreateOrderIn,
    OrderAncillaryIn,
    OrderListQuery,
    OrderRetrieveQuery,
    QuoteIn,
    ReshopIn,
    change_input,
    create_input,
)
from orders.servicing.changes import order_change
from orders.servicing.exchange.quote import order_quote
from orders.servicing.reshop import order_reshop
from sellers.permissions import CanBook, HasAgencyCode, IsSeller
from sellers.throttling import address_body_budget_check


class OrdersView(ServiceView):
    def get_permissions(self):
        return [CanBook()] if self.request.method == "POST" else [HasAgencyCode()]

    def answer_created(self, request, version, resource):
        """The answer to a booking that committed while its own answer was lost (the
        worker died, or the payment reconciler confirmed it): 201 with the order
        (airline/api/idempotency.py)."""
        order = order_get(scope=OrderScope.of(self.principal), ref=resource, parts=())
        return ok(presenters.order_view_cached(order), status=201)

    @extend_schema(
        operation_id="createOrder",
        tags=["orders"],
        request=CreateOrderIn,
        parameters=[IDEMPOTENCY_HEADER],
        examples=CREATE_EXAMPLES,
        responses={201: ORDER_VIEW_RESPONSE, **ERROR_RESPONSES},
    )
    @idempotent(recover=answer_created)
    def post(self, request, version):
        """Book a priced offer, on hold or paid by card (SPEC.md §4.7)."""
        created = order_create(principal=self.principal, **create_input(self.body(CreateOrderIn)))
        return ok(presenters.order_view_cached(created.order, parts=created), status=201)

    @extend_schema(
        operation_id="listOrders",
        tags=["orders"],
        parameters=[OrderListQuery],
        responses={200: ORDER_LIST_RESPONSE, **ERROR_RESPONSES},
    )
    def get(self, request, version):
        """Search the agency's bookings; one summary each, keyset-paginated (SPEC.md §4.8).
        A query parameter not listed here, or one out of its range, is ERR-1005 naming it
        (DESIGN.md §11)."""
        search = check_order_search(self.query(OrderListQuery), principal=self.principal)
        orders, more = orders_list(search)
        return ok(presenters.order_list_page(search, orders, more))


class OrderView(ServiceView):
    def get_permissions(self):
        return [CanBook()] if self.request.method == "PATCH" else [IsSeller()]

    def answer_applied(self, request, version, orderId, resource):
        """The answer to a change that committed while its own answer was lost: the
        order as it stands (airline/api/idempotency.py)."""
        order = order_get(scope=OrderScope.of(self.principal), ref=orderId, parts=())
        return ok(presenters.order_view_cached(order))

    @extend_schema(
        operation_id="changeOrder",
        tags=["orders"],
        request=ChangeOrderIn,
        parameters=[IDEMPOTENCY_HEADER],
        examples=CHANGE_EXAMPLES,
        responses={200: ORDER_VIEW_RESPONSE, **ERROR_RESPONSES},
    )
    @idempotent(recover=answer_applied)
    def patch(self, request, version, orderId):
        """Change a booking (SPEC.md §4.10): add seats and services, confirm or cancel a
        hold, cancel journeys, correct passengers and the contact, accept a quoted reshop
        offer. Every change of one request commits together or not at all."""
        changed = order_change(
            principal=self.principal, ref=orderId, **change_input(self.body(ChangeOrderIn))
        )
        return ok(presenters.order_view_cached(changed.order, parts=changed.parts))

    @extend_schema(
        operation_id="retrieveOrder",
        tags=["orders"],
        parameters=[
            OpenApiParameter(
                "orderId", str, OpenApiParameter.PATH, description="Order id or record locator"
            ),
            OrderRetrieveQuery,
        ],
        responses={200: ORDER_VIEW_RESPONSE, **ERROR_RESPONSES},
    )
    def get(self, request, version, orderId):
        """One booking by order id or record locator (SPEC.md §4.9)."""
        query = self.query(OrderRetrieveQuery)
        order = order_get(
            scope=OrderScope.of(self.principal),
            ref=orderId,
            owner_code=query.get("ownerCode"),
            parts=(),
            stale_ok=True,
        )
        return ok(presenters.order_view_cached(order))


class _OrderAncillaries(AncillariesView):
    def trip(self, now, *, orderId):
        body = self.body(OrderAncillaryIn, optional=True)
        order = order_get(scope=OrderScope.of(self.principal), ref=orderId, parts=(), stale_ok=True)
        return order_trip(
            order=order, item_refs=body.get("orderItemIds"), passengers=body.get("passengers")
        )


class OrderSeatsView(_OrderAncillaries):
    build = staticmethod(seat_maps)

    @extend_schema(
        operation_id="orderSeatMaps",
        tags=["ancillaries"],
        request=OrderAncillaryIn,
        responses={200: SEAT_MAPS_RESPONSE, **ERROR_RESPONSES},
    )
    def post(self, request, version, orderId):
        """Seat maps of a booking's flights (SPEC.md §4.11); read-only keys may ask.

        A unit is `Open` exactly when it is `assignable` and carries `passengerPricing`. A
        key whose ancillary categories leave out SEAT gets no seat map: ERR-8001 (403)."""
        return self.answer(orderId=orderId)


class OrderServicesView(_OrderAncillaries):
    build = staticmethod(service_list)

    @extend_schema(
        operation_id="orderServices",
        tags=["ancillaries"],
        request=OrderAncillaryIn,
        responses={200: SERVICES_RESPONSE, **ERROR_RESPONSES},
    )
    def post(self, request, version, orderId):
        """Services a booking can add (SPEC.md §4.11); read-only keys may ask.

        A key that may sell seats only gets no service list: ERR-8001 (403)."""
        return self.answer(orderId=orderId)


class OrderReshopView(ServiceView):
    permission_classes = [CanBook]

    @extend_schema(
        operation_id="reshopOrder",
        tags=["orders"],
        request=ReshopIn,
        examples=RESHOP_EXAMPLES,
        responses={200: RESHOP_RESPONSE, **ERROR_RESPONSES},
    )
    def post(self, request, version, orderId):
        """What a change or cancellation of the booking would cost: replacement offers,
        the cancellation's penalty and refund or credit, a name change's fee (SPEC.md
        §4.12). Nothing is changed; commit with change order."""
        body = self.body(ReshopIn)
        data = order_reshop(
            principal=self.principal,
            ref=orderId,
            instruction=body["instruction"],
            passengers=body.get("passengers"),
        )
        return ok(data)


class OrderQuoteView(ServiceView):
    permission_classes = [CanBook]

    @extend_schema(
        operation_id="quoteOrder",
        tags=["orders"],
        request=QuoteIn,
        responses={200: QUOTE_RESPONSE, **ERROR_RESPONSES},
    )
    def post(self, request, version, orderId):
        """Price a reshop offer against what was paid; the quote is stored under a new
        offerId for AcceptReshopOffer (SPEC.md §4.13)."""
        body = self.body(QuoteIn)
        data = order_quote(
            principal=self.principal,
            ref=orderId,
            offer_id=body["offerId"],
            item_ids=body["offerItemIds"],
            passengers=body.get("passengers"),
        )
        return ok(data)


@csrf_exempt  # signed by the provider, not a browser form
def stripe_webhook(request: HttpRequest) -> HttpResponse:
    """POST /payments/stripe/webhook: Stripe's events, verified and recorded once
    (orders.money.provider_events); no bearer token: the signature is the credential. Any
    other method is 405 ERR-1001 in the envelope, as on every API path (never
    Django's HTML)."""
    if request.method != "POST":
        return error_response(
            request,
            ApiError(
                Err.METHOD_NOT_ALLOWED,
                f"{request.method} is not allowed on {request.path}; use POST",
                headers={"Allow": "POST"},
            ),
        )
    try:
        address_body_budget_check(request)  # no key to count its bytes against
        recorded = provider_event_receive(
            payload=request.body, signature=request.headers.get("Stripe-Signature", "")
        )
    except ApiError as error:
        return error_response(request, error)
    return json_response({"received": True, "duplicate": recorded is None})
