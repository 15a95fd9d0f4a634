"""Search: what a user typed, told apart (an identifier, a URL, or title words), and
what the database holds for it."""

from __future__ import annotations

import re
from typing import Any

from sandcrawler.app.services import Services
from sandcrawler.errors import InvalidName, RecordError
from sandcrawler.models.statuses import StoreStatus
from sandcrawler.site import reads
from sandcrawler.storage.catalogue import parse_identifier
from sandcrawler.storage.docid import SCHEMES

MAX_QUERY = 1000
MAX_PAGE = 1000
_ARXIV = re.compile(r"^(\d{4}\.\d{4,5}|[a-z-]+(\.[A-Z]{2})?/\d{7})(v\d+)?$", re.IGNORECASE)
_WORD = re.compile(r"\w+")


def classify(query: str) -> tuple[str, str]:
    """(what, normalised value): a catalogue identifier scheme (``uuid``, ``doi``,
    ``sha1``, ``pmid``, ``pmcid``, ``arxiv``), ``url``, or ``title``."""
    text = query.strip()
    is_url = text.lower().startswith(("http://", "https://"))
    if is_url and not re.match(r"^https?://(dx\.)?doi\.org/", text, re.IGNORECASE):
        return "url", text
    try:
        return parse_identifier(text)
    except RecordError:
        if is_url:  # a doi.org URL that names no DOI (its robots.txt)
            return "url", text
    if text.isdigit() and len(text) <= 10:
        return "pmid", SCHEMES["pmid"](text)
    if _ARXIV.match(text):
        return "arxiv", SCHEMES["arxiv"](text)
    return "title", text


def search(services: Services, query: str, page: int = 1) -> dict[str, Any]:
    if len(query) > MAX_QUERY:
        raise InvalidName(f"query longer than {MAX_QUERY} characters", status=StoreStatus.BAD_KEY)
    if not 1 <= page <= MAX_PAGE:
        raise InvalidName(f"page {page} is out of range (1 to {MAX_PAGE})",
                          status=StoreStatus.BAD_KEY)
    out: dict[str, Any] = {"query": query, "page": page, "documents": [], "ingest_results": [],
                           "captures": [], "crossref": [], "titled_documents": [],
                           "more": False}
    if not query.strip():
        out["what"] = None
        return out
    what, value = classify(query)
    out["what"], out["value"] = what, value
    if what == "url":
        out.update(reads.find_url(services, value))
    elif what == "title":
        words = _WORD.findall(value)[:12]
        if words:
            out.update(reads.find_title(services, words, page))
    else:
        out["documents"] = reads.find_documents(services, what, value)
        if what == "doi" and query.strip().lower().startswith(("http://", "https://")):
            # a doi.org URL is also what requests and crawls started from
            out.update(reads.find_url(services, query.strip()))
        if what == "sha1":
            out.update(reads.find_sha1(services, value))
        if what == "doi":
            out["crossref"] = reads.find_crossref(services, value)
    return out
