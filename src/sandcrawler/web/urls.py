"""Links found in a page made into absolute, safely encoded http(s) URLs."""

from __future__ import annotations

import re
from urllib.parse import quote, urljoin, urlsplit, urlunsplit

#: characters a URL may hold as they are; anything else (spaces, non-ASCII) is
#: percent-encoded as UTF-8, and existing %XX escapes are kept
_SAFE = "!#$%&'()*+,-./:;=?@[]~_"
_STRIP = re.compile(r"[\t\n\r]")
MAX_URL_CHARS = 8000


def absolute_url(raw: str, base: str) -> str | None:
    """``raw`` resolved against ``base`` as an absolute http(s) URL, or None for what is
    not one: empty, ``#fragment`` only, ``javascript:``, ``data:``, ``mailto:``, ...

    Tabs and newlines are removed (as browsers do), spaces and non-ASCII characters
    percent-encoded, an internationalised host name IDNA-encoded."""
    text = _STRIP.sub("", raw or "").strip()
    if not text or text.startswith("#") or len(text) > MAX_URL_CHARS:
        return None
    try:
        joined = urljoin(base, text) if base else text
        parts = urlsplit(joined)
    except ValueError:  # e.g. an invalid IPv6 host
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    netloc = parts.netloc if "@" in parts.netloc else parts.netloc.lower()
    if not netloc.isascii():
        try:
            host = parts.hostname.encode("idna").decode("ascii")
        except UnicodeError:
            return None
        netloc = netloc.replace(parts.hostname, host) if parts.hostname in netloc else host
    url = urlunsplit((parts.scheme.lower(), netloc, parts.path or "/", parts.query,
                      parts.fragment))
    return quote(url, safe=_SAFE)


def without_fragment(url: str) -> str:
    return url.split("#", 1)[0]


def site(url: str) -> str:
    """The last two labels of the URL's host (``plos.org`` for ``journals.plos.org``): a
    cheap stand-in for the registered domain, enough to tell a site's own links."""
    host = (urlsplit(url).hostname or "").lower()
    return ".".join(host.split(".")[-2:])


def host_of(url: str) -> str:
    return (urlsplit(url).hostname or "").lower()
