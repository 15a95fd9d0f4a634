"""The document's own identifiers, from wherever its first pages print them:
the header, but as often a running foot, a first-page footnote, arXiv's margin
stamp or a watermark, zones the header model never reads; and never a cited
work's (a footnote's reference, an erratum's "see doi:…").

Every DOI, arXiv id, PMID and PMCID of the first pages (and of the running
heads and feet of the pages read) is a candidate, repaired where typesetting
broke it, and scored by what makes it the document's own: a label, its zone,
its repetition on pages, the file's XMP; an entry that reads as a reference
counts against it, the document's citation or copyright line for it. The
references zone is never read. The best candidate above a floor is taken
(docs/extraction.md, "Identifiers").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sandcrawler.docparse.layout.elements import Line, Token

HEADER = "<header>"
#: the zones that repeat on every page or stand apart from the text
RUNNING = frozenset({"<headnote>", "<footnote>", "<page>", "<marginnote>"})
REFERENCES = "<references>"
#: the pages whose every line is read (0-based: the first two)
FIRST_PAGES = 2
#: running heads and feet are read on this many pages (repetition is evidence)
RUNNING_PAGES = 4

#: characters typesetting leaves inside an identifier: soft hyphen, zero widths
_INVISIBLE = re.compile("[\u00ad\u200b\u200c\u200d\u2060\ufeff]")
_DOI = re.compile(r"10\.\d{4,9}\s?/\s?[^\s\"<>]+", re.IGNORECASE)
#: a DOI's label just before it: "DOI", "doi:", "doi.org/", "dx.doi.org/"
_DOI_LABEL = re.compile(r"(?:\bdoi\b\s*[:.]?\s*|doi\.org/\s*)$", re.IGNORECASE)
#: characters a DOI does not end in (sentence punctuation, closing brackets)
_TRAILING = ".,;:'\"\u201d\u2019\u00bb"
#: a DOI cut at a line's end: it ends in a character that needs more after it
_CUT = re.compile(r"[./\-_:(]$")
#: what goes on a DOI on the next line, or after a stray space: DOI characters,
#: with a digit or a dot in them (a word of prose has neither)
_GOES_ON = re.compile(r"^[\w.;()/:\-]*[\d.][\w.;()/:\-]*")
_ARXIV_STAMP = re.compile(
    r"arXiv:\s?(\d{4}\.\d{4,5}(?:v\d+)?|[a-z][a-z\-]+(?:\.[A-Z]{2})?/\d{7}(?:v\d+)?)"
    r"\s*\[[\w.\-]+\]")
_ARXIV = re.compile(
    r"arXiv:\s?(\d{4}\.\d{4,5}(?:v\d+)?|[a-z][a-z\-]+(?:\.[A-Z]{2})?/\d{7}(?:v\d+)?)",
    re.IGNORECASE)
_PMID = re.compile(r"\bPMID\s*:?\s*(\d{1,9})\b", re.IGNORECASE)
_PMCID = re.compile(r"\b(PMC\d{4,9})\b")
#: a line that reads as a reference to another work: "et al.", a year and a
#: volume ("(2004) 12", "2000;405("), a volume and its pages ("405:482-485")
_CITATION = re.compile(
    r"\bet al\b|\(\d{4}[a-z]?\)\s*[,.;:]?\s*\d|\b(?:19|20)\d\d[a-z]?\s*[;,]\s*\d+\s*[(:]"
    r"|\b\d{1,4}\s*(?:\(\d{1,4}\))?\s*:\s*\d{1,6}\s*[-\u2013]\s*\d{1,6}\b"
    r"|\b(?:see also|cf\.|in:|retracted|erratum to|comment on|reply to)(?!\w)",
    re.IGNORECASE)
#: a line that gives the document's own reference, to cite it by, or its
#: copyright ("0022-2836/$ - see front matter © 2004 Elsevier Ltd. All rights
#: reserved. doi:…")
_OWN = re.compile(r"\b(?:citation|cite this|to cite|how to cite)\b\s*(?:as|this)?\s*:?"
                  r"|\brights reserved\b|\bsee front matter\b", re.IGNORECASE)
#: the zones whose lines are entries of several lines (a footnote, a reference,
#: a citation line): what a DOI's entry says above its line counts too
ENTRY_ZONES = frozenset({"<footnote>", "<body>"})
#: the most lines above a DOI's line read as its entry
ENTRY_LINES = 4
#: a line that starts an entry: a footnote's mark, or a label ("Citation:",
#: not a DOI's or a link's)
_ENTRY_START = re.compile(r"(?:\d{1,3}\.?\s|[*\u2020\u2021\u00a7\u00b6]"
                          r"|(?!(?i:doi|url|https?)\b)[A-Z][\w -]{0,24}:)")
#: a space between two tokens less than this share of the type size apart is
#: none (a reader's word break where a text run was split, at a soft hyphen)
TOUCH = 0.1
#: what a DOI printed on more than one page gains
REPEATED = 5
#: the least score a candidate needs
FLOOR = 2


@dataclass(frozen=True, slots=True)
class PageIdentifiers:
    doi: str | None = None
    arxiv_id: str | None = None
    pmid: str | None = None
    pmcid: str | None = None


@dataclass(frozen=True, slots=True)
class _Place:
    text: str
    zone: str
    page: int
    #: where the line starts and its type size
    x: float = 0.0
    y: float = 0.0
    size: float = 0.0
    #: offsets in ``text`` of the spaces between tokens that touch
    touching: frozenset[int] = frozenset()


def page_identifiers(lines: Sequence[Line], zones: Sequence[str],
                     metadata_doi: str | None = None) -> PageIdentifiers:
    """The document's own identifiers in ``lines`` (with their segmentation
    ``zones``); ``metadata_doi``, the DOI of the file's own metadata, if any."""
    places = list(_places(lines, zones))
    return PageIdentifiers(
        doi=_best(_doi_candidates(places), metadata_doi),
        arxiv_id=_best(_arxiv_candidates(places)),
        pmid=_best(_labelled(places, _PMID)),
        pmcid=_best([(v.upper(), s, i) for v, s, i in _labelled(places, _PMCID)]),
    )


