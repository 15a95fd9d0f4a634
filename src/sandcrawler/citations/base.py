"""The CitationParser protocol and the factory that picks a backend from settings."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from grobid_tei_xml import GrobidBiblio

from sandcrawler.config import Settings
from sandcrawler.errors import CitationParseError, ConfigError


class CitationParser(Protocol):
    name: str

    def parse_lists(
        self, lists: Sequence[Sequence[str]]
    ) -> list[list[GrobidBiblio] | CitationParseError]:
        """Parse independent lists (one per record). A failed list yields its error in
        place; an unusable backend raises InfrastructureError."""
        ...

    def close(self) -> None: ...


def make_citation_parser(settings: Settings, name: str | None = None) -> CitationParser:
    choice = name or settings.effective_citation_parser
    if choice == "grobid":
        from sandcrawler.citations.grobid import GrobidCitationParser

        return GrobidCitationParser.from_settings(settings)
    if choice == "none":
        raise ConfigError(
            "no citation parser available: configure a GROBID server "
            "(SANDCRAWLER_GROBID_URL=http://host:8070)"
        )
    raise ConfigError(f"unknown citation parser {choice!r} (known: grobid)")


def check_alignment(sent: Sequence[str], parsed: Sequence[GrobidBiblio], backend: str) -> None:
    """The parser must give back exactly one biblio per string, in order; anything else
    would attach parsed references to the wrong upstream keys."""
    if len(parsed) != len(sent):
        raise CitationParseError(
            f"{backend} returned {len(parsed)} references for {len(sent)} submitted",
            status="ref-count-mismatch",
        )
