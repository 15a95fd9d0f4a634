"""The citation parser registry: name -> how to build that backend.

A new backend is one module with a ``CitationParser`` and a ``build`` function,
and one entry here; the ``--parser`` choices, the ``citation.parser`` setting's
check and the docs read the names from ``CITATION_PARSERS``.

A builder gets only what its parameters name (``imports.call_builder``): a
settings section (``citation``, ``grobid``, ...) or ``grobid_client``: the CRF
parser's is ``build(citation)``, GROBID's ``build(grobid, grobid_client)``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sandcrawler.core.errors import ConfigError
from sandcrawler.core.imports import entry, load_object

if TYPE_CHECKING:  # the registry is read by --help: it imports no backend
    from sandcrawler.citations.base import CitationParser

#: (what its parameters name, by keyword) -> parser
ParserBuilder = Callable[..., "CitationParser"]


@dataclass(frozen=True, slots=True)
class ParserSpec:
    name: str
    description: str
    #: ``package.module:function``, a ParserBuilder, imported when the parser is built
    #: (the CRF model and the TEI reader are not every command's business)
    builder: str
    #: its builder asks for ``grobid_client``: said here too, so that the settings
    #: are checked without importing the builder (a test keeps the two in step)
    needs_grobid: bool = False

    def load(self) -> ParserBuilder:
        build: ParserBuilder = load_object(self.builder)
        return build


CITATION_PARSERS: dict[str, ParserSpec] = {s.name: s for s in (
    ParserSpec("crf", "the embedded CRF model: no service, no network",
               "sandcrawler.citations.crf.parser:build"),
    ParserSpec("grobid", "a GROBID server's processCitationList",
               "sandcrawler.citations.grobid_parser:build", needs_grobid=True),
)}


def choose_parser(name: str | None, grobid_url: str | None) -> ParserSpec:
    """The parser ``name`` names; ``auto`` (or None) is grobid when a GROBID URL is
    configured, else crf."""
    if not name or name == "auto":
        name = "grobid" if grobid_url else "crf"
    spec = entry(CITATION_PARSERS, name, "citation parser")
    if spec.needs_grobid and not grobid_url:
        raise ConfigError(f"the {name} citation parser needs a GROBID server: "
                          "set SANDCRAWLER_GROBID_URL (or grobid.url in the configuration file)")
    return spec
