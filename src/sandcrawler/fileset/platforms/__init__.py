"""The platform registry: name -> helper and its settings section, in the order
the ingester tries them.

A new platform is one module (its helper, its ``Section`` of settings) and one
line in ``PLATFORMS``; the settings' ``[name]`` table, the CLI's help, the
ingester's "no platform matched" message and the docs' list read it from here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic

from sandcrawler.config import FilesetSettings, Section
from sandcrawler.fileset.platforms.archiveorg import ArchiveOrgHelper, ArchiveOrgSettings
from sandcrawler.fileset.platforms.base import PlatformHelper, S
from sandcrawler.fileset.platforms.dataverse import DataverseHelper, DataverseSettings
from sandcrawler.fileset.platforms.figshare import FigshareHelper, FigshareSettings
from sandcrawler.fileset.platforms.zenodo import ZenodoHelper, ZenodoSettings

if TYPE_CHECKING:
    from sandcrawler.web.fetch import HttpFetcher


@dataclass(frozen=True, slots=True)
class Platform(Generic[S]):
    """A helper with the settings section it takes (the checker holds them to it)."""

    name: str
    helper: type[PlatformHelper[S]]
    settings: type[S]
    #: what people call it, for messages and docs
    title: str


PLATFORMS: dict[str, Platform[Any]] = {p.name: p for p in (
    Platform("dataverse", DataverseHelper, DataverseSettings, "Dataverse"),
    Platform("figshare", FigshareHelper, FigshareSettings, "figshare"),
    Platform("zenodo", ZenodoHelper, ZenodoSettings, "Zenodo"),
    Platform("archiveorg", ArchiveOrgHelper, ArchiveOrgSettings, "archive.org"),
)}


def platform_helpers(sections: dict[str, Section], fetcher: HttpFetcher,
                     rule: FilesetSettings) -> list[PlatformHelper[Any]]:
    """One helper per registered platform, each with its own settings section."""
    return [p.helper(sections[name], fetcher, rule) for name, p in PLATFORMS.items()]
