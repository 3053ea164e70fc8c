"""The one base of the API's service views (STYLE.md: views validate, call one service,
render): the acting principal and validated input, written once rather than per view."""

from collections.abc import Mapping
from typing import Any

from rest_framework.request import Request
from rest_framework.serializers import Serializer
from rest_framework.views import APIView

from airline.api.quick_validation import validated


class ServiceView(APIView):
    """An endpoint over one service call. `principal` is who acts (the token's seller and
    key); `body` and `query` are the request's input, validated by a serializer (its
    errors are the error registry's ERR-1005 with their paths)."""

    request: Request

    @property
    def principal(self) -> Any:
        # sellers.authentication.Principal, which the kernel does not import (the sellers
        # app builds on it: architecture.md "Layers").
        return self.request.user

    def body(self, shape: type[Serializer], *, optional: bool = False) -> Mapping[str, Any]:
        """The JSON body, valid against `shape`; an absent body counts as `{}` when the
        endpoint's body is optional (SPEC.md §4.11)."""
        data = self.request.data
        return validated(shape, (data or {}) if optional else data)

    def query(self, shape: type[Serializer]) -> Mapping[str, Any]:
        """The query parameters as a plain dict: DRF reads an empty value in a QueryDict
        as the parameter left out, and `origin=` must be refused like any other bad
        value."""
        return validated(shape, self.request.query_params.dict())
