"""Typed readers for environment variables, failing loudly on bad values."""

import os

from django.core.exceptions import ImproperlyConfigured


def env_str(name: str, default: str | None = None) -> str | None:
    value = os.environ.get(name)
    return value if value not in (None, "") else default


def env_bool(name: str, default: bool = False) -> bool:
    value = env_str(name)
    if value is None:
        return default
    if value.lower() in ("1", "true", "yes", "on"):
        return True
    if value.lower() in ("0", "false", "no", "off"):
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (1/0, true/false), not {value!r}")


def env_int(name: str, default: int) -> int:
    value = env_str(name)
    if value is None:
        return default
    try:
        return int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, not {value!r}") from None


def env_list(name: str, default: list[str]) -> list[str]:
    value = env_str(name)
    if value is None:
        return default
    return [item.strip() for item in value.split(",") if item.strip()]


def database_url_hosts(url: str) -> tuple[str, list[str], list[str]]:
    """A database URL with libpq's host list (`user@h1:p1,h2:p2/db`) split: the URL with
    its first host alone, and the hosts and ports in order (a port defaults to 5432). A
    one-host URL comes back unchanged, with no lists."""
    scheme, sep, rest = url.partition("://")
    netloc, slash, tail = rest.partition("/")
    userinfo, at, hostlist = netloc.rpartition("@")
    if not sep or "," not in hostlist:
        return url, [], []
    hosts, ports = [], []
    for entry in hostlist.split(","):
        host, _, port = entry.partition(":")
        hosts.append(host)
        ports.append(port or "5432")
    first = f"{hosts[0]}:{ports[0]}"
    return f"{scheme}{sep}{userinfo}{at}{first}{slash}{tail}", hosts, ports
