"""Where a webhook may be sent (DESIGN.md §10): https to public addresses only.

A seller's URL is a request our servers make on its behalf, so it must never reach the
airline's own network: loopback, private, link-local (169.254.169.254 is the cloud
metadata service), shared, reserved and multicast addresses are refused. The host is
resolved and every address checked at registration and again before each delivery,
and the delivery connects to the address that was checked: a name that resolved to a
public address at registration and to 10.0.0.5 now (DNS rebinding) is refused then.
`WEBHOOK_ALLOW_LOOPBACK` (tests, development; refused in production) admits
http://127.0.0.1 and other loopback addresses, nothing else.
"""

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings


class RefusedUrl(ValueError):
    """A webhook URL we will not send to; the message says why."""


@dataclass(frozen=True)
class Target:
    """A checked URL: its host name and port, and the checked address to connect to."""

    url: str
    scheme: str
    host: str
    port: int
    address: str


def resolve(host: str, port: int) -> list[str]:
    """Every address the host name resolves to (tests replace this)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise RefusedUrl(f"the host {host} does not resolve") from exc
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def url_check(url: str) -> Target:
    """The URL's target, or RefusedUrl: https (http only to loopback when allowed), no
    credentials, a host whose every address is public."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise RefusedUrl("not a valid URL") from exc
    allow_loopback = settings.WEBHOOK_ALLOW_LOOPBACK
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise RefusedUrl("must be an https URL")
    if parts.username or parts.password:
        raise RefusedUrl("must not carry credentials")
    if parts.fragment:
        raise RefusedUrl("must not have a fragment")
    host = parts.hostname
    port = port or (443 if parts.scheme == "https" else 80)
    addresses = resolve(host, port)
    if not addresses:
        raise RefusedUrl(f"the host {host} does not resolve")
    for address in addresses:
        _check_address(address, allow_loopback=allow_loopback)
    loopback = all(ipaddress.ip_address(a.split("%")[0]).is_loopback for a in addresses)
    if parts.scheme == "http" and not (allow_loopback and loopback):
        raise RefusedUrl("must be an https URL")
    return Target(url=url, scheme=parts.scheme, host=host, port=port, address=addresses[0])


def _check_address(address: str, *, allow_loopback: bool) -> None:
    ip = ipaddress.ip_address(address.split("%")[0])  # an IPv6 zone id is not an address
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
        ip = ip.ipv4_mapped  # ::ffff:10.0.0.1 is 10.0.0.1
    if ip.is_loopback:
        if allow_loopback:
            return
        raise RefusedUrl(f"{ip} is a loopback address")
    if ip.is_link_local:
        raise RefusedUrl(f"{ip} is a link-local (metadata) address")
    if ip.is_private:
        raise RefusedUrl(f"{ip} is a private address")
    if ip.is_multicast or ip.is_reserved or ip.is_unspecified or not ip.is_global:
        raise RefusedUrl(f"{ip} is not a public address")
