"""Where a webhook may be sent (DESIGN.md §10): https to public addresses only.

A seller's URL is a request our servers make on its behalf, so it must never reach the
airline's own network: loopback, private, link-local (169.254.169.254 is the cloud
metadata service), shared, reserved and multicast addresses are refused, and so are IPv6
addresses that carry one of those in IPv4 (mapped ::ffff:0:0/96, 6to4 2002::/16, NAT64
64:ff9b::/96): a 6to4 relay or NAT64 gateway would deliver them there. The host is
resolved and every address checked at registration and again before each delivery,
and the delivery connects to the address that was checked: a name that resolved to a
public address at registration and to 10.0.0.5 now (DNS rebinding) is refused then.
`WEBHOOK_ALLOW_LOOPBACK` (tests, development; refused in production) admits
http://127.0.0.1 and other loopback addresses, nothing else.
"""

import ipaddress
import socket
import unicodedata
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings

# NAT64 prefixes (RFC 6052 well-known, RFC 8215 local use): the last 32 bits are the
# IPv4 address a NAT64 gateway forwards to.
NAT64 = (ipaddress.IPv6Network("64:ff9b::/96"), ipaddress.IPv6Network("64:ff9b:1::/48"))


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


# Unicode categories refused anywhere in a URL: controls (Cc), format characters such as
# U+200B ZERO WIDTH SPACE and U+202E RIGHT-TO-LEFT OVERRIDE (Cf), surrogates (Cs),
# private-use (Co) and unassigned (Cn) code points, and every separator: U+2028 LINE
# SEPARATOR (Zl), U+2029 PARAGRAPH SEPARATOR (Zp), spaces including U+00A0 and U+3000
# (Zs). None prints as itself, so a URL holding one is not the URL staff and the seller
# read back.
REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"})


def check_url(url: str) -> Target:
    """The URL's target, or RefusedUrl: https (http only to loopback when allowed), no
    credentials, no control, invisible or separator character, a real port, a host whose
    every address is public."""
    # urlsplit quietly drops tabs and line breaks (WHATWG), so a URL holding them would
    # be checked as one URL, stored and shown back as another, and a CR/LF is a header
    # injection wherever the URL is ever written into a request line or a log.
    for ch in url:
        if unicodedata.category(ch) in REFUSED_CATEGORIES:
            raise RefusedUrl(
                f"must not contain control, invisible or space characters (U+{ord(ch):04X})"
            )
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise RefusedUrl("not a valid URL") from exc
    if port == 0:
        # `port or 443` below would send it to 443 while the URL says 0.
        raise RefusedUrl("port 0 is not a port")
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


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address reaches through a translator, if it names one:
    ::ffff:10.0.0.1 is 10.0.0.1, 6to4 2002:7f00:1:: is 127.0.0.1, NAT64 64:ff9b::a00:1
    is 10.0.0.1."""
    if ip.ipv4_mapped:
        return ip.ipv4_mapped
    if ip.sixtofour:
        return ip.sixtofour
    if any(ip in net for net in NAT64):
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def _check_address(address: str, *, allow_loopback: bool) -> None:
    ip = ipaddress.ip_address(address.split("%")[0])  # an IPv6 zone id is not an address
    if isinstance(ip, ipaddress.IPv6Address) and (embedded := _embedded_ipv4(ip)) is not None:
        if not embedded.is_global or embedded.is_multicast:
            # Never loopback either, whatever WEBHOOK_ALLOW_LOOPBACK: a translator that
            # answers for 127.0.0.1 is not the local test receiver the setting admits.
            raise RefusedUrl(f"{ip} reaches {embedded}, which is not a public address")
        ip = embedded
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
