"""What a ``grobid-serve`` worker runs in its sandbox besides a PDF: the text
services (citations, names, affiliations) on the cascade's own models, loaded
once per worker process (``cascade()``), so that a hostile string meets the
same time and memory limits as a hostile PDF. Module-level functions: the
sandbox pickles them by name."""

from __future__ import annotations

from pathlib import Path

from grobid_tei_xml.types import GrobidBiblio

from sandcrawler.citations.base import parse_within_limit
from sandcrawler.citations.crf.parser import CrfCitationParser
from sandcrawler.core.errors import CitationParseError
from sandcrawler.docparse.assembly.affiliations import Affiliation, parse_affiliations
from sandcrawler.docparse.assembly.cascade import cascade
from sandcrawler.docparse.assembly.names import PersonName, parse_names

#: characters of a name or affiliation string read (a real one is a few hundred)
MAX_TEXT_CHARS = 20_000


def warm(models: Path | None, citation_model: Path | None) -> list[str]:
    """Load the models now (a worker's first request would pay for it otherwise);
    their names."""
    return sorted(cascade(models, citation_model).versions)


def parse_citations(strings: list[str], models: Path | None,
                    citation_model: Path | None) -> list[GrobidBiblio]:
    """One biblio per string, in order; each keeps its string as ``unstructured``
    (a string over the parser's limit is only that)."""
    parser = CrfCitationParser(cascade(models, citation_model).citations)
    [parsed] = parse_within_limit(parser, [strings])
    if isinstance(parsed, CitationParseError):  # the CRF parser never fails a list
        raise parsed
    for text, biblio in zip(strings, parsed, strict=True):
        biblio.unstructured = text
    return parsed


def parse_person_names(text: str, models: Path | None,
                       citation_model: Path | None) -> list[PersonName]:
    """The persons of a list of names (the header's name model serves citations'
    names too: there is no citation name model here)."""
    return parse_names(" ".join(text[:MAX_TEXT_CHARS].split()),
                       cascade(models, citation_model).names)


def parse_affiliation_text(text: str, models: Path | None,
                           citation_model: Path | None) -> list[Affiliation]:
    return parse_affiliations(text[:MAX_TEXT_CHARS].replace("\t", " "),
                              cascade(models, citation_model).affiliation)
