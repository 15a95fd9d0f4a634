"""The platform registry: name -> helper and its settings section, in the order
the ingester tries them.

A new platform is one module (its helper, its ``Section`` of settings) and one
line in ``PlatformSettings``; the settings' ``[name]`` table, the CLI's help, the
ingester's "no platform matched" message and the docs' list read it from here
(``PLATFORMS`` is made from those lines). The lines are fields, so that the
type checker sees each platform's section on ``Settings``, which inherits them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Generic, cast

from pydantic import BaseModel, ConfigDict
from pydantic.fields import FieldInfo

from sandcrawler.config import FilesetSettings, Section
from sandcrawler.fileset.platforms.archiveorg import ArchiveOrgHelper, ArchiveOrgSettings
from sandcrawler.fileset.platforms.b2share import B2ShareHelper, B2ShareSettings
from sandcrawler.fileset.platforms.base import PlatformHelper, S
from sandcrawler.fileset.platforms.dataverse import DataverseHelper, DataverseSettings
from sandcrawler.fileset.platforms.djehuty import DjehutyHelper, DjehutySettings
from sandcrawler.fileset.platforms.dryad import DryadHelper, DryadSettings
from sandcrawler.fileset.platforms.figshare import FigshareHelper, FigshareSettings
from sandcrawler.fileset.platforms.github import GithubHelper, GithubSettings
from sandcrawler.fileset.platforms.huggingface import HuggingfaceHelper, HuggingfaceSettings
from sandcrawler.fileset.platforms.osf import OsfHelper, OsfSettings
from sandcrawler.fileset.platforms.zenodo import ZenodoHelper, ZenodoSettings

if TYPE_CHECKING:
    from sandcrawler.web.http.fetch import HttpFetcher


@dataclass(frozen=True, slots=True)
class Platform(Generic[S]):
    """A helper with the settings section it takes (the checker holds them to it)."""

    name: str
    helper: type[PlatformHelper[S]]
    settings: type[S]
    #: what people call it, for messages and docs
    title: str


def platform(helper: type[PlatformHelper[S]], settings: type[S], title: str) -> S:
    """One registry line: the platform's section, defaults and all, as a field of
    ``PlatformSettings`` named after it, with its helper (the checker holds the
    helper, the section and the field's type to one another)."""
    field = FieldInfo(default_factory=settings, description=f"{title}: its own settings")
    field.metadata.append(Platform("", helper, settings, title))
    return cast(S, field)


class PlatformSettings(BaseModel):
    """The platform registry, in the order the ingester tries them: one field per
    platform, its ``[name]`` table."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    dataverse: DataverseSettings = platform(DataverseHelper, DataverseSettings, "Dataverse")
    # djehuty before figshare: figshare's portal detection would take a 4TU.ResearchData
    # page of the figshare-era shape (/articles/{type}/{slug}/{id}) that mentions figshare
    b2share: B2ShareSettings = platform(B2ShareHelper, B2ShareSettings, "B2SHARE")
    djehuty: DjehutySettings = platform(DjehutyHelper, DjehutySettings,
                                        "4TU.ResearchData (djehuty)")
    figshare: FigshareSettings = platform(FigshareHelper, FigshareSettings, "figshare")
    zenodo: ZenodoSettings = platform(ZenodoHelper, ZenodoSettings, "Zenodo")
    dryad: DryadSettings = platform(DryadHelper, DryadSettings, "Dryad")
    osf: OsfSettings = platform(OsfHelper, OsfSettings, "OSF")
    archiveorg: ArchiveOrgSettings = platform(ArchiveOrgHelper, ArchiveOrgSettings,
                                              "archive.org")
    github: GithubSettings = platform(GithubHelper, GithubSettings, "GitHub releases")
    huggingface: HuggingfaceSettings = platform(HuggingfaceHelper, HuggingfaceSettings,
                                                "Hugging Face datasets")


PLATFORMS: dict[str, Platform[Any]] = {
    name: replace(entry, name=name)
    for name, field in PlatformSettings.model_fields.items()
    for entry in field.metadata if isinstance(entry, Platform)
}


def platform_helpers(sections: dict[str, Section], fetcher: HttpFetcher,
                     rule: FilesetSettings) -> list[PlatformHelper[Any]]:
    """One helper per registered platform, each with its own settings section."""
    return [p.helper(sections[name], fetcher, rule) for name, p in PLATFORMS.items()]