def _places(lines: Sequence[Line], zones: Sequence[str]) -> Iterable[_Place]:
    for line, zone in zip(lines, zones, strict=True):
        if not line.tokens or zone == REFERENCES:
            continue
        page = line.tokens[0].page
        if page < FIRST_PAGES or (zone in RUNNING and page < RUNNING_PAGES):
            yield _place(line.tokens, zone)


def _place(tokens: Sequence[Token], zone: str) -> _Place:
    """The line's text without invisible characters, and the spaces in it that
    separate tokens set against each other."""
    text = ""
    touching = set()
    for k, token in enumerate(tokens):
        text += _INVISIBLE.sub("", token.text)
        if token.space_after and k + 1 < len(tokens):
            if _touch(token, tokens[k + 1]):
                touching.add(len(text))
            text += " "
    first = tokens[0]
    return _Place(text, zone, first.page, first.x, first.y, max(t.size for t in tokens),
                  frozenset(touching))


def _touch(a: Token, b: Token) -> bool:
    """``b`` is set right against ``a`` on its baseline, in the same type."""
    return (abs(b.y - a.y) < 0.5 * a.size and abs(b.size - a.size) < 0.5
            and not (a.superscript or b.superscript or a.subscript or b.subscript)
            and abs(b.x - (a.x + a.width)) < TOUCH * a.size)


def _zone_score(place: _Place) -> int:
    if place.zone == HEADER:
        return 3
    if place.zone in RUNNING:
        return 2 if place.page == 0 else 1
    # the body's text cites: an identifier there is another work's, unless the
    # line is the document's own citation or repeats on every page
    return -2


def _doi_candidates(places: Sequence[_Place]) -> list[tuple[str, int, int]]:
    """(normalised DOI, score, order) for every DOI printed in ``places``."""
    out = []
    for i, place in enumerate(places):
        text = place.text
        for m in _DOI.finditer(text):
            raw = m.group(0)
            rest = text[m.end():]
            broken = i + 1 < len(places) and _hyphenated(raw, rest, m.end(), place,
                                                         places[i + 1])
            if broken:
                # a hyphen the typesetter printed where it broke a word at the
                # line's end (a soft hyphen, hyphenation): the word goes on on the
                # next line, without it
                raw, rest = raw.removesuffix("-"), ""
            if not rest.strip() and i + 1 < len(places) and (
                    broken or _CUT.search(raw) or _rest_of(places[i], places[i + 1])):
                # cut at the line's end: the next line's first word goes on it
                if more := _GOES_ON.match(places[i + 1].text.lstrip()):
                    raw += more.group(0)
            elif (rest[:1] == " " and (raw[-1:] in "./-" or m.end() in place.touching)
                  and (more := _GOES_ON.match(rest[1:]))):
                # a space set after a dot or a hyphen, or one nothing printed
                raw += more.group(0)
            doi = _clean_doi(raw)
            if doi is None:
                continue
            before = text[:m.start()]
            if not before.strip() and i > 0:
                before = places[i - 1].text  # "DOI:" at the end of the line before
            score = _zone_score(place) + (3 if _DOI_LABEL.search(before.rstrip()) else 0)
            entry = text  # in a footnote or the text: with the entry's lines above
            if place.zone in ENTRY_ZONES:
                entry = f"{_entry_above(places, i)} {text}"
            out.append((doi, score + _context(entry), i))
    return _with_repetition(out, places)


