"""What a caller may do (SPEC.md §5 "Permission by endpoint")."""

from rest_framework.permissions import BasePermission

from airline.api.errors import ApiError, Err
from sellers.authentication import Principal


class HasApiKey(BasePermission):
    """Any usable API key (the auth endpoints)."""

    def has_permission(self, request, view) -> bool:
        if not isinstance(request.user, Principal):
            raise ApiError(Err.UNAUTHENTICATED, "Send your API key in the x-api-key header")
        return True


class IsSeller(BasePermission):
    """A token (or direct key) acting as one seller: read-only keys suffice."""

    def has_permission(self, request, view) -> bool:
        if not isinstance(request.user, Principal) or request.user.seller is None:
            raise ApiError(Err.UNAUTHENTICATED, "Send Authorization: Bearer <token>")
        return True


class CanBook(IsSeller):
    """Full transaction permission: create and change order, reshop, quote."""

    def has_permission(self, request, view) -> bool:
        super().has_permission(request, view)
        if not request.user.key.can_book:
            raise ApiError(
                Err.FORBIDDEN, "This API key is read-only; it lacks full transaction permission"
            )
        return True


class HasAgencyCode(IsSeller):
    """An organization (agency) code on the key: OrderList."""

    def has_permission(self, request, view) -> bool:
        super().has_permission(request, view)
        if not request.user.key.agency_code:
            raise ApiError(Err.FORBIDDEN, "This API key has no agency code")
        return True
