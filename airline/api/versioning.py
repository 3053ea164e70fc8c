"""The `{version}` path segment (SPEC.md §9, DESIGN.md §4): v0, v1 and v2 are identical."""

from django.conf import settings


class VersionConverter:
    regex = "|".join(settings.API_VERSIONS)

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value
