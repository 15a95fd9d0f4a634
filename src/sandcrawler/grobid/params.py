"""GROBID's form parameters, read with GROBID's names, defaults and meaning
(its service's ``GrobidRestService``): consolidation levels, the raw-string
and TEI options, the page window. A value GROBID could not mean is a
``ParamError`` (400) rather than GROBID's silent fallback to the default."""

from __future__ import annotations

from dataclasses import dataclass

from sandcrawler.grobid.forms import Form

#: the elements GROBID's ``teiCoordinates`` names (docs: Coordinates-in-PDF)
COORDINATE_ELEMENTS = frozenset({"persName", "figure", "ref", "biblStruct", "formula", "head",
                                 "s", "p", "note", "title", "affiliation", "orgName"})
_TRUE = {"1", "true"}
_FALSE = {"0", "false", ""}


class ParamError(ValueError):
    """A parameter's value that GROBID's API does not define (answered 400)."""


@dataclass(frozen=True, slots=True)
class Params:
    """One request's options. ``start``/``end`` are 1-based pages, None for the
    document's own first or last page (GROBID's ``-1``)."""

    consolidate_header: int = 0
    consolidate_citations: int = 0
    raw_citations: bool = False
    raw_affiliations: bool = False
    coordinates: frozenset[str] = frozenset()
    segment_sentences: bool = False
    generate_ids: bool = False
    start: int | None = None
    end: int | None = None


def flag(form: Form, name: str) -> bool:
    """GROBID's booleans: ``1`` or ``true`` (any case) is on; ``0``, ``false`` or
    nothing is off."""
    value = form.get(name)
    if value is None:
        return False
    text = value.strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ParamError(f"{name} must be 0 or 1 (or true/false), not {value[:40]!r}")


def level(form: Form, name: str, highest: int) -> int:
    """A consolidation level, 0 (default) to ``highest``."""
    value = form.get(name)
    if value is None or not value.strip():
        return 0
    text = value.strip()
    if not text.isdigit() or int(text) > highest:
        raise ParamError(f"{name} must be one of {', '.join(map(str, range(highest + 1)))}, "
                         f"not {value[:40]!r}")
    return int(text)


def page(form: Form, name: str, default: int | None = None) -> int | None:
    """A page number, 1-based; GROBID's ``-1`` (and ``0``) means none."""
    value = form.get(name)
    if value is None or not value.strip():
        return default
    text = value.strip()
    try:
        number = int(text)
    except ValueError:
        raise ParamError(f"{name} must be a page number (1 is the first; -1: none), "
                         f"not {value[:40]!r}") from None
    if number > 10**7:
        raise ParamError(f"{name} is past any PDF's last page: {number}")
    return number if number >= 1 else None


def coordinates(form: Form) -> frozenset[str]:
    """``teiCoordinates``: repeated fields (and comma-separated lists) of element
    names; names GROBID does not know are ignored, as GROBID ignores them."""
    names = {name.strip() for value in form.getlist("teiCoordinates")
             for name in value.split(",")}
    return frozenset(names & COORDINATE_ELEMENTS)


def document_params(form: Form, *, header: bool = False, header_pages: int = 2) -> Params:
    """The options of the PDF services. For ``processHeaderDocument`` (``header``),
    ``end`` defaults to ``header_pages`` and ``consolidateHeader`` may be 3."""
    start = page(form, "start")
    end = page(form, "end", header_pages if header else None)
    if start is not None and end is not None and end < start:
        raise ParamError(f"end ({end}) is before start ({start})")
    return Params(
        consolidate_header=level(form, "consolidateHeader", 3),
        consolidate_citations=level(form, "consolidateCitations", 2),
        raw_citations=flag(form, "includeRawCitations"),
        raw_affiliations=flag(form, "includeRawAffiliations"),
        coordinates=coordinates(form),
        segment_sentences=flag(form, "segmentSentences"),
        generate_ids=flag(form, "generateIDs"),
        start=start, end=end)


def citation_params(form: Form) -> Params:
    """The options of processCitation and processCitationList."""
    return Params(consolidate_citations=level(form, "consolidateCitations", 2),
                  raw_citations=flag(form, "includeRawCitations"))
