"""Callouts linked to what they point at, as GROBID's ``<ref target>``:

- a reference callout by its number ("[12]", "12", "[3-5]", superscript "4,7")
  against the references' printed labels (or their order when none was
  printed), or by author and year ("(Smith et al., 2001a)", "Smith and Jones
  2001") against the references' first author and date;
- a figure, table or formula callout ("Fig. 2b", "Table 3", "Eq. (4)") by its
  number against the figures', tables' and formulas' labels.

A callout that names several references ("[1, 3-5]", "(Smith 2001; Doe
2002)") is cut into one callout per reference, each with its own text, as
GROBID writes one ``<ref>`` per reference. A callout left without a target
keeps ``target=None`` (GROBID writes such a ``<ref>`` without ``target``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from grobid_tei_xml.types import GrobidBiblio

from sandcrawler.records.fulltext import Body, Callout, CalloutKind, Figure, Paragraph

_NUMBERS = re.compile(r"(\d+)(?:\s*[-\u2013\u2014]\s*(\d+))?")
_YEAR = re.compile(r"\b(1[5-9]\d\d|20\d\d)([a-z])?\b")
#: a figure's, table's or formula's number: "2", "2b", "S3", or a capital Roman "IV"
_LABEL_NUMBER = re.compile(r"(?<![A-Za-z])(\d+|[IVXLC]+\b)([a-z](?![a-z]))?")
_WORD = re.compile(r"[^\W\d_][^\W\d_'\u2019-]*", re.UNICODE)
#: a parenthesis holding a year: "(Lin, 1998)", "(Wang and Neumann, 2007a; Lin 1998)"
_PARENTHESES = re.compile(r"\([^()]{0,240}?\b(?:1[5-9]\d\d|20\d\d)[a-z]?\b[^()]{0,240}?\)")
#: a name and its year in brackets: "Wang and Neumann (2007a)", "Lin et al. (1998)"
_NARRATIVE = re.compile(
    r"\b[A-Z][^\W\d_][^\W\d_'\u2019-]*(?:\s+(?:et\s+al\.?|(?:and|&)\s+[A-Z][^\W\d_]"
    r"[^\W\d_'\u2019-]*))?,?\s*\((?:1[5-9]\d\d|20\d\d)[a-z]?\)")
#: words in author-year callouts that are not surnames
_NOT_NAMES = frozenset({"et", "al", "and", "see", "e", "g", "eg", "cf", "also", "in", "the",
                        "for", "review", "reviews", "i", "ie", "und", "y", "ibid", "op",
                        "cit", "pp", "p", "fig", "table"})


def link_callouts(body: Body, references: Sequence[GrobidBiblio]) -> None:
    """Set each callout's target, cutting multi-reference callouts apart."""
    numbered = _numbered_references(references)
    named = _named_references(references)
    figures = _by_label([f for f in body.figures if f.kind == "figure"])
    tables = _by_label([f for f in body.figures if f.kind == "table"])
    formulas = {_label_key(b.label): b.id for s in body.sections for b in s.blocks
                if not isinstance(b, Paragraph) and b.label and _label_key(b.label)}
    for section in body.sections:
        for para in section.paragraphs:
            out: list[Callout] = []
            for callout in para.callouts:
                if callout.kind is CalloutKind.BIBR:
                    out.extend(_bibr(callout, para, numbered, named))
                    continue
                table = {CalloutKind.FIGURE: figures, CalloutKind.TABLE: tables,
                         CalloutKind.FORMULA: formulas}[callout.kind]
                m = _LABEL_NUMBER.search(callout.text)
                if m is not None:
                    callout.target = table.get(_label_key(m.group(0))) \
                        or table.get(_label_key(m.group(1)))
                out.append(callout)
            if named:
                out.extend(_author_year_in_text(para, out, named))
                out.sort(key=lambda c: c.start)
            para.callouts = out


def _author_year_in_text(para: Paragraph, found: Sequence[Callout],
                         named: dict[tuple[str, str], list[str]]) -> list[Callout]:
    """Author-year callouts the model left in the text ("(Lin, 1998)", "Wang and
    Neumann (2007a)"; its training data is mostly numbered): each one that names
    a reference of the list by its first author and year, and overlaps no
    callout found. A name and a year that name no reference are left as text."""
    taken = [(c.start, c.end) for c in found]
    out: list[Callout] = []
    for pattern in (_NARRATIVE, _PARENTHESES):
        for m in pattern.finditer(para.text):
            start, end = m.start(), m.end()
            if any(a < end and start < b for a, b in taken):
                continue
            span = Callout(CalloutKind.BIBR, m.group(0), start, end)
            years = list(_YEAR.finditer(span.text))
            pieces = [c for c in _author_year(span, para, years, named) if c.target]
            if pieces:
                out.extend(pieces)
                taken.append((start, end))
    return out


