"""The request members whose `type` decides the rest (payment, change, reshop
instruction), drawn as one variant per type."""

from drf_spectacular.extensions import OpenApiSerializerExtension

from airline.api.openapi import typed_variants
from orders.requests.serializers import (
    CARD_FIELDS,
    CHANGE_NEEDS,
    CHANGE_OWN_FIELDS,
    CHANGE_TYPES,
    PAYMENT_OWN_FIELDS,
    RESHOP_OWN_FIELDS,
    RESHOP_TYPES,
)

# The payment types create order and change order take (DESIGN.md §11); any other is
# ERR-6000, which the description states by listing these.
PAYMENT_TYPES = ["Hold", "CreditCard", "AirlineCredit"]
PAYMENT_NEEDS = {"CreditCard": CARD_FIELDS, "AirlineCredit": ("creditCode",)}
# What each reshop instruction needs beyond `type` (orders/servicing/exchange/, cancel.py,
# amend.py refuse it without them: ERR-1005).
RESHOP_NEEDS = {
    "ReshopItinerary": ("originDestinations",),
    "DeleteOrderItems": ("orderItemRefIds",),
    "NameChange": ("paxRefId", "surname"),
}


class _TypedVariants(OpenApiSerializerExtension):
    """A request member whose `type` decides the rest: one variant per type, each with
    the members it needs (airline.api.openapi.typed_variants). No target of its own."""

    priority = 1
    kinds: list[str]
    needs: dict[str, tuple[str, ...]]
    own: dict[str, tuple[str, ...]]
    suffix: str

    def map_serializer(self, auto_schema, direction):
        return typed_variants(
            auto_schema,
            self.target,
            direction,
            kinds=self.kinds,
            needs=self.needs,
            own=self.own,
            suffix=self.suffix,
        )


class PaymentScheme(_TypedVariants):
    """`payment`: Hold, CreditCard or AirlineCredit, each with the members it needs."""

    target_class = "orders.requests.serializers.PaymentIn"
    kinds, needs, own, suffix = PAYMENT_TYPES, PAYMENT_NEEDS, PAYMENT_OWN_FIELDS, "Payment"


class ChangeScheme(_TypedVariants):
    """A change order `changes[]` entry: one variant per change type."""

    target_class = "orders.requests.serializers.ChangeIn"
    kinds, needs, own, suffix = CHANGE_TYPES, CHANGE_NEEDS, CHANGE_OWN_FIELDS, "Change"


class ReshopInstructionScheme(_TypedVariants):
    """A reshop `instruction`: one variant per instruction type."""

    target_class = "orders.requests.serializers.ReshopInstructionIn"
    kinds, needs, own, suffix = RESHOP_TYPES, RESHOP_NEEDS, RESHOP_OWN_FIELDS, "Instruction"
