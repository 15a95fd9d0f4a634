"""Platform helpers: one module per platform, and the ordered list the ingester tries."""

from __future__ import annotations

from sandcrawler.config import Settings
from sandcrawler.fileset.platforms.archiveorg import ArchiveOrgHelper
from sandcrawler.fileset.platforms.base import PlatformHelper
from sandcrawler.fileset.platforms.dataverse import DataverseHelper
from sandcrawler.fileset.platforms.figshare import FigshareHelper
from sandcrawler.fileset.platforms.zenodo import ZenodoHelper
from sandcrawler.web.fetch import HttpFetcher

HELPERS: tuple[type[PlatformHelper], ...] = (
    DataverseHelper, FigshareHelper, ZenodoHelper, ArchiveOrgHelper)


def platform_helpers(settings: Settings, fetcher: HttpFetcher) -> list[PlatformHelper]:
    return [cls(settings, fetcher) for cls in HELPERS]
