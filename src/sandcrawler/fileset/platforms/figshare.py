"""figshare (figshare.com and institutional portals on its subdomains), through
its public API v2.

An article page with a version is one version (without one, ``platform-scope``).
Files are verified by md5; link-only files are left out; "download all" is the
ndownloader. Institutional portals (listed in ``hosts`` or found by
``detect_portals``) are one figshare, named ``figshare.com`` (docs/fileset.md,
"Platforms").
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from pydantic import Field

from sandcrawler.config import BaseUrl, Section
from sandcrawler.fileset.platforms.base import (
    LandingPage,
    PlatformApiError,
    PlatformHelper,
    PlatformRestrictedError,
    PlatformScopeError,
    item_name,
)
from sandcrawler.records.platform_item import FilesetManifestFile, FilesetPlatformItem
from sandcrawler.records.statuses import FilesetStatus

if TYPE_CHECKING:  # the settings (and so every command) read this module
    from sandcrawler.records.html_biblio import HtmlBiblio
    from sandcrawler.records.ingest import IngestRequest


class FigshareSettings(Section):
    api_url: BaseUrl = Field("https://api.figshare.com/v2", description="figshare public API base")
    download_url: BaseUrl = Field(
        "https://ndownloader.figshare.com",
        description="figshare download host (its 'download all' zip of an article version)",
    )
    hosts: list[str] = Field(
        ["figshare.com"],
        description="hosts (and their subdomains) whose /articles/ pages are figshare items; "
        "add institutional portals on their own domains here",
    )
    detect_portals: bool = Field(
        True,
        description="also match a page on any other host when its path is "
        "/articles/{type}/{slug}/{id}[/{version}] and its HTML refers to figshare.com or "
        "figstatic.com (an institutional portal on its own domain)",
    )


_ARTICLE = re.compile(r"^/articles/(?:[^/]+/)*?(\d+)(?:/(\d+))?/?$")
#: the full shape of a portal's article page: type, slug, id, optional version
_PORTAL_ARTICLE = re.compile(r"^/articles/[^/]+/[^/]+/(\d+)(?:/(\d+))?/?$")
#: a URL on figshare's own hosts in a page's HTML (its downloads, assets)
_FIGSHARE_MARK = re.compile(rb"https?://(?:[a-z0-9-]+\.)*(?:figshare\.com|figstatic\.com)/",
                            re.IGNORECASE)


class FigshareHelper(PlatformHelper[FigshareSettings]):
    name = "figshare"

    def locate(self, request: IngestRequest,
               resource: LandingPage) -> tuple[str, int, int | None] | None:
        found = self.find_page(request, resource, self.settings.hosts, _ARTICLE)
        if found is None:
            found = self._portal_page(resource)
        if found is None:
            return None
        url, m = found
        return url, int(m.group(1)), int(m.group(2)) if m.group(2) else None

    def _portal_page(self, resource: LandingPage) -> tuple[str, re.Match[str]] | None:
        """An institutional portal on its own domain: the page we captured
        refers to figshare, and one of its URLs has the full article shape
        (``/articles/{type}/{slug}/{id}[/{version}]``). Both are required, so a
        page that merely links to figshare, or an /articles/ page that says
        nothing of figshare, is not taken for one."""
        if not self.settings.detect_portals or not resource.html:
            return None
        if not _FIGSHARE_MARK.search(resource.html):
            return None
        for url in resource.urls:
            m = _PORTAL_ARTICLE.match(urlsplit(url).path)
            if m:
                return url, m
        return None

    def process_request(self, request: IngestRequest, resource: LandingPage,
                        html_biblio: HtmlBiblio | None) -> FilesetPlatformItem:
        parsed = self.locate(request, resource)
        assert parsed is not None, "process_request called without a match"
        page, article_id, version = parsed
        if version is None:
            raise PlatformScopeError(
                f"figshare: {page} names all versions of article {article_id}; "
                "ingest one version (/{id}/{version})")
        api = self.settings.api_url
        obj = self.get_json(f"{api}/articles/{article_id}/versions/{version}")
        if not isinstance(obj, dict) or obj.get("id") != article_id:
            raise PlatformApiError(f"figshare API: unexpected answer for article {article_id}")
        if obj.get("is_embargoed"):
            raise PlatformRestrictedError(
                f"figshare: article {article_id} is embargoed until {obj.get('embargo_date')}")
        manifest = [
            FilesetManifestFile(
                path=f["name"], size=f.get("size"),
                md5=(f.get("computed_md5") or f.get("supplied_md5") or None),
                mimetype=f.get("mimetype") or None, platform_url=f.get("download_url"),
                extra={"file_id": f.get("id")})
            for f in obj.get("files") or [] if not f.get("is_link_only")
        ]
        meta = {"title": obj.get("title"), "date": (obj.get("published_date") or "")[:10] or None,
                "doi": obj.get("doi"), "version": version, "source": page,
                "license": (obj.get("license") or {}).get("name"),
                "creator": [a.get("full_name") for a in obj.get("authors") or []]}
        return FilesetPlatformItem(
            platform_name=self.name,
            platform_status=FilesetStatus.SUCCESS, platform_domain="figshare.com",
            platform_id=str(article_id), manifest=manifest,
            archiveorg_item_name=item_name("figshare.com", str(article_id), str(version)),
            archiveorg_item_meta={k: v for k, v in meta.items() if v},
            web_base_url=page,
            web_bundle_url=(f"{self.settings.download_url}/articles/{article_id}"
                            f"/versions/{version}"))
