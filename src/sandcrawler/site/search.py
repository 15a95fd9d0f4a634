"""Search: what a user typed, told apart (an identifier, a URL, or title words), and
what the database holds for it."""

from __future__ import annotations

import re

from sandcrawler.app.services import Services
from sandcrawler.core.errors import InvalidName, RecordError
from sandcrawler.records.statuses import StoreStatus
from sandcrawler.site import reads
from sandcrawler.site.page_data import SearchPage
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


def search(services: Services, query: str, page: int = 1) -> SearchPage:
    if len(query) > MAX_QUERY:
        raise InvalidName(f"query longer than {MAX_QUERY} characters", status=StoreStatus.BAD_KEY)
    if not 1 <= page <= MAX_PAGE:
        raise InvalidName(f"page {page} is out of range (1 to {MAX_PAGE})",
                          status=StoreStatus.BAD_KEY)
    out: SearchPage = {"query": query, "page": page, "documents": [], "ingest_results": [],
                       "captures": [], "crossref": [], "titled_documents": [],
                       "more": False, "what": None}
    if not query.strip():
        return out
    what, value = classify(query)
    out["what"], out["value"] = what, value
    if what == "url":
        _with_url(out, services, value)
    elif what == "title":
        words = _WORD.findall(value)[:12]
        if words:
            found = reads.find_title(services, words, page)
            out["crossref"] = found["crossref"]
            out["titled_documents"] = found["titled_documents"]
            out["more"] = found["more"]
    else:
        out["documents"] = reads.find_documents(services, what, value)
        if what == "doi" and query.strip().lower().startswith(("http://", "https://")):
            # a doi.org URL is also what requests and crawls started from
            _with_url(out, services, query.strip())
        if what == "sha1":
            by_sha1 = reads.find_sha1(services, value)
            out["ingest_results"] = by_sha1["ingest_results"]
            out["captures"] = by_sha1["captures"]
        if what == "doi":
            out["crossref"] = reads.find_crossref(services, value)
    return out


def _with_url(out: SearchPage, services: Services, url: str) -> None:
    """What started or ended at ``url``, and its captures."""
    found = reads.find_url(services, url)
    out["ingest_results"] = found["ingest_results"]
    out["captures"] = found["captures"]
    out["timeline_link"] = found["timeline_link"]
