"""What every platform helper shares: the seed's interface, its errors, the
landing page it looks at, the strategy rule, and item names.

A helper turns a request (and the landing page we captured for it) into a
``FilesetPlatformItem``: the platform's own record of the dataset, read from its
public API, with a manifest of files, their sizes and whatever checksums the
platform gives, and where each file is downloaded from.
"""

from __future__ import annotations

import hashlib
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar
from urllib.parse import parse_qs, urlsplit

import orjson

from sandcrawler.config import FilesetSettings, Section
from sandcrawler.core.errors import RecordError
from sandcrawler.records.platform_item import FilesetPlatformItem, IngestStrategy
from sandcrawler.records.statuses import FilesetStatus

if TYPE_CHECKING:  # the settings (and so every command) read this module
    from sandcrawler.records.html_biblio import HtmlBiblio
    from sandcrawler.records.ingest import IngestRequest
    from sandcrawler.web.http.fetch import HttpFetcher, JsonAnswer


class PlatformScopeError(RecordError):
    """A real platform record, but not one version of one dataset (e.g. a DOI
    naming all versions)."""

    status = FilesetStatus.PLATFORM_SCOPE


class PlatformRestrictedError(RecordError):
    """Embargoed, restricted or dark: the files are not public."""

    status = FilesetStatus.PLATFORM_RESTRICTED


class PlatformNotFoundError(RecordError):
    """The URL looks like the platform's, but the platform has no such record."""

    status = FilesetStatus.PLATFORM_404


class PlatformApiError(RecordError):
    """The platform's API did not answer usably (5xx, 429 after retries, not JSON)."""

    status = FilesetStatus.ERROR_PLATFORM_API


@dataclass(slots=True)
class LandingPage:
    """The seed's ``resource``: the captured landing page of a request, and
    every URL its redirects went through."""

    url: str
    terminal_url: str
    status_code: int | None = None
    mimetype: str | None = None
    html: bytes | None = None
    hops: list[str] = field(default_factory=list)

    @property
    def urls(self) -> list[str]:
        """The request's URL, then each redirect's target: the earliest URL a
        platform recognises names what was asked for (a Zenodo concept record
        that redirects to its latest version is still the concept)."""
        seen = [self.url]
        for url in [*self.hops, self.terminal_url]:
            if url not in seen:
                seen.append(url)
        return seen


S = TypeVar("S", bound=Section)


