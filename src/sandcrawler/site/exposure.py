"""Who may talk to ``sandcrawler serve`` (and ``grobid-serve``, which reuses this
and the site's ``Guard``): the Host names it answers and its token.

Against DNS rebinding the server answers only ``Host`` values that cannot be an
attacker's name: the address bound (or, on loopback, localhost and loopback
addresses; on 0.0.0.0 any IP address), and ``serve.allowed_hosts``. Anything else
is 421 (a name not ours) or 400 (no, several or a malformed Host). A token,
required beyond loopback, is a Bearer token of at least 16 characters
(docs/api.md, "Who may ask").
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from typing import Protocol

from sandcrawler.core.errors import ConfigError

ANY = "*"
TOKEN_MIN = 16
_TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
_PORT = re.compile(r"(:[0-9]{0,5})?")

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class Exposure(Protocol):
    """What a web service's section says about its exposure (``serve``,
    ``grobid_serve``)."""

    @property
    def host(self) -> str: ...
    @property
    def token(self) -> str: ...
    @property
    def allowed_hosts(self) -> list[str]: ...


def _address(name: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(name.removeprefix("[").removesuffix("]"))
    except ValueError:
        return None


def is_loopback(host: str) -> bool:
    """Whether listening on ``host`` (an address or ``localhost``) serves this machine only."""
    address = _address(host)
    return host == "localhost" or (address is not None and address.is_loopback)


def check(settings: Exposure, section: str = "serve") -> None:
    """ConfigError, one line, when ``settings`` (the ``section`` table) would expose
    the service unprotected: a host beyond loopback without a token, or a token
    that is weak."""
    if not settings.token:
        if not is_loopback(settings.host):
            raise ConfigError(f"refusing to listen on {settings.host} without a token: set "
                              f"SANDCRAWLER_{section.upper()}_TOKEN (or token in the "
                              f"[{section}] table), or listen on 127.0.0.1")
        return
    if len(settings.token) < TOKEN_MIN or not _TOKEN.fullmatch(settings.token):
        # the token itself stays out of the message: it lands in logs
        raise ConfigError(
            f"{section}.token must be at least {TOKEN_MIN} characters of letters, digits "
            "and -._~+/ (a Bearer token); make one with: python3 -c "
            "'import secrets; print(secrets.token_urlsafe(24))'")


def host_name(value: str) -> str | None:
    """The name in a Host header's value, lower-case (an IPv6 address without its
    brackets), its port dropped; None when the value is not ``name[:port]``."""
    if value.startswith("["):  # an IPv6 address, the only form with colons of its own
        name, bracket, rest = value[1:].partition("]")
        address = _address(name)
        if not bracket or address is None or address.version != 6:
            return None
    else:
        name, colon, port = value.partition(":")
        rest = colon + port
    if not name or not _PORT.fullmatch(rest):
        return None
    return name.lower()


@dataclass(frozen=True)
class Hosts:
    """The Host values a server bound to ``bound`` answers (table above)."""

    bound: str
    allowed: frozenset[str] = field(default_factory=frozenset)
    #: the table whose ``allowed_hosts`` a refusal names
    section: str = "serve"

    @classmethod
    def of(cls, settings: Exposure, section: str = "serve") -> Hosts:
        return cls(settings.host, frozenset(settings.allowed_hosts), section)

    def allows(self, name: str) -> bool:
        if ANY in self.allowed or name in self.allowed:
            return True
        bound = _address(self.bound)
        if name == self.bound.lower().removeprefix("[").removesuffix("]"):
            return True
        every = bound is not None and bound.is_unspecified
        local = every or is_loopback(self.bound)
        address = _address(name)
        if address is None:
            return local and name == "localhost"
        return every or (local and address.is_loopback)

    def refusal(self, values: list[bytes]) -> tuple[int, bytes] | None:
        """None when one Host header with a name this server answers came; else the
        status and one line saying why, without repeating the value."""
        name = host_name(values[0].decode("latin-1")) if len(values) == 1 else None
        if name is None:
            return 400, (b"400 Bad Request: a request needs one Host header, a host name "
                         b"or address with an optional port\n")
        if not self.allows(name):
            return 421, (b"421 Misdirected Request: this server does not answer to that "
                         b"host name (its operator can allow it: setting "
                         + self.section.encode() + b".allowed_hosts)\n")
        return None


LOOPBACK = Hosts("127.0.0.1")
