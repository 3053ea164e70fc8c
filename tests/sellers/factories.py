"""factory-boy factories for partners, sellers and API keys."""

import factory
from factory.django import DjangoModelFactory

from sellers.models import ApiKey, Partner, Seller
from sellers.services import IssuedApiKey, api_key_create


class PartnerFactory(DjangoModelFactory):
    class Meta:
        model = Partner

    code = factory.Sequence(lambda n: f"P{n:04d}")
    name = factory.Faker("company")


class SellerFactory(DjangoModelFactory):
    class Meta:
        model = Seller

    partner = factory.SubFactory(PartnerFactory)
    code = factory.Sequence(lambda n: f"S{n:04d}")
    name = factory.Faker("company")
    is_default = False


class ApiKeyFactory(factory.Factory):
    """Keys are made by the real service, so they are hashed exactly as in production.
    Builds an IssuedApiKey: `.key` is the model, `.raw` the secret a client would send."""

    class Meta:
        model = IssuedApiKey

    partner = factory.SubFactory(PartnerFactory)
    seller = None
    name = "test key"
    access_level = ApiKey.Access.FULL
    agency_code = ""
    requests_per_minute = 600

    @classmethod
    def _create(cls, model_class, **kwargs) -> IssuedApiKey:
        return api_key_create(**kwargs)
