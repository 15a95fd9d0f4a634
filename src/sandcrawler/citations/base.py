"""The CitationParser protocol and what every backend shares.

``biblio_to_dict`` (a biblio's JSON) lives with the rows that hold biblios,
``models.refs``; it is imported here for the parsers' callers."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, Protocol

from grobid_tei_xml import GrobidBiblio

from sandcrawler.core.errors import CitationParseError
from sandcrawler.records.refs import biblio_to_dict as biblio_to_dict  # re-exported
from sandcrawler.records.statuses import ParserStatus


class CitationParser(Protocol):
    def parse_lists(
        self, lists: Sequence[Sequence[str]]
    ) -> list[list[GrobidBiblio] | CitationParseError]:
        """Parse independent lists (one per record). A failed list yields its error in
        place; an unusable backend raises InfrastructureError."""
        ...

    def check(self) -> None:
        """Raise InfrastructureError when the backend cannot work right now, so a batch
        command can fail before reading any input."""
        ...

    def close(self) -> None: ...


def check_alignment(sent: Sequence[str], parsed: Sequence[GrobidBiblio], backend: str) -> None:
    """The parser must give back exactly one biblio per string, in order; anything else
    would attach parsed references to the wrong upstream keys."""
    if len(parsed) != len(sent):
        raise CitationParseError(
            f"{backend} returned {len(parsed)} references for {len(sent)} submitted",
            status=ParserStatus.REF_COUNT_MISMATCH,
        )


@dataclasses.dataclass(frozen=True, slots=True)
class ParsedCitation:
    """One parsed reference as a pipeline output (``citations parse``): written as
    ``GrobidBiblio.to_dict()`` is, by the fast ``biblio_to_dict``, when the sink
    writes the line."""

    biblio: GrobidBiblio

    def to_json(self) -> dict[str, Any]:
        return biblio_to_dict(self.biblio)

    def __reduce__(self) -> tuple[type[CitationJson], tuple[dict[str, Any]]]:
        # Under -j N an output travels to the sink's process: as its JSON, which
        # pickles several times faster than GROBID's nested dataclasses do
        return (CitationJson, (self.to_json(),))


@dataclasses.dataclass(frozen=True, slots=True)
class CitationJson:
    """A ``ParsedCitation`` that came from a worker process: its JSON, made there."""

    json: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return self.json


#: reference strings longer than this are not given to any parser: real ones are
#: a few hundred characters, and the CRF's cost grows with a string (a 20 MB
#: string took 1 GB); they come back unparsed, their text kept
MAX_CITATION_CHARS = 5000


def parse_within_limit(
    parser: CitationParser, lists: Sequence[Sequence[str]]
) -> list[list[GrobidBiblio] | CitationParseError]:
    """``parser.parse_lists`` for the strings of at most ``MAX_CITATION_CHARS``; a
    longer one is answered, in its place, by a biblio that holds only its text."""
    short = [[s for s in strings if len(s) <= MAX_CITATION_CHARS] for strings in lists]
    parsed = parser.parse_lists(short) if any(short) else [[] for _ in short]
    results: list[list[GrobidBiblio] | CitationParseError] = []
    for strings, got in zip(lists, parsed, strict=True):
        if isinstance(got, CitationParseError):
            results.append(got)
            continue
        biblios = iter(got)
        results.append([next(biblios) if len(s) <= MAX_CITATION_CHARS
                        else GrobidBiblio(authors=[], unstructured=s) for s in strings])
    return results
