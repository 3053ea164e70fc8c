"""What a caller may do (SPEC.md §5 "Permission by endpoint")."""

from rest_framework.permissions import BasePermission

from airline.api.errors import ApiError, Err
from sellers.authentication import Principal, auth_confirm, auth_pending


class _Settled(BasePermission):
    """A refusal is made only of a settled principal: one taken from the cache of
    resolved tokens before the auth stamp was read (sellers/authentication.py,
    `auth_confirm`) is settled first, and judged again if it changed."""

    def has_permission(self, request, view) -> bool:
        try:
            return self.check(request)
        except ApiError:
            if not auth_pending(request) or not auth_confirm(request):
                raise
        return self.check(request)

    def check(self, request) -> bool:
        raise NotImplementedError


class HasApiKey(_Settled):
    """Any usable API key (the auth endpoints)."""

    def check(self, request) -> bool:
        if not isinstance(request.user, Principal):
            raise ApiError(Err.UNAUTHENTICATED, "Send your API key in the x-api-key header")
        return True


class IsSeller(_Settled):
    """A token (or direct key) acting as one seller: read-only keys suffice."""

    def check(self, request) -> bool:
        if not isinstance(request.user, Principal) or request.user.seller is None:
            raise ApiError(Err.UNAUTHENTICATED, "Send Authorization: Bearer <token>")
        return True


class CanBook(IsSeller):
    """Full transaction permission: create and change order, reshop, quote."""

    def check(self, request) -> bool:
        super().check(request)
        if not request.user.key.can_book:
            raise ApiError(
                Err.FORBIDDEN, "This API key is read-only; it lacks full transaction permission"
            )
        return True


class HasAgencyCode(IsSeller):
    """An organization (agency) code on the key: OrderList."""

    def check(self, request) -> bool:
        super().check(request)
        if not request.user.key.agency_code:
            raise ApiError(Err.FORBIDDEN, "This API key has no agency code")
        return True
