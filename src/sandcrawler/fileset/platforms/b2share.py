"""EUDAT B2SHARE: b2share.eudat.eu, its training instance and self-hosted
instances (``hosts``), each at ``https://{host}/api`` (or ``api_urls[host]``); ids are
per instance, so items are ``{host}-{id}``.

``/records/{id}`` is one version (v2 or B2SHARE 3 ids), ``/records/{id}/files/{key}``
one file. Files come from v2's bucket or B2SHARE 3's ``entries``, verified by md5;
external files are left out. A head id is ``platform-scope``; closed access or an
embargo to come is ``platform-restricted`` (docs/fileset.md, "Platforms").
"""

from __future__ import annotations

import re
from contextlib import suppress
from datetime import date
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


class B2ShareSettings(Section):
    hosts: list[str] = Field(["b2share.eudat.eu", "trng-b2share.eudat.eu"], description=(
        "B2SHARE instances (and their subdomains); add self-hosted ones here"))
    api_urls: dict[str, BaseUrl] = Field({}, description="API base of an instance (an entry of "
                                         "hosts) not at https://{host}/api: a mirror, a proxy")


_RECORD = re.compile(r"^/records/([0-9a-f]{32}|[a-z0-9]{5}-[a-z0-9]{5})(?:/files/(.+?))?/?$")


class B2ShareHelper(PlatformHelper[B2ShareSettings]):
    name = "b2share"

    def locate(self, request: IngestRequest,
               resource: LandingPage) -> tuple[str, str, str | None] | None:
        if not (found := self.find_page(request, resource, self.settings.hosts, _RECORD)):
            return None
        url, m = found
        return url, m.group(1), unquote(m.group(2)) if m.group(2) else None

    def process_request(self, request: IngestRequest, resource: LandingPage,
                        html_biblio: HtmlBiblio | None) -> FilesetPlatformItem:
        parsed = self.locate(request, resource)
        assert parsed is not None, "process_request called without a match"
        page, rid, file_key = parsed
        domain, api = instance(page, self.settings.hosts, self.settings.api_urls, None)
        rec = self.get_json(f"{api}/records/{rid}")
        md = rec.get("metadata") if isinstance(rec, dict) else None
        if not isinstance(md, dict) or "id" not in rec:
            raise PlatformApiError(f"b2share API: unexpected answer for record {rid}")
        links = rec.get("links") or {}
        if str(rec["id"]) != rid:  # the head of a version chain, or a wrong answer
            heads = [*str(links.get("versions")).split("/"), (rec.get("parent") or {}).get("id")]
            raise (PlatformScopeError if rid in heads else PlatformApiError)(f"b2share: asked for "
                f"{rid}, got {rec['id']}" + (" (a head id: all versions)" if rid in heads else ""))
        _check_open(rid, md, rec.get("access") or {})
        manifest = self._manifest(api, rid, rec, links)
        if file_key is not None and not (manifest := [f for f in manifest if f.path == file_key]):
            raise PlatformNotFoundError(f"b2share: record {rid} has no file {file_key!r}")
        v3 = "titles" not in md  # B2SHARE 3's metadata is InvenioRDM's
        doi = (rec.get("pids") or {}).get("doi", {}).get("identifier") if v3 else md.get("DOI")
        meta = {"title": md.get("title") if v3 else (md["titles"] or [{}])[0].get("title"),
                "date": md.get("publication_date"), "version": md.get("version"), "source": page,
                "doi": re.sub(r"^https?://(dx\.)?doi\.org/", "", doi or "") or None,
                "license": ((md.get("rights") or [{}])[0].get("id") if v3
                            else (md.get("license") or {}).get("license")),
                "creator": [(c.get("person_or_org") or {}).get("name") or c.get("creator_name")
                            for c in md.get("creators") or []]}
        record_item = item_name(domain, rid, None)
        return FilesetPlatformItem(
            platform_name=self.name, platform_status=FilesetStatus.SUCCESS,
            platform_domain=domain, platform_id=rid, manifest=manifest,
            archiveorg_item_name=file_item_name(record_item, file_key) if file_key else record_item,
            archiveorg_dataset_item=None if file_key is None else record_item,
            archiveorg_item_meta={k: v for k, v in meta.items() if v}, web_base_url=page,
            web_bundle_url=None if file_key else links.get("archive"))

    def _manifest(self, api: str, rid: str, rec: dict[str, Any],
                  links: dict[str, Any]) -> list[FilesetManifestFile]:
        """The files of the record's bucket (or listing); its own list without one."""
        own, listing = _listed(rec.get("files")), None
        with suppress(PlatformNotFoundError):  # a bucket gone or not public: the record's list
            listing = self.get_json(str(links["files"])) if links.get("files") else None
        if listing is not None and not ("contents" in listing or "entries" in listing):
            raise PlatformApiError(f"b2share API: no file list for record {rid}")
        files = own if listing is None else _listed(listing)
        self.check_file_count(len(files))
        external = {f.get("key") for f in own if f.get("b2safe")}  # a handle, not our bytes
        return [_file(api, rid, f) for f in files
                if f.get("key") and f["key"] not in external and not f.get("delete_marker")]


def _listed(files: Any) -> list[dict[str, Any]]:
    """A list of files, v2's bucket (``contents``) or InvenioRDM's ``entries`` (by key)."""
    if isinstance(files, dict):
        files = files.get("contents") or files.get("entries") or []
        if isinstance(files, dict):
            files = [{"key": k, **v} for k, v in files.items() if isinstance(v, dict)]
    return [f for f in files if isinstance(f, dict)] if isinstance(files, list) else []


def _file(api: str, rid: str, f: dict[str, Any]) -> FilesetManifestFile:
    """The bytes: v2 ``links.self``, InvenioRDM ``links.content``, else the v2 bucket's key."""
    key, links = str(f["key"]), f.get("links") or {}
    url = links.get("content") or links.get("self") or (
        f"{api}/files/{f['bucket']}/{quote(key)}" if f.get("bucket")
        else f"{api}/records/{rid}/files/{quote(key)}/content")
    algo, _, digest = str(f.get("checksum") or "").partition(":")  # "md5:<hex>"
    file_id = f.get("version_id") or f.get("file_id") or f.get("id")
    return FilesetManifestFile(
        path=key, size=f.get("size"), mimetype=f.get("mimetype") or None, platform_url=url,
        extra={"file_id": str(file_id)} if file_id else None, **checksums([(algo, digest)]))


def _check_open(rid: str, md: dict[str, Any], access: dict[str, Any]) -> None:
    """v2: open_access, no embargo to come (ISO dates compare as text); B2SHARE 3: public."""
    embargo = str(md.get("embargo_date") or "")
    if (access.get("files") not in (None, "public") or (access.get("embargo") or {}).get("active")
            or (not access and (md.get("open_access") is not True
                                or embargo[:10] > date.today().isoformat()))):
        raise PlatformRestrictedError(f"b2share: record {rid}: not open access ({embargo=})")