def _bibr(callout: Callout, para: Paragraph, numbered: dict[str, str],
          named: dict[tuple[str, str], list[str]]) -> list[Callout]:
    text = callout.text
    years = list(_YEAR.finditer(text))
    if years:
        return _author_year(callout, para, years, named)
    pieces: list[Callout] = []
    for m in _NUMBERS.finditer(text):
        # a range ("3-5") is one callout, linked to its first reference, as
        # GROBID links it
        start, end = callout.start + m.start(), callout.start + m.end()
        pieces.append(Callout(callout.kind, para.text[start:end], start, end,
                              numbered.get(str(int(m.group(1)))), callout.boxes))
    if len(pieces) <= 1:
        callout.target = pieces[0].target if pieces else None
        return [callout]
    # the brackets around the whole stay with the first and the last piece
    pieces[0].start, pieces[-1].end = callout.start, callout.end
    pieces[0].text = para.text[pieces[0].start:pieces[0].end]
    pieces[-1].text = para.text[pieces[-1].start:pieces[-1].end]
    return pieces


def _author_year(callout: Callout, para: Paragraph, years: list[re.Match[str]],
                 named: dict[tuple[str, str], list[str]]) -> list[Callout]:
    """One callout per year it names; its surname is the last name-like word
    before that year, in the callout or, for "Smith et al. (2001)" where the
    model marked only "(2001)", in the paragraph just before it."""
    pieces: list[Callout] = []
    prev_end = 0
    for i, m in enumerate(years):
        before = callout.text[prev_end:m.start()]
        names = [w for w in _WORD.findall(before) if _fold(w) not in _NOT_NAMES
                 and w[:1].isupper()]
        if not names and pieces:
            names = [pieces[-1].text]  # "Smith 2001, 2003": the same author
            names = [w for w in _WORD.findall(names[0]) if _fold(w) not in _NOT_NAMES
                     and w[:1].isupper()]
        if not names and i == 0:
            context = para.text[max(0, callout.start - 60):callout.start]
            names = [w for w in _WORD.findall(context) if _fold(w) not in _NOT_NAMES
                     and w[:1].isupper()][-3:]
        target = _named_target(names, m, named)
        seg_start = prev_end
        # the piece runs from after the previous one to the end of its year
        seg_end = m.end() if i + 1 < len(years) else len(callout.text)
        piece_text = callout.text[seg_start:seg_end]
        lead = len(piece_text) - len(piece_text.lstrip(" ;,"))
        start = callout.start + seg_start + lead
        end = callout.start + seg_end
        pieces.append(Callout(callout.kind, para.text[start:end], start, end, target,
                              callout.boxes))
        prev_end = seg_end
    if len(pieces) == 1:
        callout.target = pieces[0].target
        return [callout]
    return pieces


def _named_target(names: list[str], year: re.Match[str],
                  named: dict[tuple[str, str], list[str]]) -> str | None:
    y = year.group(1)
    suffix = year.group(2)
    for name in reversed(names):
        ids = named.get((_fold(name), y))
        if ids:
            if suffix:
                index = ord(suffix) - ord("a")
                return ids[index] if index < len(ids) else ids[-1]
            return ids[0]
    return None


def _numbered_references(references: Sequence[GrobidBiblio]) -> dict[str, str]:
    """Printed label -> ``b<index>``; references without labels count from 1."""
    out: dict[str, str] = {}
    labelled = False
    for i, ref in enumerate(references):
        if ref.id:
            m = re.search(r"\d+", ref.id)
            if m:
                labelled = True
                out.setdefault(str(int(m.group(0))), f"b{i}")
    if not labelled:
        out = {str(i + 1): f"b{i}" for i in range(len(references))}
    return out


def _named_references(references: Sequence[GrobidBiblio]) -> dict[tuple[str, str], list[str]]:
    """(first author's folded surname, year) -> ``b<index>``s in order."""
    out: dict[tuple[str, str], list[str]] = {}
    for i, ref in enumerate(references):
        year = _YEAR.search(ref.date or "") or _YEAR.search(ref.unstructured or "")
        if not year or not ref.authors:
            continue
        author = ref.authors[0]
        surname = author.surname or (author.full_name or "").split(" ")[-1]
        for word in _WORD.findall(surname or ""):
            out.setdefault((_fold(word), year.group(1)), []).append(f"b{i}")
    return out


def _by_label(figures: Sequence[Figure]) -> dict[str, str]:
    out: dict[str, str] = {}
    for n, figure in enumerate(figures):
        # no label read: the number in its head, or in its caption's first words
        label = figure.label or _number_in(figure.head) \
            or _number_in((figure.description or "")[:20]) or str(n + 1)
        key = _label_key(label)
        if key:
            out.setdefault(key, figure.id)
            # "2a" also answers "2"
            out.setdefault(key.rstrip("abcdefgh"), figure.id)
    return out


def _number_in(text: str | None) -> str | None:
    m = _LABEL_NUMBER.search(text or "")
    return m.group(0) if m else None


def _label_key(label: str | None) -> str:
    return re.sub(r"[^0-9a-z]", "", (label or "").lower())


def _fold(word: str) -> str:
    decomposed = unicodedata.normalize("NFKD", word)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).lower()
