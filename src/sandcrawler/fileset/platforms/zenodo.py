"""Zenodo, through its REST API (``GET /api/records/{id}``).

A record id is one version; a concept id (all versions) is ``platform-scope``.
``/records/{id}/files/{key}`` is one file. Files come from the legacy ``files``
list or InvenioRDM's ``files.entries``, verified by md5; "download all" is
``/files-archive``. Restricted or embargoed records are ``platform-restricted``;
the sandbox has its own API (``api_urls``) (docs/fileset.md, "Platforms").
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

from pydantic import Field

from sandcrawler.config import BaseUrl, Section
from sandcrawler.fileset.platforms.base import (
    LandingPage,
    PlatformApiError,
    PlatformHelper,
    PlatformNotFoundError,
    PlatformRestrictedError,
    PlatformScopeError,
    checksums,
    file_item_name,
    instance,
    item_name,
)
from sandcrawler.records.platform_item import FilesetManifestFile, FilesetPlatformItem
from sandcrawler.records.statuses import FilesetStatus

if TYPE_CHECKING:  # the settings (and so every command) read this module
    from sandcrawler.records.html_biblio import HtmlBiblio
    from sandcrawler.records.ingest import IngestRequest


class ZenodoSettings(Section):
    api_url: BaseUrl = Field(
        "https://zenodo.org/api",
        description="Zenodo REST API base, for pages on every host not in api_urls",
    )
    api_urls: dict[str, BaseUrl] = Field(
        {"sandbox.zenodo.org": "https://sandbox.zenodo.org/api"},
        description="API base of each other Zenodo instance, by the entry of hosts a page "
        "matched; that instance's records are asked there and named by that host",
    )
    hosts: list[str] = Field(
        ["zenodo.org", "sandbox.zenodo.org"], description="hosts whose pages are Zenodo records"
    )


_RECORD = re.compile(r"^/records?/(\d+)(?:/files/(.+?))?/?$")


class ZenodoHelper(PlatformHelper[ZenodoSettings]):
    name = "zenodo"

    def locate(self, request: IngestRequest,
               resource: LandingPage) -> tuple[str, str, str | None] | None:
        found = self.find_page(request, resource, self.settings.hosts, _RECORD)
        if found is None:
            return None
        url, m = found
        return url, m.group(1), unquote(m.group(2)) if m.group(2) else None

    def instance(self, page: str) -> tuple[str, str]:
        """The Zenodo instance a page is on (``base.instance``)."""
        s = self.settings
        return instance(page, s.hosts, s.api_urls, s.api_url)

    def process_request(self, request: IngestRequest, resource: LandingPage,
                        html_biblio: HtmlBiblio | None) -> FilesetPlatformItem:
        parsed = self.locate(request, resource)
        assert parsed is not None, "process_request called without a match"
        page, record_id, file_key = parsed
        domain, api = self.instance(page)
        obj = self.get_json(f"{api}/records/{record_id}")
        if not isinstance(obj, dict) or "id" not in obj:
            raise PlatformApiError(f"zenodo API: unexpected answer for record {record_id}")
        if str(obj["id"]) != record_id:
            if str(obj.get("conceptrecid")) == record_id:
                raise PlatformScopeError(
                    f"zenodo: {record_id} is a concept (all versions; latest is {obj['id']}); "
                    "ingest one version")
            raise PlatformApiError(f"zenodo API: asked for {record_id}, got {obj['id']}")
        metadata = obj.get("metadata") or {}
        access = obj.get("access") or {}
        embargo = access.get("embargo") or {}
        if (metadata.get("access_right", "open") != "open" or access.get("files") == "restricted"
                or embargo.get("active")):
            why = metadata.get("access_right") or access.get("files") or "embargoed"
            raise PlatformRestrictedError(f"zenodo: record {record_id} is {why}")
        manifest = [self._manifest_file(api, record_id, f) for f in _files(obj)]
        if file_key is not None:
            manifest = [f for f in manifest if f.path == file_key]
            if not manifest:
                raise PlatformNotFoundError(f"zenodo: record {record_id} has no file {file_key!r}")
        version = metadata.get("version")
        meta = {"title": metadata.get("title"), "date": metadata.get("publication_date"),
                "doi": obj.get("doi"), "version": version, "source": page,
                "license": (metadata.get("license") or {}).get("id"),
                "creator": [c.get("name") for c in metadata.get("creators") or []]}
        links = obj.get("links") or {}
        record_item = item_name(domain, record_id, version)
        return FilesetPlatformItem(
            platform_name=self.name,
            platform_status=FilesetStatus.SUCCESS, platform_domain=domain,
            platform_id=record_id, manifest=manifest,
            archiveorg_item_name=(record_item if file_key is None
                                  else file_item_name(record_item, file_key)),
            archiveorg_dataset_item=None if file_key is None else record_item,
            archiveorg_item_meta={k: v for k, v in meta.items() if v},
            web_base_url=page,
            web_bundle_url=None if file_key else (
                links.get("archive") or f"{api}/records/{record_id}/files-archive"))

    @staticmethod
    def _manifest_file(api: str, record_id: str, f: dict[str, Any]) -> FilesetManifestFile:
        key = f.get("key") or f.get("filename") or ""
        algo, _, digest = str(f.get("checksum") or "").partition(":")
        sums = checksums([(algo, digest)])
        # the legacy file list's links.self is the bytes; in InvenioRDM's
        # files.entries, links.self is the file's metadata and links.content its bytes
        links = f.get("links") or {}
        url = links.get("content") or links.get("self")
        return FilesetManifestFile(
            path=key, size=f.get("size"), mimetype=f.get("mimetype") or None,
            platform_url=url or f"{api}/records/{record_id}/files/{quote(key)}/content",
            extra={"file_id": f["id"]} if f.get("id") else None, **sums)


def _files(obj: dict[str, Any]) -> list[dict[str, Any]]:
    """The legacy list, or InvenioRDM's ``{"entries": {key: file}}`` (a list of
    files with their keys on its ``/files`` endpoint)."""
    files = obj.get("files") or []
    if isinstance(files, dict):
        entries = files.get("entries") or {}
        if isinstance(entries, dict):
            return [{"key": k, **v} for k, v in entries.items() if isinstance(v, dict)]
        files = entries if isinstance(entries, list) else []
    return [f for f in files if isinstance(f, dict)]
