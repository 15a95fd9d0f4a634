"""URLs made safe to request and to record: absolute, http(s), ASCII, no
credentials, as a browser would make them (the WHATWG URL rules, where they
matter here).

Every URL the fetcher requests goes through ``absolute_url`` first, so what is
sent, written to a WARC file and indexed is the same string. The one module of
URL parts: ``host_of``, ``registered_domain`` (the bundled Public Suffix List),
``without_fragment``, ``canonical_url`` (docs/ingest.md, "URLs").
"""

from __future__ import annotations

import functools
import ipaddress
import re
from urllib.parse import quote, urljoin, urlsplit, urlunsplit

from publicsuffixlist import PublicSuffixList
from urllib3.exceptions import LocationParseError
from urllib3.util import parse_url
from w3lib.url import canonicalize_url

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
        # what is requested and what is recorded are the same string. A byte that
        # is not UTF-8 (a command-line argument or a file's line, decoded with
        # surrogateescape) is sent as the byte it was: %FF
        return str(parse_url(quote(url, safe=_SAFE, errors="surrogateescape")).url)
    except (LocationParseError, UnicodeEncodeError):  # a surrogate that stands for no byte
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
    """``url`` less its ``#fragment`` (never sent to a server, so never recorded)."""
    return url.split("#", 1)[0]


def host_of(url: str) -> str:
    """The host of ``url``, lower-case, without port or credentials ("" when none,
    and for what ``urlsplit`` refuses: a malformed IPv6 host, say)."""
    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""


@functools.cache
def _public_suffixes() -> PublicSuffixList:
    # the list bundled with the package, read once on first use (about 0.1 s): no
    # download at run time
    return PublicSuffixList()


@functools.lru_cache(maxsize=4096)
def host_domain(host: str) -> str:
    """The registered domain of a host name: the public suffix plus one label
    (``ox.ac.uk`` for ``www.ox.ac.uk``, ``plos.org`` for ``journals.plos.org``). An IP
    address, a name with no public suffix (``localhost``) or a public suffix itself is
    its own domain."""
    host = host.lower().rstrip(".")
    if not host or host.startswith("[") or _is_ip(host):
        return host
    return _public_suffixes().privatesuffix(host) or host


def registered_domain(url: str) -> str:
    """The registered domain of the URL's host (``host_domain``): what tells a site's
    own links from others'."""
    return host_domain(host_of(url))


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def canonical_url(url: str) -> str:
    """The form two URLs for the same resource share, for a crawl's visited set
    (replay looks captures up by the URL as recorded): w3lib's
    ``canonicalize_url`` (query arguments sorted, escapes normalised, dot
    segments resolved, the fragment dropped). Compare by it; never
    fetch or record it: the server is asked for the URL as found. A URL w3lib
    cannot take apart (a port out of range, a broken IPv6 literal, a lone
    surrogate) is its own form, without its fragment: pages link to such URLs."""
    try:
        return canonicalize_url(url)
    except (ValueError, UnicodeError):
        return without_fragment(url)
