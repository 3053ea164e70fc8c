"""How drf-spectacular describes our authentication (registered on import, apps.py)."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class SellerAuthenticationScheme(OpenApiAuthenticationExtension):
    """A bearer token, or else a partner key sent directly in x-api-key, which acts as
    its default seller (SPEC.md §5 item 2): either one, not both."""

    target_class = "sellers.authentication.SellerAuthentication"
    name = ["bearerAuth", "apiKey"]
    priority = 1

    def get_security_definition(self, auto_schema):
        return [
            {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"},
            {"type": "apiKey", "in": "header", "name": "x-api-key"},
        ]

    def get_security_requirement(self, auto_schema):
        return [{"bearerAuth": []}, {"apiKey": []}]  # a list: alternatives (OR)


class ApiKeyAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = "sellers.authentication.ApiKeyAuthentication"
    name = "apiKey"
    priority = 1

    def get_security_definition(self, auto_schema):
        return {"type": "apiKey", "in": "header", "name": "x-api-key"}
