"""Bibliographic metadata from a landing page's HTML (``html_biblio``): Highwire
``citation_*``, bepress, EPrints, PRISM, Dublin Core, Open Graph and JSON-LD, as read by
``web/html/biblio.py``. ``web/html/landing.py`` analyses the whole page (full-text links, walls)."""

from __future__ import annotations

import logging

from sandcrawler.core.errors import RecordError
from sandcrawler.records.html_biblio import HtmlBiblio
from sandcrawler.web.html.landing import parse_html

log = logging.getLogger(__name__)

#: the most of a landing page the fileset ingest fetches
MAX_HTML = 4 * 2**20


def html_biblio(html: bytes, url: str | None = None,
                content_type: str | None = None) -> HtmlBiblio | None:
    """The landing page's metadata, or None when it has none. With ``url`` (the page's
    own), relative full-text URLs are made absolute; without it they are left out
    (unless the page names an absolute ``<base href>``). The page is read as the
    crawler reads it (``web.landing.parse_html``: in a child process, within its
    time and memory limits); a page built to exhaust the parser has no metadata."""
    try:
        return parse_html(html, url or "", content_type).biblio
    except RecordError as e:
        log.info("%s", e)
        return None
