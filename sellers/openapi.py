"""How drf-spectacular describes our authentication (registered on import, apps.py)."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class SellerAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = "sellers.authentication.SellerAuthentication"
    name = "bearerAuth"
    priority = 1

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}


class ApiKeyAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = "sellers.authentication.ApiKeyAuthentication"
    name = "apiKey"
    priority = 1

    def get_security_definition(self, auto_schema):
        return {"type": "apiKey", "in": "header", "name": "x-api-key"}
