"""Bibliographic metadata from a landing page's HTML (``html_biblio``): Highwire
``citation_*``, bepress, EPrints, PRISM, Dublin Core, Open Graph and JSON-LD, as read by
``web/biblio.py``. ``web/landing.py`` analyses the whole page (full-text links, walls)."""

from __future__ import annotations

from typing import Any

from selectolax.lexbor import LexborHTMLParser

from sandcrawler.web.biblio import base_href, collect_meta, extract_biblio
from sandcrawler.web.landing import decode_html

#: the most of a landing page the fileset ingest fetches
MAX_HTML = 4 * 2**20


def html_biblio(html: bytes, url: str | None = None,
                content_type: str | None = None) -> dict[str, Any] | None:
    """The landing page's metadata, or None when it has none. With ``url`` (the page's
    own), relative full-text URLs are made absolute; without it they are left out."""
    text, _ = decode_html(html, content_type)
    tree = LexborHTMLParser(text)
    base = base_href(tree, url) if url else None
    return extract_biblio(tree, collect_meta(tree), base)
