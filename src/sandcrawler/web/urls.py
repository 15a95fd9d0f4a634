"""URLs made safe to request and to record: absolute, http(s), ASCII, no
credentials, as a browser would make them (the WHATWG URL rules, where they
matter here).

Every URL the fetcher requests goes through ``absolute_url`` first (``base_url``,
links, meta refreshes, redirect targets, platforms' download URLs), so what is
sent, what is written to a WARC file (``WARC-Target-URI``) and what is indexed
(``web_cdx.url``) are the same string: no control character, space or non-ASCII
character in it, and no ``user:password@``.
"""

from __future__ import annotations

import functools
import ipaddress
import re
from urllib.parse import quote, urljoin, urlsplit, urlunsplit

from urllib3.exceptions import LocationParseError
from urllib3.util import parse_url

#: characters a URL may hold as they are; anything else (spaces, control
#: characters, non-ASCII) is percent-encoded as UTF-8, and existing %XX escapes are kept
_SAFE = "!#$%&'()*+,-./:;=?@[]~_"
#: removed wherever they are, as browsers do
_STRIP = re.compile(r"[\t\n\r]")
#: removed from both ends, as browsers do: C0 controls and space
_ENDS = "".join(chr(c) for c in range(0x21))
#: what a host name may be made of once IDNA-encoded (underscores occur in the wild)
_HOST = re.compile(r"^[a-z0-9_-]+(\.[a-z0-9_-]+)*\.?$")
MAX_URL_CHARS = 8000


@functools.lru_cache(maxsize=8192)  # a URL is made so when found and again when fetched
def absolute_url(raw: str, base: str) -> str | None:
    """``raw`` resolved against ``base`` as an absolute http(s) URL, or None for what is
    not one: empty, ``#fragment`` only, ``javascript:``, ``data:``, ``mailto:``, a
    host that is not a host name or an IP address, a bad port, ...

    Tabs and newlines are removed and control characters and spaces stripped from
    the ends (as browsers do); the rest of the control characters, spaces and
    non-ASCII characters are percent-encoded as UTF-8; an internationalised host
    name is IDNA-encoded; credentials (``user:password@``) are dropped."""
    text = _STRIP.sub("", raw or "").strip(_ENDS)
    if not text or text.startswith("#") or len(text) > MAX_URL_CHARS:
        return None
    try:
        joined = urljoin(base, text) if base else text
        parts = urlsplit(joined)
        port = parts.port
    except ValueError:  # an invalid IPv6 host, a port that is not a number
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    host = _host(parts.hostname)
    if host is None:
        return None
    netloc = host if port is None else f"{host}:{port}"
    url = urlunsplit((parts.scheme.lower(), netloc, parts.path or "/", parts.query,
                      parts.fragment))
    try:
        # as urllib3 will send it (it encodes [ ] in paths, upper-cases escapes):
        # what is requested and what is recorded are the same string
        return str(parse_url(quote(url, safe=_SAFE)).url)
    except LocationParseError:
        return None


def request_url(base_url: str) -> str | None:
    """A request's ``base_url`` as the URL to crawl, or None when it is not an
    absolute http(s) URL. Unlike a link found in a page, a tab or a newline in a
    request is refused rather than removed: it is a forged or mangled request,
    not a page's typo."""
    if any(c in base_url for c in "\r\n\t"):
        return None
    return absolute_url(base_url, "")


def _host(hostname: str) -> str | None:
    """The host as it goes into a URL (IDNA, an IPv6 address in brackets), or
    None when it is neither a host name nor an IP address."""
    if ":" in hostname:
        try:
            return f"[{ipaddress.IPv6Address(hostname)}]"
        except ValueError:
            return None
    if not hostname.isascii():
        try:
            hostname = hostname.encode("idna").decode("ascii")
        except UnicodeError:
            return None
    hostname = hostname.lower()
    return hostname if _HOST.match(hostname) else None


def header_text(value: str) -> str:
    """A header value as the server meant it: http.client decodes header bytes
    as Latin-1, but servers send URLs in UTF-8 (raw UTF-8 in ``Location`` is
    common); bytes that are not UTF-8 stay Latin-1."""
    if value.isascii():
        return value
    try:
        return value.encode("latin-1").decode("utf-8")
    except UnicodeError:
        return value


def redirect_target(location: str, url: str) -> str | None:
    """Where a ``Location`` header sent from ``url`` leads, as ``absolute_url``
    makes it; None when that is not an http(s) URL."""
    return absolute_url(header_text(location), url)


def without_fragment(url: str) -> str:
    return url.split("#", 1)[0]


def site(url: str) -> str:
    """The last two labels of the URL's host (``plos.org`` for ``journals.plos.org``): a
    cheap stand-in for the registered domain, enough to tell a site's own links."""
    host = (urlsplit(url).hostname or "").lower()
    return ".".join(host.split(".")[-2:])
