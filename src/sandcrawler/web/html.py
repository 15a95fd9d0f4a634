"""Bibliographic metadata from a landing page's HTML ``<meta>`` tags (Highwire
``citation_*``, Dublin Core, Open Graph), the result's ``html_biblio``."""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any

from sandcrawler.errors import RecordError
from sandcrawler.identifiers import normalize_doi

# meta name -> html_biblio field; the first tag found for a field wins
_FIELDS = {
    "citation_title": "title", "dc.title": "title", "og:title": "title",
    "citation_doi": "doi", "dc.identifier": "doi", "citation_publisher": "publisher",
    "dc.publisher": "publisher", "citation_publication_date": "release_date",
    "citation_date": "release_date", "dc.date": "release_date",
    "citation_pdf_url": "pdf_fulltext_url", "citation_language": "lang",
    "dc.language": "lang", "citation_journal_title": "container_name",
    "og:site_name": "container_name",
}
_LISTS = {"citation_author": "contrib_raw_names", "dc.creator": "contrib_raw_names"}
MAX_HTML = 4 * 2**20


class _MetaParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: dict[str, Any] = {}
        self._in_title = False
        self.title = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        if tag != "meta":
            return
        a = {k.lower(): (v or "").strip() for k, v in attrs}
        name = (a.get("name") or a.get("property") or "").lower()
        value = a.get("content", "")
        if not value:
            return
        if name in _LISTS:
            self.found.setdefault(_LISTS[name], []).append(value)
        elif name in _FIELDS:
            field = _FIELDS[name]
            if field == "doi":
                try:
                    value = normalize_doi(value)
                except RecordError:
                    return  # dc.identifier is often not a DOI
            self.found.setdefault(field, value)

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False

    def handle_data(self, data: str) -> None:
        if self._in_title and len(self.title) < 1000:
            self.title += data


def html_biblio(html: bytes) -> dict[str, Any] | None:
    """The landing page's metadata, or None when it has none."""
    parser = _MetaParser()
    try:
        parser.feed(html[:MAX_HTML].decode("utf-8", errors="replace"))
        parser.close()
    except AssertionError:  # html.parser gives up on some broken markup
        pass
    found = parser.found
    if "title" not in found and parser.title.strip():
        found["title"] = " ".join(parser.title.split())
    return found or None
