"""Order endpoints: validate, call one service, render (SPEC.md §4.7-4.9)."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.views import APIView

from airline.api import clock
from airline.api.idempotency import idempotent
from airline.api.openapi import ERROR_RESPONSES
from airline.api.responses import ok
from orders import presenters
from orders.checks import check_order_search
from orders.openapi import (
    CREATE_EXAMPLES,
    IDEMPOTENCY_HEADER,
    ORDER_LIST_RESPONSE,
    ORDER_VIEW_RESPONSE,
)
from orders.serializers import CreateOrderIn, OrderListQuery, OrderRetrieveQuery
from orders.services import order_create, order_current, orders_list
from sellers.permissions import CanBook, HasAgencyCode


class OrdersView(APIView):
    def get_permissions(self):
        return [CanBook()] if self.request.method == "POST" else [HasAgencyCode()]

    @extend_schema(
        operation_id="createOrder",
        tags=["orders"],
        request=CreateOrderIn,
        parameters=[IDEMPOTENCY_HEADER],
        examples=CREATE_EXAMPLES,
        responses={201: ORDER_VIEW_RESPONSE, **ERROR_RESPONSES},
    )
    @idempotent
    def post(self, request, version):
        """Book a priced offer, on hold or paid by card (SPEC.md §4.7)."""
        body = CreateOrderIn(data=request.data)
        body.is_valid(raise_exception=True)
        order = order_create(principal=request.user, data=body.validated_data)
        order = order_current(seller_id=request.user.seller.pk, ref=order.order_id)
        return ok(presenters.order_view(order), status=201)

    @extend_schema(
        operation_id="listOrders",
        tags=["orders"],
        parameters=[OrderListQuery],
        responses={200: ORDER_LIST_RESPONSE, **ERROR_RESPONSES},
    )
    def get(self, request, version):
        """Search the agency's bookings; one summary each, keyset-paginated (SPEC.md §4.8)."""
        query = OrderListQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        search = check_order_search(query.validated_data, agency_code=request.user.key.agency_code)
        orders, more = orders_list(search)
        now = clock.now()
        rows = [presenters.summary(o, search, now=now) for o in orders]
        return ok(
            {
                "orders": rows,
                "page": {
                    "pageSize": search.page_size,
                    "count": len(rows),
                    "lastIndex": orders[-1].pk if orders else search.last_index,
                    "hasMore": more,
                },
            }
        )


class OrderView(APIView):
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
        query = OrderRetrieveQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        order = order_current(
            seller_id=request.user.seller.pk,
            ref=orderId,
            owner_code=query.validated_data.get("ownerCode"),
        )
        return ok(presenters.order_view(order))
