"""The citation parser registry: name -> how to build that backend.

A new backend is one module with a ``CitationParser`` and one entry here; the
``--parser`` choices, the ``citation.parser`` setting's check and the docs read
the names from ``CITATION_PARSERS``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sandcrawler.citations.base import CitationParser
from sandcrawler.citations.crf.model import CrfModel
from sandcrawler.citations.crf.parser import CrfCitationParser
from sandcrawler.citations.grobid_parser import GrobidCitationParser
from sandcrawler.config import CitationSettings, GrobidSettings
from sandcrawler.errors import ConfigError
from sandcrawler.grobid_client import GrobidClient

#: (citation section, GROBID section, a GROBID client when one is configured) -> parser
ParserBuilder = Callable[[CitationSettings, GrobidSettings, GrobidClient | None], CitationParser]


@dataclass(frozen=True, slots=True)
class ParserSpec:
    name: str
    description: str
    build: ParserBuilder
    needs_grobid: bool = False


def _crf(citation: CitationSettings, _grobid: GrobidSettings,
         _client: GrobidClient | None) -> CitationParser:
    return CrfCitationParser(CrfModel.load(citation.model))


def _grobid(_citation: CitationSettings, grobid: GrobidSettings,
            client: GrobidClient | None) -> CitationParser:
    assert client is not None, "needs_grobid parsers get a client"
    return GrobidCitationParser(client, max_citations=grobid.max_citations,
                                concurrency=grobid.concurrency)


CITATION_PARSERS: dict[str, ParserSpec] = {s.name: s for s in (
    ParserSpec("crf", "the embedded CRF model: no service, no network", _crf),
    ParserSpec("grobid", "a GROBID server's processCitationList", _grobid, needs_grobid=True),
)}


def choose_parser(name: str | None, grobid_url: str | None) -> ParserSpec:
    """The parser ``name`` names; ``auto`` (or None) is grobid when a GROBID URL is
    configured, else crf."""
    if not name or name == "auto":
        name = "grobid" if grobid_url else "crf"
    spec = CITATION_PARSERS.get(name)
    if spec is None:
        raise ConfigError(f"unknown citation parser {name!r} "
                          f"(known: {', '.join(CITATION_PARSERS)})")
    if spec.needs_grobid and not grobid_url:
        raise ConfigError(f"the {name} citation parser needs a GROBID server: "
                          "set SANDCRAWLER_GROBID_URL (or grobid.url in the configuration file)")
    return spec
