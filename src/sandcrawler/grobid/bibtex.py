"""BibTeX entries from biblios, laid out as GROBID's ``BiblioItem.toBibTeX``
writes them (its entry types, fields and order), for the services answering
``Accept: application/x-bibtex``.

Every value is written inside braces. Text fields escape what BibTeX and LaTeX
would read as markup (braces, backslash, ``& % $ # _ ^ ~``), so no value can
end its field early or unbalance the entry; identifiers (DOI, arXiv id) are
verbatim fields, where a brace becomes its URL escape (``%7B``, ``%7D``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from grobid_tei_xml.types import GrobidAuthor, GrobidBiblio

_LATEX = {"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "&": r"\&", "%": r"\%",
          "$": r"\$", "#": r"\#", "_": r"\_", "^": r"\^{}", "~": r"\~{}"}
_SPECIAL = re.compile(r"[\\{}&%$#_^~]")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
_DATE = re.compile(r"^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?")
_PROCEEDINGS = re.compile(r"proceedings|^(in )?proc", re.I)


def _clean(value: str) -> str:
    """One line: control characters gone, whitespace collapsed."""
    return " ".join(_CONTROL.sub(" ", value).split())


def text_value(value: str) -> str:
    """A text field's value, escaped for BibTeX and LaTeX."""
    return _SPECIAL.sub(lambda m: _LATEX[m.group()], _clean(value))


def verbatim_value(value: str) -> str:
    """An identifier's value: kept as it is, less what could unbalance the entry."""
    return _clean(value).replace("{", "%7B").replace("}", "%7D").replace("\\", "%5C")


def _author(a: GrobidAuthor) -> str | None:
    given = " ".join(x for x in (a.given_name, a.middle_name) if x)
    if a.surname:
        return f"{a.surname}, {given}" if given else a.surname
    return a.full_name or None


def _entry_type(b: GrobidBiblio) -> str:
    if b.journal:
        return "article"
    if b.book_title:
        return "inproceedings" if _PROCEEDINGS.search(b.book_title.strip()) else "inbook"
    return "misc"


def _pages(b: GrobidBiblio) -> str | None:
    if b.first_page and b.last_page:
        return f"{b.first_page}--{b.last_page}"
    if b.pages:
        return re.sub(r"\s*[-\u2010-\u2015]+\s*", "--", b.pages.strip())
    return b.first_page


def bibtex_entry(b: GrobidBiblio, key: str, *, abstract: str | None = None,
                 keywords: Sequence[str] = (), raw: bool = False) -> str:
    """One entry, keyed ``key`` (GROBID's: ``-1`` for a single biblio, the
    position in a list); ``raw`` adds the string as read (``includeRawCitations``)."""
    fields: list[tuple[str, str]] = []

    def text(name: str, value: str | None) -> None:
        if value and _clean(value):
            fields.append((name, text_value(value)))

    authors = [x for x in (_author(a) for a in b.authors or []) if x]
    fields.append(("author", " and ".join(text_value(a) for a in authors)))
    text("title", b.title)
    text("journal", b.journal)
    if not b.journal:
        text("booktitle", b.book_title)
        text("series", b.series_title)
    text("publisher", b.publisher)
    editors = [x for x in (_author(a) for a in b.editors or []) if x]
    if editors:
        fields.append(("editor", " and ".join(text_value(e) for e in editors)))
    if b.date and (m := _DATE.match(b.date.strip())):
        fields.append(("date", m.group(0)))
        fields.append(("year", m.group(1)))
        if m.group(2):
            fields.append(("month", str(int(m.group(2)))))
            if m.group(3):
                fields.append(("day", str(int(m.group(3)))))
    text("pages", _pages(b))
    text("volume", b.volume)
    text("number", b.issue)
    if b.doi and _clean(b.doi):
        fields.append(("doi", verbatim_value(b.doi)))
    if b.arxiv_id and _clean(b.arxiv_id):
        fields.append(("eprint", verbatim_value(b.arxiv_id)))
    text("abstract", abstract)
    words = [text_value(k) for k in keywords if k and _clean(k)]
    if words:
        fields.append(("keywords", ", ".join(words)))
    if raw:
        text("raw", b.unstructured)
    body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields)
    return f"@{_entry_type(b)}{{{key},\n{body}\n}}\n"


def bibtex_entries(biblios: Sequence[GrobidBiblio], *, raw: bool = False) -> str:
    """A list's entries, keyed by position, a blank line between (GROBID's)."""
    return "".join(bibtex_entry(b, str(i), raw=raw) + "\n" for i, b in enumerate(biblios))