def _hyphenated(raw: str, rest: str, end: int, place: _Place, following: _Place) -> bool:
    """The DOI ``raw`` ends its line in a hyphen that broke a word: a lower-case
    letter before it, one starting the next line (the reader's tokens make every
    dash "-", so the hyphen a typesetter prints at a soft hyphen, U+2010, looks like
    a DOI's own; a DOI's own hyphen at a line's end has a digit or a capital on
    one side: "1365-" "2648", "JCLI-" "D-11")."""
    if raw.endswith("-") and not rest.strip():
        before = raw[-2:-1]
    elif rest.strip() == "-" and end in place.touching:
        before = raw[-1:]
    else:
        return False
    after = following.text.lstrip()[:1]
    return before.islower() and after.islower()


def _rest_of(place: _Place, following: _Place) -> bool:
    """``following`` is nothing but the rest of an identifier cut anywhere at
    ``place``'s end (a DOI too long for its box, broken by the browser inside
    a word): the next line of the same zone and page, one run of identifier
    characters with a dot or a digit in it."""
    rest = following.text.strip()
    return (following.zone == place.zone and following.page == place.page
            and 0 < following.y - place.y <= 1.6 * max(place.size, 1.0)
            and " " not in rest and bool(_GOES_ON.fullmatch(rest)))


def _entry_above(places: Sequence[_Place], i: int) -> str:
    """The lines above ``places[i]`` that its entry (a footnote, a reference, a
    citation line) began on: those of its paragraph, back to the line that starts
    the entry (none when the DOI's line starts one); a line with a DOI in it
    ends another entry."""
    if _ENTRY_START.match(places[i].text):
        return ""
    above: list[str] = []
    j = i
    while j > 0 and len(above) < ENTRY_LINES and _continues(places[j - 1], places[j]):
        j -= 1
        if _DOI.search(places[j].text):
            break
        above.append(places[j].text)
        if _ENTRY_START.match(places[j].text):
            break
    return " ".join(reversed(above))


def _continues(above: _Place, below: _Place) -> bool:
    """``below`` is the next line of ``above``'s paragraph: the same page, zone
    and type, set just under it at about its left edge."""
    return (above.page == below.page and above.zone == below.zone
            and abs(above.size - below.size) < 0.5
            and 0 < below.y - above.y <= 1.6 * below.size
            and abs(below.x - above.x) <= 2 * below.size)


def _clean_doi(raw: str) -> str | None:
    doi = re.sub(r"\s", "", raw)
    while doi and (doi[-1] in _TRAILING or (doi[-1] in ")]}" and _unbalanced(doi))):
        doi = doi[:-1]
    return doi.lower() if len(doi.partition("/")[2]) >= 2 else None


def _unbalanced(text: str) -> bool:
    close = text[-1]
    return text.count(close) > text.count({")": "(", "]": "[", "}": "{"}[close])


def _with_repetition(found: list[tuple[str, int, int]],
                     places: Sequence[_Place]) -> list[tuple[str, int, int]]:
    """A DOI printed on several pages (a running foot, the document's citation
    line on each page) is the document's own: no cited work is."""
    pages: dict[str, set[int]] = {}
    for doi, _, i in found:
        pages.setdefault(doi, set()).add(places[i].page)
    return [(doi, score + (REPEATED if len(pages[doi]) > 1 else 0), i)
            for doi, score, i in found]


def _arxiv_candidates(places: Sequence[_Place]) -> list[tuple[str, int, int]]:
    out = []
    for i, place in enumerate(places):
        stamp = _ARXIV_STAMP.search(place.text)
        if stamp:
            # the stamp arXiv sets in the margin of its own PDFs
            out.append((stamp.group(1), 5, i))
            continue
        for m in _ARXIV.finditer(place.text):
            score = _zone_score(place) + _context(place.text)
            out.append((m.group(1), score, i))
    return out


def _labelled(places: Sequence[_Place], pattern: re.Pattern[str]
              ) -> list[tuple[str, int, int]]:
    out = []
    for i, place in enumerate(places):
        for m in pattern.finditer(place.text):
            out.append((m.group(1), _zone_score(place) + _context(place.text), i))
    return out


def _context(text: str) -> int:
    """What the line says of whose identifier it prints: the document's own
    citation line ("Citation: Smith J, et al. (2008) …") counts for it, any other
    line that reads as a reference against it."""
    if _OWN.search(text):
        return 3
    return -4 if _CITATION.search(text) else 0


def _best(candidates: list[tuple[str, int, int]], metadata: str | None = None) -> str | None:
    """The highest-scoring candidate at or above the floor, the first of equals;
    the file's metadata backs the candidate it names."""
    if metadata:
        metadata = metadata.lower()
        candidates = [(v, s + (4 if v == metadata else 0), i) for v, s, i in candidates]
    # every candidate of one value counts with its best place
    best: dict[str, tuple[int, int]] = {}
    for value, score, i in candidates:
        if value not in best or (score, -i) > (best[value][0], -best[value][1]):
            best[value] = (score, i)
    ranked = sorted(best.items(), key=lambda kv: (-kv[1][0], kv[1][1]))
    if ranked and ranked[0][1][0] >= FLOOR:
        return ranked[0][0]
    return None