class PlatformHelper(ABC, Generic[S]):
    """One platform: ``match_request``, ``process_request``, ``choose_strategy``.

    A helper gets its own settings section (declared beside it), the fetcher,
    and the fileset settings that hold the strategy rule's thresholds."""

    name: str

    def __init__(self, settings: S, fetcher: HttpFetcher, rule: FilesetSettings) -> None:
        self.settings = settings
        self.fetcher = fetcher
        self.rule = rule

    @abstractmethod
    def locate(self, request: IngestRequest, resource: LandingPage) -> Any | None:
        """What the platform's page among the request's URLs names (the page, its
        ids), or None when none of them is this platform's."""

    def match_request(self, request: IngestRequest, resource: LandingPage,
                      html_biblio: HtmlBiblio | None) -> bool:
        """Do the request and its landing page belong to this platform?"""
        return self.locate(request, resource) is not None

    @abstractmethod
    def process_request(self, request: IngestRequest, resource: LandingPage,
                        html_biblio: HtmlBiblio | None) -> FilesetPlatformItem:
        """Ask the platform's API for the dataset: its item and manifest.
        PlatformScopeError, PlatformRestrictedError, PlatformNotFoundError or
        PlatformApiError when that cannot be had."""

    def choose_strategy(self, item: FilesetPlatformItem) -> IngestStrategy:
        return choose_strategy(item, self.rule)

    @staticmethod
    def find_page(request: IngestRequest, resource: LandingPage, hosts: list[str],
                  path: re.Pattern[str]) -> tuple[str, re.Match[str]] | None:
        """The first of the landing page's URLs (terminal, then requested) on one
        of ``hosts`` whose path matches ``path``."""
        for url in resource.urls:
            if host_matches(url_host(url), hosts):
                m = path.match(urlsplit(url).path)
                if m:
                    return url, m
        return None

    def get_json(self, url: str) -> Any:
        """The platform API's JSON answer; the platform errors for the rest."""
        return self.get_answer(url).value

    def get_answer(self, url: str) -> JsonAnswer:
        """``get_json`` with the answer's headers and final URL (paging links)."""
        try:
            answer = self.fetcher.get_answer(url)
        except RecordError as e:
            # No answer at all (host unknown or down, a redirect loop) keeps the
            # fetch's own status: error-platform-api is for what an API answered.
            raise RecordError(f"{self.name} API: {e}", status=e.status) from None
        status = answer.status
        if answer.rate_limited:
            # a 429, or GitHub's 403 with X-RateLimit-Remaining: 0: not a refusal
            # (never platform-restricted) but a wait the fetcher would not make
            # (over crawl.retry_after_max); the host stays slowed, and the record
            # is error-platform-api, worth asking again later
            wait = answer.rate_limit_wait
            raise PlatformApiError(
                f"{self.name} API: rate-limited (HTTP {status}) for {url}"
                + (f"; the limit resets in {wait:.0f} s" if wait is not None else ""))
        if status in (404, 410):
            raise PlatformNotFoundError(f"{self.name} API: HTTP {status} for {url}")
        if status in (401, 403):
            raise PlatformRestrictedError(f"{self.name} API: HTTP {status} for {url}")
        if status != 200 or answer.value is None:
            what = f"HTTP {status}" if status != 200 else "an answer that is not JSON"
            raise PlatformApiError(f"{self.name} API: {what} for {url}")
        return answer

    def pages(self, url: str, next_url: Callable[[JsonAnswer], str | None],
              entries: Callable[[JsonAnswer], Any] | None = None) -> Iterator[JsonAnswer]:
        """Every page of a paged listing, from ``url`` on, each page's successor
        given by ``next_url``. A listing must end: a next URL already asked, a page
        whose ``entries`` (default: the whole answer) are an earlier page's again
        (a server that ignores its page parameter), or more pages than
        ``fileset.max_file_count`` (each page holds at least one entry) is
        error-platform-api, never an endless walk."""
        seen_urls: set[str] = set()
        seen_pages: set[bytes] = set()
        while url:
            if url in seen_urls or len(seen_urls) >= self.rule.max_file_count:
                why = "comes back to" if url in seen_urls else "goes on past"
                raise PlatformApiError(f"{self.name} API: the listing {why} {url} "
                                       f"after {len(seen_urls)} pages")
            seen_urls.add(url)
            answer = self.get_answer(url)
            shown = entries(answer) if entries is not None else answer.value
            digest = hashlib.sha1(orjson.dumps(shown)).digest()
            if digest in seen_pages:
                raise PlatformApiError(f"{self.name} API: the listing repeats itself at {url} "
                                       f"(page {len(seen_urls)} is an earlier page again)")
            seen_pages.add(digest)
            yield answer
            url = next_url(answer) or ""

    def check_file_count(self, count: int) -> None:
        """too-many-files as soon as a listing passes ``fileset.max_file_count``,
        so a listing of 100,000 files stops at its first pages."""
        limit = self.rule.max_file_count
        if count > limit:
            raise RecordError(f"{self.name}: more than max_file_count {limit} files "
                              f"({count} listed so far)", FilesetStatus.TOO_MANY_FILES)


#: how platforms spell the three algorithms every manifest entry has a field for
_FIELDS = {"md5": "md5", "sha1": "sha1", "sha256": "sha256"}


