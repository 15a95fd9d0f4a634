"""4TU.ResearchData (data.4tu.nl, which runs djehuty), through djehuty's v2 API:
figshare's API shape, with ``uuid`` for ``id``.

Dataset pages (and figshare-era article pages) name one version; without one,
the latest is resolved and pinned. ``/file/{dataset}/{file}`` is one file.
Files are verified by md5; link-only files are left out, as the "download
all" zip leaves them out. Embargoed or restricted datasets are
``platform-restricted`` (docs/fileset.md, "Platforms").
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
    PlatformRestrictedError,
    checksums,
    file_item_name,
    item_name,
)
from sandcrawler.records.platform_item import FilesetManifestFile, FilesetPlatformItem
from sandcrawler.records.statuses import FilesetStatus

if TYPE_CHECKING:  # the settings (and so every command) read this module
    from sandcrawler.records.html_biblio import HtmlBiblio
    from sandcrawler.records.ingest import IngestRequest


class DjehutySettings(Section):
    api_url: BaseUrl = Field("https://data.4tu.nl/v2", description="djehuty v2 API base")
    download_url: BaseUrl = Field("https://data.4tu.nl", description="where its 'download all' "
                                  "zips are (/ndownloader/items/{uuid}/versions/{version})")
    hosts: list[str] = Field(["data.4tu.nl"], description="hosts of its landing pages")


_ID = r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\d+)"
_PAGE = re.compile(rf"^/(?:datasets|articles/(?:dataset/|software/)?[^/]+)/{_ID}(?:/(\d+))?/?$")
_FILE = re.compile(rf"^/file/{_ID}/([0-9a-f-]{{36}})/?$")


class DjehutyHelper(PlatformHelper[DjehutySettings]):
    name = "djehuty"

    def locate(self, request: IngestRequest,
               resource: LandingPage) -> tuple[str, str, str | None, str | None] | None:
        if found := self.find_page(request, resource, self.settings.hosts, _FILE):
            return found[0], found[1].group(1), None, found[1].group(2)
        if found := self.find_page(request, resource, self.settings.hosts, _PAGE):
            return found[0], found[1].group(1), found[1].group(2), None
        return None

    def process_request(self, request: IngestRequest, resource: LandingPage,
                        html_biblio: HtmlBiblio | None) -> FilesetPlatformItem:
        parsed = self.locate(request, resource)
        assert parsed is not None, "process_request called without a match"
        page, dataset_id, version, file_id = parsed
        api = f"{self.settings.api_url}/articles/{dataset_id}"
        obj = self._version(api, version) if version else self._latest(api)
        files = [f for f in obj.get("files") or [] if isinstance(f, dict)]
        if file_id:
            while not any(f.get("uuid") == file_id for f in files):
                obj = self._older(api, obj, file_id)
                files = [f for f in obj.get("files") or [] if isinstance(f, dict)]
            files = [f for f in files if f.get("uuid") == file_id]
        self.check_file_count(len(files))
        manifest = [FilesetManifestFile(
            path=f["name"], size=f.get("size"), mimetype=f.get("mimetype") or None,
            platform_url=f.get("download_url"), extra={"file_id": f.get("uuid") or f.get("id")},
            **checksums([("md5", f.get("computed_md5") or f.get("supplied_md5"))]))
            for f in files if f.get("name") and not f.get("is_link_only")]
        if file_id and not manifest:
            raise PlatformNotFoundError(f"djehuty: file {file_id} is hosted elsewhere (link-only)")
        uuid, number = str(obj["uuid"]), str(obj.get("version") or version)
        meta = {"title": obj.get("title"), "date": (obj.get("published_date") or "")[:10],
                "doi": obj.get("doi"), "version": number, "source": page,
                "license": (obj.get("license") or {}).get("name"),
                "creator": [a.get("full_name") for a in obj.get("authors") or []]}
        dataset_item = item_name("data.4tu.nl", uuid, number)
        return FilesetPlatformItem(
            platform_name=self.name, platform_status=FilesetStatus.SUCCESS,
            platform_domain="data.4tu.nl", platform_id=uuid, manifest=manifest,
            archiveorg_item_name=(file_item_name(dataset_item, manifest[0].path) if file_id
                                  else dataset_item),
            archiveorg_dataset_item=dataset_item if file_id else None,
            archiveorg_item_meta={k: v for k, v in meta.items() if v}, web_base_url=page,
            web_bundle_url=None if file_id else (
                f"{self.settings.download_url}/ndownloader/items/{uuid}/versions/{number}"))

    def _version(self, api: str, version: str) -> dict[str, Any]:
        return _dataset(self.get_json(f"{api}/versions/{version}"), api)

    def _versions(self, api: str) -> list[int]:
        """The dataset's version numbers, newest first."""
        listed = self.get_json(f"{api}/versions")
        if not isinstance(listed, list):
            raise PlatformApiError(f"djehuty API: unexpected answer for {api}/versions")
        return sorted((int(v["version"]) for v in listed
                       if isinstance(v, dict) and str(v.get("version")).isdigit()), reverse=True)

    def _latest(self, api: str) -> dict[str, Any]:
        """The latest version: the dataset's own record, or the highest of ``/versions``."""
        try:
            obj = _dataset(self.get_json(api), api)
        except PlatformNotFoundError:  # then /versions answers for the dataset (or 404s too)
            obj = {}
        if str(obj.get("version")).isdigit():
            return obj
        versions = self._versions(api)
        if not versions:
            raise PlatformNotFoundError(f"djehuty: {api} has no published version")
        return self._version(api, str(versions[0]))

    def _older(self, api: str, obj: dict[str, Any], file_id: str) -> dict[str, Any]:
        """The next older version, while a file link's file is not found."""
        older = [v for v in self._versions(api) if v < int(obj["version"])]
        if not older:
            raise PlatformNotFoundError(f"djehuty: no version of {api} has file {file_id}")
        return self._version(api, str(older[0]))


def _dataset(obj: Any, api: str) -> dict[str, Any]:
    """A dataset version's record; an embargoed or restricted one is platform-restricted."""
    if isinstance(obj, dict) and (obj.get("is_embargoed") or (
            "uuid" not in obj and obj.get("embargo_type") == "article")):
        raise PlatformRestrictedError(
            f"djehuty: {api} is under embargo until {obj.get('embargo_date') or 'further notice'}"
            f" ({obj.get('embargo_title') or obj.get('embargo_type')})")
    if not isinstance(obj, dict) or not obj.get("uuid"):
        raise PlatformApiError(f"djehuty API: unexpected answer for {api}: {str(obj)[:80]}")
    return obj
