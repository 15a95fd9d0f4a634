"""GitHub releases: a release's uploaded assets, through the REST API.

Pages: a release tag, ``/releases/latest``, an asset link. The manifest is the
release's uploaded ``assets`` (paged past 100), verified by their ``digest``
(sha256) where GitHub gives one; the tag's source archives are left out, as
GitHub publishes no checksum for them. Items are
``github.com-{owner}_{repo}-v{tag}`` (docs/fileset.md, "Platforms").
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


class GithubSettings(Section):
    api_url: BaseUrl = Field("https://api.github.com", description="GitHub REST API base")
    hosts: list[str] = Field(["github.com"], description="hosts whose release pages are GitHub's")


_RELEASE = re.compile(r"^/([^/]+)/([^/]+)/releases/(?:latest/download/([^/]+)|(latest)"
                      r"|tag/(.+?)|download/(.+)/([^/]+))/?$")
#: one API page of assets; a release object listing this many may hold more
_PAGE = 100


class GithubHelper(PlatformHelper[GithubSettings]):
    name = "github"

    def locate(self, request: IngestRequest, resource: LandingPage
               ) -> tuple[str, str, str, str | None, str | None] | None:
        """(page, owner, repo, tag or None for the latest, asset name or None)."""
        found = self.find_page(request, resource, self.settings.hosts, _RELEASE)
        if found is None:
            return None
        url, m = found
        tag = m.group(5) or m.group(6)
        asset = m.group(3) or m.group(7)
        return (url, unquote(m.group(1)), unquote(m.group(2)), unquote(tag) if tag else None,
                unquote(asset) if asset else None)

    def process_request(self, request: IngestRequest, resource: LandingPage,
                        html_biblio: HtmlBiblio | None) -> FilesetPlatformItem:
        parsed = self.locate(request, resource)
        assert parsed is not None, "process_request called without a match"
        page, owner, repo, tag, asset = parsed
        base = f"{self.settings.api_url}/repos/{quote(owner)}/{quote(repo)}/releases"
        obj = self.get_json(f"{base}/tags/{quote(tag, safe='')}" if tag else f"{base}/latest")
        if not isinstance(obj, dict) or not obj.get("tag_name") or "id" not in obj:
            raise PlatformApiError(f"github API: unexpected answer for {owner}/{repo} {tag}")
        if tag is not None and obj["tag_name"] != tag:
            raise PlatformApiError(f"github API: asked for tag {tag!r}, got {obj['tag_name']!r}")
        tag = str(obj["tag_name"])
        if obj.get("draft"):
            raise PlatformRestrictedError(f"github: release {tag} of {owner}/{repo} is a draft")
        assets = self._assets(base, obj)
        manifest = [_manifest_file(a) for a in assets
                    if isinstance(a, dict) and a.get("name") and a.get("state") == "uploaded"]
        if asset is not None:
            manifest = [f for f in manifest if f.path == asset]
            if not manifest:
                raise PlatformNotFoundError(f"github: release {tag} of {owner}/{repo} has no "
                                            f"uploaded asset {asset!r}")
        release_item = item_name("github.com", f"{owner}/{repo}", tag)
        meta = {"title": obj.get("name") or tag, "tag": tag, "source": page,
                "date": (obj.get("published_at") or "")[:10] or None,
                "prerelease": obj.get("prerelease"), "commit": obj.get("target_commitish"),
                "creator": (obj.get("author") or {}).get("login"),
                "zipball_url": obj.get("zipball_url"), "tarball_url": obj.get("tarball_url")}
        return FilesetPlatformItem(
            platform_name=self.name, platform_status=FilesetStatus.SUCCESS,
            platform_domain="github.com", platform_id=f"{owner}/{repo}/{tag}",
            manifest=manifest,
            archiveorg_item_name=(release_item if asset is None
                                  else file_item_name(release_item, asset)),
            archiveorg_dataset_item=None if asset is None else release_item,
            archiveorg_item_meta={k: v for k, v in meta.items() if v not in (None, "")},
            web_base_url=page)

    def _assets(self, base: str, obj: dict[str, Any]) -> list[Any]:
        """The release's assets: as its object lists them, or, when that is a full
        page or more, every page of ``/releases/{id}/assets``."""
        listed = obj.get("assets") or []
        if not isinstance(listed, list):
            raise PlatformApiError(f"github API: release {obj['id']}: assets is not a list")
        if len(listed) < _PAGE:
            return listed
        assets: list[Any] = []
        for answer in self.pages(f"{base}/{obj['id']}/assets?per_page={_PAGE}",
                                 lambda a: a.next_link):
            if not isinstance(answer.value, list):
                raise PlatformApiError(f"github API: release {obj['id']}: assets page is "
                                       "not a list")
            assets += answer.value
            self.check_file_count(len(assets))
        return assets


def _manifest_file(asset: dict[str, Any]) -> FilesetManifestFile:
    algorithm, _, value = str(asset.get("digest") or "").partition(":")
    return FilesetManifestFile(
        path=asset["name"], size=asset.get("size"),
        mimetype=asset.get("content_type") or None,
        platform_url=asset.get("browser_download_url"),
        extra={k: asset[k] for k in ("id", "label", "updated_at") if asset.get(k)} or None,
        **checksums([(algorithm, value)] if value else []))
