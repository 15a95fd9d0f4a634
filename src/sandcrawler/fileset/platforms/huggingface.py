"""Hugging Face datasets, through the Hub's API, pinned to one commit.

The revision a page names (default ``main``) is resolved to its commit ``sha``,
which names the item (``huggingface.co-{id}-v{first 12 hex of sha}``) and every
download. Files come from the paged tree listing; LFS files are verified by
sha256, others by their git blob id (``git-sha1``). Gated, private and disabled
datasets are ``platform-restricted``; no "download all" (docs/fileset.md, "Platforms").
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
    checksums,
    file_item_name,
    item_name,
)
from sandcrawler.records.platform_item import FilesetManifestFile, FilesetPlatformItem
from sandcrawler.records.statuses import FilesetStatus

if TYPE_CHECKING:  # the settings (and so every command) read this module
    from sandcrawler.records.html_biblio import HtmlBiblio
    from sandcrawler.records.ingest import IngestRequest


class HuggingfaceSettings(Section):
    api_url: BaseUrl = Field("https://huggingface.co/api", description="Hugging Face Hub API base")
    download_url: BaseUrl = Field(
        "https://huggingface.co", description="Hub host that datasets' files resolve on")
    hosts: list[str] = Field(["huggingface.co", "hf.co"],
                             description="hosts whose /datasets/ pages are Hugging Face datasets")


_DATASET = re.compile(r"^/datasets/([^/]+)(?:/([^/]+))?"
                      r"(?:/(tree|blob|resolve)/([^/]+)(?:/(.+?))?)?/?$")


class HuggingfaceHelper(PlatformHelper[HuggingfaceSettings]):
    name = "huggingface"

    def locate(self, request: IngestRequest, resource: LandingPage
               ) -> tuple[str, str, str | None, str | None] | None:
        """(page, dataset id, revision or None, file path or None)."""
        found = self.find_page(request, resource, self.settings.hosts, _DATASET)
        if found is None:
            return None
        url, m = found
        dataset = "/".join(unquote(g) for g in m.group(1, 2) if g)
        path = unquote(m.group(5)) if m.group(3) in ("blob", "resolve") and m.group(5) else None
        if m.group(3) in ("blob", "resolve") and path is None:
            return None
        return url, dataset, unquote(m.group(4)) if m.group(4) else None, path

    def process_request(self, request: IngestRequest, resource: LandingPage,
                        html_biblio: HtmlBiblio | None) -> FilesetPlatformItem:
        parsed = self.locate(request, resource)
        assert parsed is not None, "process_request called without a match"
        page, dataset, revision, file_path = parsed
        api = f"{self.settings.api_url}/datasets/{dataset}"
        rev = quote(revision or "main", safe="")
        info = self.get_json(f"{api}/revision/{rev}" if revision else api)
        if not isinstance(info, dict) or not isinstance(info.get("sha"), str):
            raise PlatformApiError(f"huggingface API: unexpected answer for dataset {dataset}")
        for why in ("gated", "private", "disabled"):
            if info.get(why) not in (None, False, "false"):
                raise PlatformRestrictedError(f"huggingface: dataset {dataset} is {why} "
                                              f"({info[why]})")
        sha, canonical = info["sha"], str(info.get("id") or dataset)
        manifest: list[FilesetManifestFile] = []
        for answer in self.pages(f"{api}/tree/{rev}?recursive=true", lambda a: a.next_link):
            if not isinstance(answer.value, list):
                raise PlatformApiError(f"huggingface API: tree of {dataset} is not a list")
            manifest += [self._manifest_file(canonical, sha, e) for e in answer.value
                         if isinstance(e, dict) and e.get("type") == "file" and e.get("path")]
            self.check_file_count(len(manifest))
        if file_path is not None:
            manifest = [f for f in manifest if f.path == file_path]
            if not manifest:
                raise PlatformNotFoundError(f"huggingface: dataset {dataset} has no file "
                                            f"{file_path!r} at {revision}")
        card = info["cardData"] if isinstance(info.get("cardData"), dict) else {}
        meta = {"title": card.get("pretty_name") or canonical, "sha": sha, "source": page,
                "revision": revision or "main", "license": card.get("license"),
                "creator": info.get("author"),
                "date": (info.get("lastModified") or "")[:10] or None}
        dataset_item = item_name("huggingface.co", canonical, sha[:12])
        return FilesetPlatformItem(
            platform_name=self.name, platform_status=FilesetStatus.SUCCESS,
            platform_domain="huggingface.co", platform_id=canonical, manifest=manifest,
            archiveorg_item_name=(dataset_item if file_path is None
                                  else file_item_name(dataset_item, file_path)),
            archiveorg_dataset_item=None if file_path is None else dataset_item,
            archiveorg_item_meta={k: v for k, v in meta.items() if v},
            web_base_url=page)

    def _manifest_file(self, dataset: str, sha: str, entry: dict[str, Any]) -> FilesetManifestFile:
        """An LFS file: its bytes' sha256 and size from ``lfs``; any other file: its
        git blob id, which is a checksum of its bytes too."""
        lfs = entry.get("lfs") if isinstance(entry.get("lfs"), dict) else None
        if lfs is not None:
            sums = checksums([("sha256", str(lfs.get("oid") or "").rpartition(":")[2])])
            size = lfs.get("size", entry.get("size"))
        else:
            sums = checksums([("git-sha1", entry.get("oid"))])
            size = entry.get("size")
        path = str(entry["path"])
        return FilesetManifestFile(
            path=path, size=size,
            platform_url=(f"{self.settings.download_url}/datasets/{dataset}/resolve/{sha}/"
                          f"{quote(path)}"),
            extra={"xet_hash": entry["xetHash"]} if entry.get("xetHash") else None, **sums)
