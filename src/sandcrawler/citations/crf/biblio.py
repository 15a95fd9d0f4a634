"""Labelled tokens to a ``GrobidBiblio`` shaped like GROBID's own answer.

Fields follow grobid_tei_xml's reading of GROBID's TEI: an article title is
``title`` and the book it appears in ``book_title`` (a book alone has only
``title``); dates are ISO ("1997", "1997-01", "1997-01-05"); pages are split into
``first_page``/``last_page`` with ``pages`` = "first-last"; arXiv ids lose their
"arXiv:" prefix; a DOI URL is dropped when the DOI is known. ``unstructured`` is
always the input string.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from grobid_tei_xml.types import GrobidBiblio

from sandcrawler.citations.crf.labels import OUTSIDE
from sandcrawler.citations.crf.names import split_names
from sandcrawler.tagging.tokens import Token

_QUOTE_CHARS = "\"'\u201c\u201d\u201e\u00ab\u00bb\u2018\u2019"
_KEEP_DOT_EDGE = " \t,;:([{)]}*\u2020" + _QUOTE_CHARS
_EDGE = _KEEP_DOT_EDGE + "."

_MONTHS = {
    name: i
    for i, names in enumerate(
        [
            ("jan", "january", "janvier", "januar", "enero", "gennaio"),
            ("feb", "february", "février", "fevrier", "februar", "febrero", "febbraio"),
            ("mar", "march", "mars", "märz", "marz", "marzo"),
            ("apr", "april", "avril", "abril", "aprile"),
            ("may", "mai", "mayo", "maggio"),
            ("jun", "june", "juin", "juni", "junio", "giugno"),
            ("jul", "july", "juillet", "juli", "julio", "luglio"),
            ("aug", "august", "août", "aout", "agosto"),
            ("sep", "sept", "september", "septembre", "septiembre", "settembre"),
            ("oct", "october", "octobre", "oktober", "octubre", "ottobre"),
            ("nov", "november", "novembre", "noviembre"),
            ("dec", "december", "décembre", "decembre", "dezember", "diciembre", "dicembre"),
        ],
        start=1,
    )
    for name in names
}
_YEAR = re.compile(r"(?<!\d)(1[5-9]\d\d|20\d\d)(?!\d)")
_DAY = re.compile(r"(?<!\d)([0-3]?\d)(?!\d)")
_WORD = re.compile(r"[^\W\d_]+")
_DASHES = "\u2010\u2011\u2012\u2013\u2014\u2212"  # hyphen, non-breaking, figure, en, em, minus
_PAGE_RANGE = re.compile(
    rf"([A-Za-z]{{0,2}}\d+[A-Za-z]?)\s*(?:-+|[{_DASHES}]|to)\s*([A-Za-z]{{0,2}}\d+[A-Za-z]?)"
)
_PAGE_ONE = re.compile(r"[A-Za-z]{0,2}\d+[A-Za-z]?|[ivxlcdm]+\b", re.I)
_SCOPE_VALUE = re.compile(rf"[A-Za-z]?\d+(?:[-/{_DASHES}][A-Za-z]?\d+)?[A-Za-z]?|[IVXLC]+\b")
_DOI = re.compile(r"10\.\d{4,9}/[^\s\"<>]+")
_ARXIV_NEW = re.compile(r"(?<![\d.])(\d{4}\.\d{4,5}(?:v\d+)?)(?![\d])")
_ARXIV_OLD = re.compile(r"\b([a-z][a-z\-]+(?:\.[A-Z]{2})?/\d{7}(?:v\d+)?)\b")
_ARXIV_HINT = re.compile(r"arxiv", re.I)
_PMID = re.compile(r"\bPMID:?\s*(\d{1,9})\b", re.I)
_PMCID = re.compile(r"\b(PMC\d{3,9})\b", re.I)
#: the words before an identifier of _ARXIV_HINT, _PMID and _PMCID, in one search
_ID_WORDS = re.compile(r"arxiv|pmid|pmc", re.I)
_URL = re.compile(r"(?:https?|ftp)://[^\s<>\"]+|www\.[^\s<>\"]+")
_TRAILING = ".,;:)]}>'\""


def _clean(text: str, keep_dot: bool = False) -> str:
    text = " ".join(text.split())
    return text.strip(_KEEP_DOT_EDGE if keep_dot else _EDGE)


def spans(text: str, tokens: Sequence[Token], labels: Sequence[str]) -> list[tuple[str, str]]:
    """(label, exact substring) of each run of tokens with one label."""
    out: list[tuple[str, str]] = []
    i, n = 0, len(tokens)
    while i < n:
        label = labels[i]
        j = i
        while j + 1 < n and labels[j + 1] == label:
            j += 1
        if label != OUTSIDE:
            out.append((label, text[tokens[i].start : tokens[j].end]))
        i = j + 1
    return out


def column_spans(text: str, starts: Sequence[int], ends: Sequence[int],
                 labels: Sequence[str]) -> list[tuple[str, str]]:
    """``spans`` of tokens given as columns (``tagging.tokens.token_columns``)."""
    out: list[tuple[str, str]] = []
    i, n = 0, len(labels)
    while i < n:
        label = labels[i]
        j = i
        while j + 1 < n and labels[j + 1] == label:
            j += 1
        if label != OUTSIDE:
            out.append((label, text[starts[i] : ends[j]]))
        i = j + 1
    return out


def normalize_date(text: str) -> str | None:
    year = _YEAR.search(text)
    if not year:
        return None
    month = None
    for word in _WORD.findall(text.lower()):
        if word in _MONTHS:
            month = _MONTHS[word]
            break
    if month is None:
        return year.group(1)
    day = None
    rest = text[: year.start()] + " " + text[year.end() :]
    for m in _DAY.finditer(rest):
        if 1 <= int(m.group(1)) <= 31:
            day = int(m.group(1))
            break
    if day is None:
        return f"{year.group(1)}-{month:02d}"
    return f"{year.group(1)}-{month:02d}-{day:02d}"


def split_pages(text: str) -> tuple[str | None, str | None]:
    m = _PAGE_RANGE.search(text)
    if m:
        first, last = m.group(1), m.group(2)
        # "1234-56" means 1234-1256
        if first.isdigit() and last.isdigit() and len(last) < len(first):
            last = first[: len(first) - len(last)] + last
        return first, last
    m = _PAGE_ONE.search(text)
    return (m.group(0), None) if m else (None, None)


def scope_value(text: str) -> str | None:
    """"Vol. 12" -> "12", "no. 3-4" -> "3-4", "(2)" -> "2"."""
    m = _SCOPE_VALUE.search(text)
    if m:
        return m.group(0)
    cleaned = _clean(text)
    return cleaned or None


def find_doi(text: str) -> str | None:
    m = _DOI.search(text)
    return m.group(0).rstrip(_TRAILING) if m else None


def find_arxiv(text: str) -> str | None:
    m = _ARXIV_NEW.search(text) or _ARXIV_OLD.search(text)
    return m.group(1) if m else None


def find_url(text: str) -> str | None:
    m = _URL.search(text)
    return m.group(0).rstrip(_TRAILING) if m else None


def _first_clean(values: list[str], keep_dot: bool) -> str | None:
    for value in values:
        cleaned = _clean(value, keep_dot)
        if cleaned:
            return cleaned
    return None


def build_biblio(text: str, tokens: Sequence[Token], labels: Sequence[str]) -> GrobidBiblio:
    return biblio_of_spans(text, spans(text, tokens, labels))


def biblio_of_spans(text: str, labelled: Iterable[tuple[str, str]]) -> GrobidBiblio:
    """The biblio of ``text`` from its (label, substring) spans, in order."""
    fields: dict[str, list[str]] = {}
    for label, value in labelled:
        fields.setdefault(label, []).append(value)

    def first(label: str, keep_dot: bool = False) -> str | None:
        values = fields.get(label)
        return _first_clean(values, keep_dot) if values else None

    authors = [p for value in fields.get("author", ()) for p in split_names(value)]
    editors = [p for value in fields.get("editor", ()) for p in split_names(value, editors=True)]
    biblio = GrobidBiblio(authors=authors, editors=editors or None, unstructured=text)
    biblio.title = first("title")
    biblio.book_title = first("booktitle")
    if biblio.book_title and not biblio.title:
        biblio.title, biblio.book_title = biblio.book_title, None
    # abbreviated journal names keep their final dot ("Phys. Rev.")
    biblio.journal = first("journal", keep_dot=True)
    if biblio.journal and biblio.journal.endswith(".") and "." not in biblio.journal[:-1]:
        biblio.journal = biblio.journal[:-1]
    biblio.series_title = first("series")
    biblio.publisher = first("publisher")
    biblio.institution = first("institution")
    biblio.note = first("note")
    for value in fields.get("date", ()):
        biblio.date = normalize_date(value)
        if biblio.date:
            break
    volume, issue = first("volume"), first("issue")
    biblio.volume = scope_value(volume) if volume else None
    biblio.issue = scope_value(issue) if issue else None
    pages = first("pages")
    if pages:
        biblio.first_page, biblio.last_page = split_pages(pages)
        if biblio.first_page and biblio.last_page:
            biblio.pages = f"{biblio.first_page}-{biblio.last_page}"
        else:
            biblio.pages = biblio.first_page or pages

    _identifiers(biblio, fields, text)
    return biblio


def _identifiers(biblio: GrobidBiblio, fields: dict[str, list[str]], text: str) -> None:
    """Identifiers from their labelled spans, else recognised anywhere in the string:
    their syntax is unambiguous enough that a pattern beats a missed label."""
    # the patterns searched in the whole string each need a literal ("10.", "://" or
    # "www.", one of the words): strings without it are not searched
    doi_span = " ".join(fields.get("doi", ()))
    biblio.doi = find_doi(doi_span) or (find_doi(text) if "10." in text else None)
    arxiv_span = " ".join(fields.get("arxiv", ()))
    biblio.arxiv_id = find_arxiv(arxiv_span) if arxiv_span else None
    if text.isascii():  # re.I on ASCII text is str.lower()'s case
        lowered = text.lower()
        named = "arxiv" in lowered or "pmid" in lowered or "pmc" in lowered
    else:
        named = _ID_WORDS.search(text) is not None
    hint = None if biblio.arxiv_id or not named else _ARXIV_HINT.search(text)
    if hint:  # unlabelled: only an id written after the word "arXiv"
        biblio.arxiv_id = find_arxiv(text[hint.start() :])
    pmid_span = " ".join(fields.get("pmid", ()))
    m = re.search(r"\d{1,9}", pmid_span) if pmid_span else None
    biblio.pmid = m.group(0) if m else None
    if not biblio.pmid:
        m = _PMID.search(text) if named else None
        biblio.pmid = m.group(1) if m else None
    pmcid_span = " ".join(fields.get("pmcid", ()))
    m = _PMCID.search(pmcid_span) if pmcid_span else _PMCID.search(text) if named else None
    biblio.pmcid = m.group(1).upper() if m else None
    web = " ".join(fields.get("web", ()))
    url = find_url(web) or (find_url(text) if "://" in text or "www." in text else None)
    if url and biblio.doi and ("doi.org/" in url):
        url = None
    biblio.url = url
