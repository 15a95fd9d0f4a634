"""The CitationParser protocol and what every backend shares."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from functools import cache
from typing import Any, Protocol

from grobid_tei_xml import GrobidBiblio

from sandcrawler.errors import CitationParseError
from sandcrawler.models.statuses import ParserStatus


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


@cache
def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls))


def biblio_to_dict(obj: Any) -> dict[str, Any]:
    """Exactly ``GrobidBiblio.to_dict()``, without its deep copy and second pass.

    ``to_dict()`` is ``asdict()`` followed by dropping ``None``, ``""`` and ``{}``
    values recursively (lists stay, even empty ones). It was most of the
    pipeline's CPU time per work; a test checks both agree on real GROBID output.
    """
    out: dict[str, Any] = {}
    for name in _field_names(type(obj)):
        value = getattr(obj, name)
        if value is None:
            continue
        kind = type(value)
        if kind is str:  # by far the most common: test it first
            if not value:
                continue
        elif kind is list:
            value = [biblio_to_dict(v) if dataclasses.is_dataclass(v) else v for v in value]
        elif dataclasses.is_dataclass(value):
            value = biblio_to_dict(value)
            if not value:
                continue
        out[name] = value
    return out


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
