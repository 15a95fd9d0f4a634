"""Which network addresses the crawler may connect to.

The crawler is fed URLs from outside, so it must not be a proxy into its own
network: by default only globally routable unicast addresses are allowed
(no loopback, private, link-local, shared, multicast or reserved addresses,
nor IPv6 addresses carrying such an IPv4 one). The check is made on the address
actually connected to, on every connection (``web.http.connections``);
``http.allow_networks`` allows more (docs/operations.md, "Which addresses the
crawler connects to").
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

from sandcrawler.core.errors import ConfigError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

#: IPv6 prefixes that embed an IPv4 address in their last 32 bits (NAT64, RFC 6052)
_NAT64 = (ipaddress.IPv6Network("64:ff9b::/96"), ipaddress.IPv6Network("64:ff9b:1::/48"))


def parse_networks(values: Iterable[str], setting: str = "http.allow_networks"
                   ) -> tuple[IPNetwork, ...]:
    """Networks in CIDR notation (an address alone is its own /32 or /128);
    ConfigError, one line naming ``setting``, for one that is not."""
    out = []
    for value in values:
        try:
            out.append(ipaddress.ip_network(value.strip(), strict=False))
        except ValueError:
            raise ConfigError(f"{setting}: {value!r} is not a network (e.g. 10.20.0.0/16, "
                              "fd00:1::/64 or 192.0.2.7)") from None
    return tuple(out)


def embedded_ipv4(address: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries (mapped, compatible, 6to4,
    NAT64), or None."""
    if isinstance(address, ipaddress.IPv4Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if any(address in net for net in _NAT64):
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if int(address) >> 32 == 0 and int(address) > 1:  # ::a.b.c.d, deprecated "compatible"
        return ipaddress.IPv4Address(int(address))
    return None


def why_not_public(address: IPAddress) -> str | None:
    """Why ``address`` is not a globally routable unicast address, or None."""
    inner = embedded_ipv4(address)
    if inner is not None:
        why = why_not_public(inner)
        return None if why is None else f"an IPv6 address that carries {inner}, {why}"
    for flag, what in (("is_unspecified", "unspecified"), ("is_loopback", "loopback"),
                       ("is_link_local", "link-local"), ("is_multicast", "multicast"),
                       ("is_private", "private"), ("is_reserved", "reserved")):
        if getattr(address, flag):
            return f"a {what} address"
    if not address.is_global:  # 100.64/10 and what the registries keep back
        return "not a globally routable address"
    return None


class AddressPolicy:
    """Globally routable addresses, and the networks in ``allow``."""

    def __init__(self, allow: Iterable[str] = ()) -> None:
        self.allow = parse_networks(allow)

    def refusal(self, address: str) -> str | None:
        """Why the crawler may not connect to ``address`` (an IP address as a
        resolver gives it; an IPv6 scope is ignored), or None when it may."""
        try:
            ip = ipaddress.ip_address(address.split("%", 1)[0])
        except ValueError:
            return f"{address!r} is not an IP address"
        if any(ip in net for net in self.allow):
            return None
        why = why_not_public(ip)
        if why is None:
            return None
        return f"{ip} is {why} (allow its network with http.allow_networks)"
