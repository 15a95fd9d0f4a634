"""The whole configuration: the core sections (``sandcrawler.config``) and one
section per registered platform, each declared beside its helper.

Only the composition root and the CLI see this object; every component gets
its own section.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sandcrawler.citations.registry import CITATION_PARSERS, choose_parser
from sandcrawler.config import CoreSettings, Section, load
from sandcrawler.core.errors import ConfigError
from sandcrawler.fileset.platforms import PLATFORMS, PlatformSettings
from sandcrawler.match.engines import ENGINES


class Settings(PlatformSettings, CoreSettings):
    """Every setting: the core sections (``CoreSettings``) and one section per
    platform (``PlatformSettings``, the platform registry: a new platform's line
    there is its section here). Declared, so the type checker sees every section;
    the core sections come first in ``config show``."""


def load_settings(overrides: Mapping[str, Any] | None = None, /, **flat: Any) -> CoreSettings:
    """The settings, from ``overrides`` and ``flat`` (flat or dotted names, e.g.
    ``grobid_url`` or ``grobid.url``; None means "not given"), the environment,
    the configuration file and the defaults. ConfigError, one line, when any
    value is bad."""
    settings = load(Settings, {**(overrides or {}), **flat})
    if settings.citation.parser != "auto" and settings.citation.parser not in CITATION_PARSERS:
        known = ", ".join(["auto", *CITATION_PARSERS])
        raise ConfigError(f"invalid configuration: citation.parser (given "
                          f"{settings.citation.parser!r}): not one of {known}")
    choose_parser(settings.citation.parser, settings.grobid.url)
    if settings.match.engine not in ENGINES:
        raise ConfigError(f"invalid configuration: match.engine (given "
                          f"{settings.match.engine!r}): not one of {', '.join(ENGINES)}")
    return settings


def platform_sections(settings: CoreSettings) -> dict[str, Section]:
    """Platform name -> its settings section."""
    sections: dict[str, Section] = {name: getattr(settings, name) for name in PLATFORMS}
    return sections