def checksums(pairs: Iterable[tuple[str, str | None]]) -> dict[str, Any]:
    """``FilesetManifestFile`` keyword arguments for a platform's checksums, given
    as (algorithm, value) in its own spelling (``MD5``, ``sha-256``, ``SHA256``):
    ``md5``/``sha1``/``sha256``, and every other algorithm under ``checksums``
    by its plain name (``sha512``, ``git-sha1``). Empty values are dropped."""
    fields: dict[str, Any] = {}
    others: dict[str, str] = {}
    for algorithm, value in pairs:
        if not value or not str(value).strip():
            continue
        name = str(algorithm).strip().lower()
        plain = name.replace("-", "").replace("_", "")
        value = str(value).strip().lower()
        if plain in _FIELDS:
            fields.setdefault(_FIELDS[plain], value)
        else:
            others.setdefault(name if name.startswith("git-") else plain, value)
    if others:
        fields["checksums"] = others
    return fields


def choose_strategy(item: FilesetPlatformItem, rule: FilesetSettings,
                    backend: str | None = None) -> IngestStrategy:
    """The documented rule (docs/fileset.md): the web archive for a few small
    files, the item store beyond ``fileset.web_max_*``; one file is a ``*-file``;
    many files with a platform "download all" zip, at least
    ``fileset.bundle_min_files`` of them, are ``*-fileset-bundled``."""
    manifest = item.manifest or []
    sizes = [f.size or 0 for f in manifest]
    if backend is None:
        small = (len(manifest) <= rule.web_max_files
                 and sum(sizes) <= rule.web_max_total_size
                 and max(sizes, default=0) <= rule.web_max_file_size)
        backend = "web" if small else "archiveorg"
    if len(manifest) == 1:
        return IngestStrategy(f"{backend}-file")
    if item.web_bundle_url and len(manifest) >= rule.bundle_min_files:
        return IngestStrategy(f"{backend}-fileset-bundled")
    return IngestStrategy(f"{backend}-fileset")


_ITEM_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def item_name(domain: str, platform_id: str, version: str | None) -> str:
    """An item store name like the original's ``{domain}-{id}-v{version}``,
    reduced to the characters archive.org identifiers allow."""
    raw = f"{domain}-{platform_id}" + (f"-v{version}" if version else "")
    return _ITEM_UNSAFE.sub("_", raw).strip("._-")[:100]


def file_item_name(dataset_item: str, path: str) -> str:
    """The item a file-level request is archived under when its dataset's item
    does not hold it: ``{dataset item}-file-{first 12 hex of sha1(path)}``,
    so a one-file archive never takes the whole dataset's name."""
    digest = hashlib.sha1(path.encode()).hexdigest()[:12]
    return f"{dataset_item[:100 - len(digest) - 6]}-file-{digest}"


def url_host(url: str) -> str:
    """``web.urls.host_of``, imported on first use: every command reads this module
    (the settings' platform sections), and ``sandcrawler.web`` is not for start-up
    (tests/cli/test_cli_startup.py)."""
    from sandcrawler.web.http.urls import host_of

    return host_of(url)


def host_matches(host: str, hosts: list[str]) -> bool:
    """``host`` is one of ``hosts`` or a subdomain of one (``www.`` included)."""
    return any(host == h or host.endswith("." + h) for h in hosts)


def listed_host(host: str, hosts: list[str]) -> str | None:
    """The entry of ``hosts`` that ``host`` is, or is a subdomain of; the most
    specific one when several are (``sandbox.zenodo.org`` is also under
    ``zenodo.org``, and is its own platform instance)."""
    found = [h for h in hosts if host == h or host.endswith("." + h)]
    return max(found, key=len) if found else None


def instance(page: str, hosts: list[str], api_urls: dict[str, str],
             api_url: str | None) -> tuple[str, str]:
    """The platform instance a page is on: its domain (the entry of ``hosts`` it
    matched, so ``www.zenodo.org`` is ``zenodo.org``) and its API base
    (``api_urls`` of that domain, else ``api_url``, else ``https://{domain}/api``).
    Record ids are only unique within an instance, so a sandbox's records are
    asked of the sandbox and named by its host."""
    domain = listed_host(url_host(page), hosts) or url_host(page)
    return domain, api_urls.get(domain) or api_url or f"https://{domain}/api"


def query_param(url: str, name: str) -> str | None:
    values = parse_qs(urlsplit(url).query).get(name)
    return values[0].strip() if values and values[0].strip() else None
