"""POST /ndc/{version}/{EndpointName} (SPEC.md §4.14): find the endpoint, authenticate,
read the document, call the endpoint's handler, answer its RS."""

import functools

from django.http import HttpResponse
from drf_spectacular.utils import extend_schema
from lxml import etree
from rest_framework.views import APIView

from airline.api.errors import ApiError, Err
from airline.api.exceptions import to_api_error
from airline.api.idempotency import idempotently
from airline.api.responses import XML_CONTENT_TYPE
from ndc.endpoints import ENDPOINTS
from ndc.mapping import translated
from ndc.transport import read_document
from sellers.authentication import BearerAuthentication


class NdcView(APIView):
    authentication_classes = [BearerAuthentication]
    parser_classes = []  # the body is read and parsed by ndc.transport, never by DRF
    endpoint = None

    def initial(self, request, *args, **kwargs):
        # An endpoint name we do not serve is no route, whoever asks: 404 before
        # authentication, as an unknown JSON path is.
        self.endpoint = ENDPOINTS.get(kwargs.get("endpoint", ""))
        if self.endpoint is None:
            raise ApiError(
                Err.NOT_FOUND,
                f"No NDC endpoint {kwargs.get('endpoint')!r}; use one of " + ", ".join(ENDPOINTS),
            )
        super().initial(request, *args, **kwargs)

    def get_permissions(self):
        return [self.endpoint.permission()] if self.endpoint is not None else []

    # NDC is described in README.md ("NDC/XML") and by IATA's schemas, not in the JSON
    # API's OpenAPI document.
    @extend_schema(exclude=True)
    def post(self, request, version, endpoint):
        document = read_document(request._request, self.endpoint.request_root)

        def answer(handle=self.endpoint.handle) -> HttpResponse:
            body = handle(principal=request.user, document=document, request_id=request.request_id)
            return HttpResponse(body, content_type=XML_CONTENT_TYPE)

        if not self.endpoint.idempotent:
            return answer()
        recover = self.endpoint.recover
        # Two tries are the same request when their documents are the same XML in
        # canonical form (attribute order, quoting, empty-element style aside).
        return idempotently(
            request,
            etree.tostring(document, method="c14n"),
            answer,
            recover=(
                (lambda resource: answer(functools.partial(recover, resource=resource)))
                if recover
                else None
            ),
        )

    def handle_exception(self, exc):
        err = to_api_error(exc)
        if self.endpoint is not None:
            err = translated(err, self.endpoint.paths)
        return super().handle_exception(err)
