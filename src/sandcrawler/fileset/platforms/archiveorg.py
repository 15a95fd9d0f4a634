"""archive.org items, through the metadata API (``GET /metadata/{identifier}``).

``/details/{identifier}`` is the item, ``/download/{identifier}/{path}`` one file
of it. The manifest is the item's original files (not archive.org's own
derivatives, not private files), verified by size, md5 and sha1; the item name
is the identifier, and the item store is always used. Collections are
``platform-scope``, dark and restricted items ``platform-restricted``
(docs/fileset.md, "Platforms").
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

from pydantic import Field

from sandcrawler.config import BaseUrl, Section
from sandcrawler.fileset.platforms.base import (
    LandingPage,
    PlatformHelper,
    PlatformNotFoundError,
    PlatformRestrictedError,
    PlatformScopeError,
    choose_strategy,
    file_item_name,
)
from sandcrawler.records.platform_item import (
    FilesetManifestFile,
    FilesetPlatformItem,
    IngestStrategy,
)
from sandcrawler.records.statuses import FilesetStatus

if TYPE_CHECKING:  # the settings (and so every command) read this module
    from sandcrawler.records.html_biblio import HtmlBiblio
    from sandcrawler.records.ingest import IngestRequest


class ArchiveOrgSettings(Section):
    hosts: list[str] = Field(["archive.org"], description="archive.org hosts")
    metadata_url: BaseUrl = Field(
        "https://archive.org/metadata", description="archive.org item metadata API base"
    )
    download_url: BaseUrl = Field(
        "https://archive.org/download", description="archive.org file download base"
    )


_PAGE = re.compile(r"^/(details|download)/([A-Za-z0-9._-]+)(?:/(.+?))?/?$")
_SYSTEM_FORMATS = {"Metadata", "Archive BitTorrent", "Item Tile", "Thumbnail", "JSON"}
_SYSTEM_SUFFIXES = ("_meta.xml", "_files.xml", "_meta.sqlite", "_reviews.xml", "_archive.torrent")


class ArchiveOrgHelper(PlatformHelper[ArchiveOrgSettings]):
    name = "archiveorg"

    def locate(self, request: IngestRequest,
               resource: LandingPage) -> tuple[str, str, str | None] | None:
        found = self.find_page(request, resource, self.settings.hosts, _PAGE)
        if found is None:
            return None
        url, m = found
        path = unquote(m.group(3)) if m.group(1) == "download" and m.group(3) else None
        return url, m.group(2), path

    def process_request(self, request: IngestRequest, resource: LandingPage,
                        html_biblio: HtmlBiblio | None) -> FilesetPlatformItem:
        parsed = self.locate(request, resource)
        assert parsed is not None, "process_request called without a match"
        page, identifier, file_path = parsed
        obj = self.get_json(f"{self.settings.metadata_url}/{identifier}")
        if not isinstance(obj, dict) or not obj:
            raise PlatformNotFoundError(f"archive.org: no item {identifier!r}")
        metadata = obj.get("metadata") or {}
        if obj.get("is_dark"):
            raise PlatformRestrictedError(f"archive.org: item {identifier} is dark")
        if str(metadata.get("access-restricted-item", "")).lower() == "true":
            raise PlatformRestrictedError(f"archive.org: item {identifier} is access-restricted")
        if obj.get("is_collection") or metadata.get("mediatype") == "collection":
            raise PlatformScopeError(
                f"archive.org: {identifier} is a collection, not one item; ingest its items")
        download = self.settings.download_url
        originals = [f for f in obj.get("files") or [] if _is_original(identifier, f)]
        if file_path is not None:
            originals = [f for f in originals if f["name"] == file_path]
            if not originals:
                raise PlatformNotFoundError(f"archive.org: item {identifier} has no file "
                                            f"{file_path!r}")
        private = [f["name"] for f in originals if _is_private(f)]
        if private and len(private) == len(originals):
            raise PlatformRestrictedError(
                f"archive.org: item {identifier}: every file is private ({len(private)}, "
                f"e.g. {private[0]!r})")
        manifest = [
            FilesetManifestFile(
                path=f["name"], size=int(f["size"]) if str(f.get("size", "")).isdigit() else None,
                md5=f.get("md5") or None, sha1=f.get("sha1") or None,
                platform_url=f"{download}/{identifier}/{quote(f['name'])}",
                extra={k: f[k] for k in ("format", "mtime") if f.get(k)} or None)
            for f in originals if not _is_private(f)
        ]
        meta = {k: metadata[k] for k in ("title", "creator", "date", "mediatype", "collection",
                                         "licenseurl") if metadata.get(k)}
        if private:
            # the public files are the dataset; say what was left out
            meta["private_files_left_out"] = len(private)
        return FilesetPlatformItem(
            platform_name=self.name,
            platform_status=FilesetStatus.SUCCESS, platform_domain="archive.org",
            platform_id=identifier, manifest=manifest,
            archiveorg_item_name=(identifier if file_path is None
                                  else file_item_name(identifier, file_path)),
            archiveorg_dataset_item=None if file_path is None else identifier,
            archiveorg_item_meta=meta | {"source": page}, web_base_url=page)

    def choose_strategy(self, item: FilesetPlatformItem) -> IngestStrategy:
        return choose_strategy(item, self.rule, backend="archiveorg")


def _is_private(f: dict[str, Any]) -> bool:
    """A file only its owner (or a lending-library loan) may read: its download
    answers 403. The metadata API says ``"private": "true"``."""
    return str(f.get("private", "")).lower() == "true"


def _is_original(identifier: str, f: dict[str, Any]) -> bool:
    name = f.get("name") or ""
    return (bool(name) and f.get("source") == "original"
            and f.get("format") not in _SYSTEM_FORMATS
            and not name.startswith("__ia_")
            and not (name.startswith(identifier) and name.endswith(_SYSTEM_SUFFIXES)))
