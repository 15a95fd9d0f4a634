"""OSF (osf.io) projects and components, through its JSON:API v2.

A node's OSF Storage is walked folder by folder (each listing paged); a file's
guid page is that one file. Files are verified by md5/sha256. Registrations and
preprints are ``platform-scope`` (a guid the node API refuses is looked up once
to tell them apart), private nodes ``platform-restricted``; test.osf.io has its
own API (docs/fileset.md, "Platforms").
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from pydantic import Field

from sandcrawler.config import BaseUrl, Section
from sandcrawler.fileset.platforms.base import (
    LandingPage,
    PlatformApiError,
    PlatformHelper,
    PlatformNotFoundError,
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


class OsfSettings(Section):
    api_url: BaseUrl = Field("https://api.osf.io/v2",
                             description="OSF API base, for pages on hosts not in api_urls")
    api_urls: dict[str, BaseUrl] = Field(
        {"test.osf.io": "https://api.test.osf.io/v2"},
        description="API base of each other OSF instance, by the host a page matched")
    hosts: list[str] = Field(["osf.io", "test.osf.io"], description="hosts of OSF pages")


_PAGE = re.compile(r"^/([a-z0-9]{5})(?:/files(?:/osfstorage(?:/([0-9a-f]{24}))?)?)?/?$")


class OsfHelper(PlatformHelper[OsfSettings]):
    name = "osf"

    def locate(self, request: IngestRequest,
               resource: LandingPage) -> tuple[str, str, str | None] | None:
        found = self.find_page(request, resource, self.settings.hosts, _PAGE)
        return (found[0], found[1].group(1), found[1].group(2)) if found else None

    def process_request(self, request: IngestRequest, resource: LandingPage,
                        html_biblio: HtmlBiblio | None) -> FilesetPlatformItem:
        parsed = self.locate(request, resource)
        assert parsed is not None, "process_request called without a match"
        page, guid, file_id = parsed
        s = self.settings
        domain, api = instance(page, s.hosts, s.api_urls, s.api_url)
        if file_id is not None:
            return self._one_file(page, domain, self._data(f"{api}/files/{file_id}/"))
        try:
            node = self._data(f"{api}/nodes/{guid}/")
        except PlatformNotFoundError:  # a registration, a preprint, a file's guid, or nothing
            found = self._data(f"{api}/guids/{guid}/?resolve=false")
            ref = _get(found, "relationships", "referent")
            kind = _get(ref, "links", "related", "meta", "type") or _get(ref, "data", "type")
            if kind == "files" and (href := _get(ref, "links", "related", "href")):
                return self._one_file(page, domain, self._data(href))
            raise PlatformScopeError(f"osf: {guid} is one of OSF's {kind or 'unknown'}, not a "
                                     "project or component (out of scope)") from None
        manifest = self._walk(f"{api}/nodes/{guid}/files/osfstorage/")
        attrs = node.get("attributes") or {}
        meta = {"title": attrs.get("title"), "date": (attrs.get("date_created") or "")[:10]}
        return FilesetPlatformItem(
            platform_name=self.name, platform_status=FilesetStatus.SUCCESS,
            platform_domain=domain, platform_id=guid, manifest=manifest,
            archiveorg_item_name=item_name(domain, guid, None),
            archiveorg_item_meta={k: v for k, v in meta.items() if v} | {"source": page},
            web_base_url=page)

    def _walk(self, root: str) -> list[FilesetManifestFile]:
        """Every file under ``root``, folder by folder, each listing paged."""
        manifest: list[FilesetManifestFile] = []
        folders, listed = [root], set()
        while folders:
            if not (url := folders.pop(0)) or url in listed:
                raise PlatformApiError(f"osf API: a folder listing missing or repeated: {url!r}")
            listed.add(url)
            for answer in self.pages(url, lambda a: _get(a.value, "links", "next")):
                entries = _get(answer.value, "data")
                if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
                    raise PlatformApiError(f"osf API: no list of files in {answer.url}")
                for entry in entries:
                    if _get(entry, "attributes", "kind") == "folder":
                        folders.append(_get(entry, "relationships", "files", "links", "related",
                                            "href") or "")
                    else:
                        manifest.append(_manifest_file(entry))
                        self.check_file_count(len(manifest))
        return manifest

    def _one_file(self, page: str, domain: str, data: dict[str, Any]) -> FilesetPlatformItem:
        if _get(data, "attributes", "kind") != "file":
            raise PlatformScopeError(f"osf: {page} is a folder, not a file; ingest its node")
        f = _manifest_file(data)
        node = str(_get(data, "relationships", "node", "data", "id")
                   or _get(data, "relationships", "target", "data", "id") or data.get("id"))
        item = item_name(domain, node, None)
        return FilesetPlatformItem(
            platform_name=self.name, platform_status=FilesetStatus.SUCCESS,
            platform_domain=domain, platform_id=node, manifest=[f], archiveorg_dataset_item=item,
            archiveorg_item_name=file_item_name(item, f.path),
            archiveorg_item_meta={"source": page}, web_base_url=page)

    def _data(self, url: str) -> dict[str, Any]:
        if not isinstance(data := _get(self.get_json(url), "data"), dict):
            raise PlatformApiError(f"osf API: unexpected answer for {url}")
        return data


def _get(obj: Any, *keys: str) -> Any:  # obj[k1][k2]…, None where a level is missing
    for key in keys:
        obj = obj.get(key) if isinstance(obj, dict) else None
    return obj


def _manifest_file(entry: dict[str, Any]) -> FilesetManifestFile:
    attrs = entry.get("attributes") or {}
    if not (download := _get(entry, "links", "download")):
        raise PlatformApiError(f"osf API: file {attrs.get('materialized_path')!r} has no download")
    return FilesetManifestFile(
        path=str(attrs.get("materialized_path") or attrs.get("name") or "").lstrip("/"),
        size=attrs.get("size"), platform_url=download,
        extra={k: v for k, v in (("file_id", entry.get("id")), ("guid", attrs.get("guid"))) if v},
        **checksums([(a, _get(attrs, "extra", "hashes", a)) for a in ("md5", "sha256")]))
