"""Dryad (datadryad.org), through its REST API v2 (HAL JSON).

A dataset page (or its DOI) is read at its latest version:
``/datasets/{DOI}`` → ``stash:version`` → ``stash:files`` (paged) → each file's
``stash:download``; the version's own ``stash:download`` is its "download all".
Not public, embargoed or undownloadable files are ``platform-restricted``; the
sandbox has its own API (``api_urls``). Since January 2026 anonymous downloads
answer 401 (``error-platform-download``) (docs/fileset.md, "Platforms").
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote, urljoin, urlsplit

from pydantic import Field

from sandcrawler.config import BaseUrl, Section
from sandcrawler.fileset.platforms.base import (
    LandingPage,
    PlatformApiError,
    PlatformHelper,
    PlatformRestrictedError,
    checksums,
    host_matches,
    instance,
    item_name,
    url_host,
)
from sandcrawler.records.platform_item import FilesetManifestFile, FilesetPlatformItem
from sandcrawler.records.statuses import FilesetStatus

if TYPE_CHECKING:  # the settings (and so every command) read this module
    from sandcrawler.records.html_biblio import HtmlBiblio
    from sandcrawler.records.ingest import IngestRequest
    from sandcrawler.web.http.fetch import JsonAnswer


class DryadSettings(Section):
    api_url: BaseUrl = Field("https://datadryad.org/api/v2",
                             description="Dryad API base, for pages on hosts not in api_urls")
    api_urls: dict[str, BaseUrl] = Field(
        {"sandbox.datadryad.org": "https://sandbox.datadryad.org/api/v2"},
        description="API base of each other Dryad instance, by the entry of hosts a page "
        "matched; that instance's datasets are asked there and named by that host")
    hosts: list[str] = Field(["datadryad.org", "sandbox.datadryad.org"],
                             description="hosts whose /dataset/ pages are Dryad datasets")


_PAGE = re.compile(r"^/(?:stash/)?dataset/(?:doi:)?(10\.\d+/.+?)/?$", re.IGNORECASE)


class DryadHelper(PlatformHelper[DryadSettings]):
    name = "dryad"

    def locate(self, request: IngestRequest, resource: LandingPage) -> tuple[str, str] | None:
        for url in resource.urls:
            # the DOI may come percent-encoded ("doi%3A10.5061%2Fdryad.x")
            m = _PAGE.match(unquote(urlsplit(url).path))
            if m and host_matches(url_host(url), self.settings.hosts):
                return url, f"doi:{m.group(1)}"
        return None

    def process_request(self, request: IngestRequest, resource: LandingPage,
                        html_biblio: HtmlBiblio | None) -> FilesetPlatformItem:
        parsed = self.locate(request, resource)
        assert parsed is not None, "process_request called without a match"
        page, doi = parsed
        s = self.settings
        domain, api = instance(page, s.hosts, s.api_urls, s.api_url)
        dataset = self._object(f"{api}/datasets/{quote(doi, safe='')}")
        if "_links" not in dataset and dataset.get("message"):
            raise PlatformRestrictedError(f"dryad: {doi}: {dataset['message']}")
        if dataset.get("curationStatus") == "Embargoed":
            raise PlatformRestrictedError(
                f"dryad: {doi} is embargoed (publication {dataset.get('publicationDate')})")
        version_url = _link(api, dataset, "stash:version")
        if version_url is None:
            raise PlatformRestrictedError(f"dryad: {doi} has no version we may see")
        version = self._object(version_url)
        files_url = _link(api, version, "stash:files") or f"{version_url}/files"
        manifest: list[FilesetManifestFile] = []
        for answer in self.pages(files_url, lambda a: _link(api, a.value, "next")):
            for f in _embedded(answer):
                manifest.append(self._manifest_file(api, doi, f))
                self.check_file_count(len(manifest))
        number = version.get("versionNumber") or dataset.get("versionNumber")
        meta = {"title": version.get("title") or dataset.get("title"),
                "date": version.get("publicationDate") or dataset.get("publicationDate"),
                "doi": doi.removeprefix("doi:"), "version": number, "source": page,
                "license": dataset.get("license"),
                "creator": [" ".join(filter(None, (a.get("firstName"), a.get("lastName"))))
                            for a in version.get("authors") or dataset.get("authors") or []]}
        return FilesetPlatformItem(
            platform_name=self.name, platform_status=FilesetStatus.SUCCESS,
            platform_domain=domain, platform_id=doi, manifest=manifest,
            archiveorg_item_name=item_name(domain, doi, str(number) if number else None),
            archiveorg_item_meta={k: v for k, v in meta.items() if v},
            web_base_url=page, web_bundle_url=_link(api, version, "stash:download"))

    def _object(self, url: str) -> dict[str, Any]:
        if not isinstance(value := self.get_json(url), dict):
            raise PlatformApiError(f"dryad API: unexpected answer for {url}")
        return value

    @staticmethod
    def _manifest_file(api: str, doi: str, f: dict[str, Any]) -> FilesetManifestFile:
        path = f.get("path") or ""
        download = _link(api, f, "stash:download")
        if download is None:
            # Dryad links a download only where the version's files may be had
            raise PlatformRestrictedError(f"dryad: {doi}: file {path!r} may not be downloaded")
        own = _link(api, f, "self")
        return FilesetManifestFile(
            path=path, size=f.get("size"), mimetype=f.get("mimeType") or None,
            platform_url=download,
            extra={"file_id": own.rstrip("/").rsplit("/", 1)[-1]} if own else None,
            **checksums([(f["digestType"], f.get("digest"))] if f.get("digestType") else []))


def _link(api: str, obj: Any, rel: str) -> str | None:
    """A HAL link's target, absolute (Dryad's are paths on the API's host)."""
    links = obj.get("_links") if isinstance(obj, dict) else None
    link = links.get(rel) if isinstance(links, dict) else None
    href = link.get("href") if isinstance(link, dict) else None
    return urljoin(api, href) if isinstance(href, str) and href else None


def _embedded(answer: JsonAnswer) -> list[dict[str, Any]]:
    value = answer.value
    files = (value.get("_embedded") or {}).get("stash:files") if isinstance(value, dict) else None
    if not isinstance(files, list):
        raise PlatformApiError(f"dryad API: no stash:files in {answer.url}")
    return [f for f in files if isinstance(f, dict)]
