"""OpenAPI schemas and examples of the order endpoints (documentation only: the views
render plain dicts, orders/reading/presenters.py).

`variants` draws the typed request members (drf-spectacular finds its extensions once
the module is imported, as this package does); `order_view` the order view and
OrderList; `reshop` reshop offers and quotes; `examples` the request examples.
"""

from orders.openapi.examples import CHANGE_EXAMPLES, CREATE_EXAMPLES, RESHOP_EXAMPLES
from orders.openapi.order_view import ORDER_LIST_RESPONSE, ORDER_VIEW_RESPONSE
from orders.openapi.reshop import QUOTE_RESPONSE, RESHOP_RESPONSE
from orders.openapi.variants import ChangeScheme, PaymentScheme, ReshopInstructionScheme

__all__ = [
    "CHANGE_EXAMPLES",
    "CREATE_EXAMPLES",
    "ORDER_LIST_RESPONSE",
    "ORDER_VIEW_RESPONSE",
    "QUOTE_RESPONSE",
    "RESHOP_EXAMPLES",
    "RESHOP_RESPONSE",
    "ChangeScheme",
    "PaymentScheme",
    "ReshopInstructionScheme",
]
