"""Dataverse installations (dataverse.harvard.edu and many more), through the
native API of the installation the landing page is on.

A dataset page names one version (the latest published one without it), a
file page one file. Files download from ``/api/access/datafile/{id}``, verified
by ``dataFile.checksum``; ingested tabular files are archived as uploaded (what
the checksum describes), not as the derived ``.tab``. Restricted or embargoed
files make the dataset ``platform-restricted``; drafts are ``platform-scope``
(docs/fileset.md, "Platforms").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

from pydantic import Field

from sandcrawler.config import Section
from sandcrawler.fileset.platforms.base import (
    LandingPage,
    PlatformApiError,
    PlatformHelper,
    PlatformRestrictedError,
    PlatformScopeError,
    checksums,
    host_matches,
    item_name,
    query_param,
    url_host,
)
from sandcrawler.records.platform_item import FilesetManifestFile, FilesetPlatformItem
from sandcrawler.records.statuses import FilesetStatus

if TYPE_CHECKING:  # the settings (and so every command) read this module
    from sandcrawler.records.html_biblio import HtmlBiblio
    from sandcrawler.records.ingest import IngestRequest


class DataverseSettings(Section):
    hosts: list[str] = Field(
        ["dataverse.harvard.edu", "dataverse.rsu.lv", "data.qdr.syr.edu",
         "dataverse.nl", "borealisdata.ca", "dataverse.no", "demo.dataverse.org"],
        description="Dataverse installations; any host's /dataset.xhtml or /file.xhtml page "
        "with a persistentId also matches",
    )


_PAGES = ("/dataset.xhtml", "/file.xhtml")


class DataverseHelper(PlatformHelper[DataverseSettings]):
    name = "dataverse"

    def locate(self, request: IngestRequest, resource: LandingPage) -> str | None:
        for url in resource.urls:
            path = urlsplit(url).path
            if path in _PAGES and query_param(url, "persistentId"):
                return url
            if host_matches(url_host(url), self.settings.hosts) and path in _PAGES:
                return url
        return None

    def process_request(self, request: IngestRequest, resource: LandingPage,
                        html_biblio: HtmlBiblio | None) -> FilesetPlatformItem:
        page = self.locate(request, resource)
        assert page is not None, "process_request called without a match"
        parts = urlsplit(page)
        origin = f"{parts.scheme}://{parts.netloc}"
        host = url_host(page)
        pid = query_param(page, "persistentId")
        if not pid:
            raise PlatformScopeError(f"dataverse: no persistentId in {page}")
        if parts.path == "/file.xhtml":
            data = self._data(f"{origin}/api/files/:persistentId/?persistentId={quote(pid)}")
            version = str(data.get("version") or "") or None
            files = [data]
            bundle = None
            meta: dict[str, Any] = {"source": page}
        else:
            wanted = query_param(page, "version")
            if wanted and wanted.upper() == "DRAFT":
                raise PlatformScopeError(f"dataverse: {pid} draft versions are not public")
            ref = wanted or ":latest-published"
            data = self._data(f"{origin}/api/datasets/:persistentId/versions/{quote(ref)}"
                              f"?persistentId={quote(pid)}")
            if data.get("versionState") not in (None, "RELEASED"):
                raise PlatformScopeError(
                    f"dataverse: {pid} version {ref} is {data.get('versionState')}")
            version = f"{data.get('versionNumber')}.{data.get('versionMinorNumber', 0)}"
            files = data.get("files") or []
            bundle = (f"{origin}/api/access/dataset/:persistentId/versions/{version}"
                      f"?persistentId={quote(pid)}")
            if any(is_tabular(f.get("dataFile") or {}) for f in files):
                # the zip holds the originals of ingested tables, as the manifest does
                bundle += "&format=original"
            meta = _citation(data) | {"source": page, "version": version}
        manifest = [self._manifest_file(origin, pid, f) for f in files]
        return FilesetPlatformItem(
            platform_name=self.name, platform_status=FilesetStatus.SUCCESS, platform_domain=host,
            platform_id=pid, manifest=manifest,
            archiveorg_item_name=item_name(host, pid, version), archiveorg_item_meta=meta,
            web_base_url=page, web_bundle_url=bundle)

    def _data(self, url: str) -> dict[str, Any]:
        answer = self.get_json(url)
        data = answer.get("data") if isinstance(answer, dict) else None
        if not isinstance(data, dict) or answer.get("status") != "OK":
            raise PlatformApiError(f"dataverse API: unexpected answer for {url}")
        return data

    def _manifest_file(self, origin: str, pid: str, entry: dict[str, Any]) -> FilesetManifestFile:
        df = entry.get("dataFile") or {}
        name = df.get("filename") or entry.get("label") or ""
        if entry.get("restricted") or df.get("restricted") or df.get("embargo"):
            why = "embargoed" if df.get("embargo") else "restricted"
            raise PlatformRestrictedError(f"dataverse: {pid}: file {name!r} is {why}")
        directory = (entry.get("directoryLabel") or "").strip("/")
        checksum = df.get("checksum") or {}
        sums = checksums([(str(checksum.get("type", "")), checksum.get("value")),
                          ("md5", df.get("md5"))])
        extra = {k: v for k, v in (("description", df.get("description")),
                                   ("persistent_id", df.get("persistentId")),
                                   ("file_id", df.get("id"))) if v}
        size, mimetype = df.get("filesize"), df.get("contentType")
        url = f"{origin}/api/access/datafile/{df.get('id')}"
        if is_tabular(df):
            # an ingested table: its checksum describes the upload, so that is what
            # is archived; the derived .tab is only named in extra
            extra |= {k: v for k, v in (("derived_filename", name),
                                        ("derived_size", size),
                                        ("derived_mimetype", mimetype)) if v is not None}
            name, size = df["originalFileName"], df.get("originalFileSize")
            mimetype = df.get("originalFileFormat") or None
            url += "?format=original"
        return FilesetManifestFile(
            path=f"{directory}/{name}" if directory else name, size=size,
            mimetype=mimetype, platform_url=url, extra=extra or None, **sums)


def is_tabular(df: dict[str, Any]) -> bool:
    """An ingested tabular file: Dataverse serves a derived ``.tab`` by default,
    but its checksum (and ``originalFileName``/``originalFileSize``) describe
    the uploaded original. Older answers (ICRISAT's) give the original fields
    without ``tabularData``."""
    return bool(df.get("originalFileName"))


def _citation(version: dict[str, Any]) -> dict[str, Any]:
    fields = ((version.get("metadataBlocks") or {}).get("citation") or {}).get("fields") or []
    meta: dict[str, Any] = {}
    for field in fields:
        if field.get("typeName") == "title" and isinstance(field.get("value"), str):
            meta["title"] = field["value"]
    if version.get("releaseTime"):
        meta["date"] = version["releaseTime"][:10]
    license_ = version.get("license")
    if isinstance(license_, dict) and license_.get("name"):
        meta["license"] = license_["name"]
    return meta
