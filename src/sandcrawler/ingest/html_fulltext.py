"""The processor of HTML full text (``ingest_type`` ``html``).

The page's main text and metadata come from trafilatura; a page with less
than ``min_words`` words of main text is ``no-main-text``. Otherwise the page
and its main text are stored as the document's ``html`` and ``text`` resources,
catalogued, its ``citation_reference`` tags parsed, and it is identified and its
references resolved when there is a catalog. The reading runs in a child
process under time and memory limits (``html-too-complex``); trafilatura is
imported here only (docs/ingest.md, "HTML full text"). Every page read, whatever
its status, leaves ``html0`` cells in the PDF table: the status and the original
system's ``html_meta`` row (``records.html_meta``).
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import trafilatura
from selectolax.lexbor import LexborHTMLParser

from sandcrawler.citations.base import CitationParser
from sandcrawler.core.errors import RecordError
from sandcrawler.ingest.found import FoundFile, over_limit
from sandcrawler.ingest.jats import ParserHolder, capture_time
from sandcrawler.match.document import DocumentMatcher, Origin, landing_source, metadata_source
from sandcrawler.records.catalogue_metadata import CatalogueMetadata, HtmlAccount
from sandcrawler.records.html_biblio import HtmlBiblio
from sandcrawler.records.html_meta import SCOPE_ARTICLE_FULLTEXT, HtmlMeta, HtmlResource
from sandcrawler.records.ingest import Processing
from sandcrawler.records.statuses import ProcessingStatus
from sandcrawler.refs.reading import RefsWriter, refs_from_meta
from sandcrawler.storage.catalogue import Catalogue
from sandcrawler.storage.pdftable import PdfTable
from sandcrawler.storage.precedence import Layer, Source
from sandcrawler.web.html.biblio import FIELDS
from sandcrawler.web.html.bounded import shared_work
from sandcrawler.web.html.landing import read_meta

KIND = "html"
#: the PDF table's family of an HTML page's processing (``html_status``, ``html_meta``)
FAMILY = "html0"
#: pages larger than this are not parsed (trafilatura's own limit is 20 MB)
MAX_HTML_BYTES = 16 * 2**20
#: fewer words of main text than this: not an article
MIN_WORDS = 50
#: at most this many sub-resources are listed
MAX_RESOURCES = 500
#: the most reading one page may take, in seconds and bytes of address space: a 16 MB
#: page (PeerJ's article 43 times) takes 2 s and 300 MB, plus about a second for the
#: date parser in a new child; a page built against the parser, minutes and GBs
TIMEOUT = 30.0
MEMORY_LIMIT = 2 * 2**30
#: (CSS selector, attribute, type): the original system's html_resources types
_RESOURCES = (
    ("img[src]", "src", "image"),
    ("script[src]", "src", "script"),
    ("link[rel][href]", "href", "stylesheet"),
    ("source[src]", "src", "media"),
    ("video[src]", "src", "media"),
    ("audio[src]", "src", "media"),
    ("iframe[src]", "src", "iframe"),
)
_SCHEMES = ("http", "https")


class HtmlProcessor:
    """``Processor`` of HTML full text. ``table``: the PDF table its ``html0``
    cells go to; ``parser_factory`` builds the citation parser for plain-text
    ``citation_reference`` strings; without one they are kept unparsed."""

    def __init__(self, catalogue: Catalogue, table: PdfTable, refs: RefsWriter,
                 parser_factory: Callable[[], CitationParser] | None = None, *,
                 min_words: int = MIN_WORDS, max_bytes: int = MAX_HTML_BYTES,
                 max_resources: int = MAX_RESOURCES, timeout: float = TIMEOUT,
                 memory_limit: int = MEMORY_LIMIT,
                 documents: DocumentMatcher | None = None) -> None:
        self.catalogue = catalogue
        self.table = table
        self.documents = documents
        self.refs = refs
        self.parser = ParserHolder(parser_factory)
        self.min_words = min_words
        self.max_bytes = max_bytes
        self.max_resources = max_resources
        self.timeout = timeout
        # shared by the process's HTML processors: one warm child, not one per ingester
        self.work = shared_work(ProcessingStatus.HTML_TOO_COMPLEX, memory_limit=memory_limit)

    def process(self, found: FoundFile) -> Processing:
        if (over := over_limit(found, self.max_bytes, KIND, "HTML")) is not None:
            return over  # never read: there is nothing to keep of it
        processing, meta = self._process(found)
        self.table.put(found.file_meta.sha1hex, {FAMILY: {
            "html_status": processing.status, "html_meta": meta.to_json()}})
        return processing

    def _process(self, found: FoundFile) -> tuple[Processing, HtmlMeta]:
        """The processing, and the ``html_meta`` of the page as far as it was read."""
        url = found.cdx.url
        # the crawl has the page's own metadata when the page is where it started;
        # else what it has is the landing page's, and the page's own is read here
        own_biblio = found.landing_url != url
        try:
            reading = self.work.run(
                read_page, str(found.path), url, self.min_words, self.max_resources,
                own_biblio, timeout=self.timeout, page=url)
        except RecordError as e:
            return (Processing(kind=KIND, status=e.status, error=str(e)),
                    HtmlMeta(biblio=found.biblio))
        text = (reading.extracted or {}).get("text") or ""
        words = len(text.split())
        # a page without metadata of its own keeps the landing page's, as the
        # original's result (and so its html_meta row) did
        biblio = reading.biblio or found.biblio
        if words < self.min_words:
            # the original stored no word count rather than 0 (``or None``)
            return (Processing(kind=KIND, status=ProcessingStatus.NO_MAIN_TEXT,
                               word_count=words,
                               error=f"{words} words of main text, fewer than "
                                     f"{self.min_words}: a landing page, not an article"),
                    HtmlMeta(word_count=words or None, biblio=biblio))
        meta = HtmlMeta(scope=SCOPE_ARTICLE_FULLTEXT, word_count=words, biblio=biblio,
                        resources=[HtmlResource(url=r["url"], resource_type=r["type"])
                                   for r in reading.resources])
        metadata = html_metadata(reading.extracted or {}, words)
        refs = refs_from_meta(found.references, self.parser.get()) if found.references else []
        try:
            entry = self.catalogue.add_file(
                found.path, kind="html", sha1=found.file_meta.sha1hex,
                layers=[Layer(Source.HTML, metadata), *found.layers()],
                resources={"text": text.encode("utf-8")})
        except RecordError as e:
            return Processing(kind=KIND, status=e.status, error=str(e)), meta
        written = self.refs.write(entry.uuid, refs, capture_time(found))
        if self.documents is not None:
            sources = [landing_source(found.biblio), metadata_source(Origin.HTML, metadata)]
            self.documents.identify_file(entry.uuid, found.file_meta.sha1hex,
                                         [s for s in sources if s is not None])
            if self.documents.resolve_references(entry.uuid, refs).stored:
                entry = self.catalogue.refresh(entry.uuid)
        return (Processing(kind=KIND, status=ProcessingStatus.SUCCESS, uuid=entry.uuid,
                           resources=list(entry.resources), references=written,
                           word_count=words, html_resources=reading.resources),
                meta)

    def close(self) -> None:
        self.parser.close()


@dataclass(frozen=True)
class PageReading:
    """What the child process read of a page: trafilatura's main text and metadata
    (``extract_main_text``), the sub-resources (``html_resources``; none for a
    page that is no article) and, when asked for, the page's ``html_biblio``."""

    extracted: dict[str, str] | None
    resources: list[dict[str, str]] = field(default_factory=list)
    biblio: HtmlBiblio | None = None


def read_page(path: str, url: str, min_words: int, max_resources: int,
              with_biblio: bool = False) -> PageReading:
    """The processor's reading of the page at ``path``, in its child process: the main
    text and metadata, (for an article: ``min_words`` words or more) the page's
    sub-resources, and with ``with_biblio`` its meta tags as the crawler reads a
    landing page's."""
    page = Path(path).read_bytes()
    extracted = extract_main_text(page, url)
    biblio = page_biblio(page, url) if with_biblio else None
    if len(((extracted or {}).get("text") or "").split()) < min_words:
        return PageReading(extracted, biblio=biblio)
    return PageReading(extracted, html_resources(page, url, max_resources), biblio)


def page_biblio(page: bytes, url: str) -> HtmlBiblio | None:
    """The page's ``html_biblio``, read as ``web.html.landing`` reads a landing
    page's (its charset, its ``<base href>``); None when it has no metadata but its
    ``<title>``: the original read meta tags only and, finding none on the full
    text, kept the landing page's, which says more than a full-text page's title."""
    _, _, _, meta, biblio = read_meta(page, url)
    if biblio is not None and biblio.model_fields_set <= {"title"} \
            and not any(name in meta for name in FIELDS["title"]):
        return None
    return biblio


def extract_main_text(page: bytes, url: str | None = None) -> dict[str, str] | None:
    """trafilatura's main text and metadata (``text``, ``title``, ``author``,
    ``date``, ``sitename``, ``hostname``, ``license``, ``language``, …: its string
    fields), None when it finds nothing. Comments are left out, tables kept."""
    try:
        doc = trafilatura.bare_extraction(page, url=url, with_metadata=True,
                                          include_comments=False, include_tables=True)
    except (ValueError, TypeError, AttributeError):  # markup lxml cannot make a tree of
        return None
    if doc is None:
        return None
    fields = doc.as_dict() if hasattr(doc, "as_dict") else dict(doc)
    # the strings only: the tree (``body``) does not leave the child process
    return {key: value for key, value in fields.items() if isinstance(value, str)}


def html_metadata(extracted: dict[str, Any], words: int) -> CatalogueMetadata:
    """Catalogue metadata (Crossref's field names) from trafilatura's; its own
    fields are kept under ``html``."""
    md: CatalogueMetadata = {}
    if title := _str(extracted.get("title")):
        md["title"] = [title]
    if author := _str(extracted.get("author")):
        md["author"] = [{"name": n.strip()} for n in author.split(";") if n.strip()]
    if date := _str(extracted.get("date")):
        m = re.match(r"(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?", date)
        if m:
            md["issued"] = {"date-parts": [[int(p) for p in m.groups() if p]]}
    if language := _str(extracted.get("language")):
        md["language"] = language.lower()
    account: HtmlAccount = {}
    for key in _HTML_FIELDS:
        if value := _str(extracted.get(key)):
            account[key] = value
    account["word_count"] = words
    md["html"] = account
    # the site's name as the container (below a landing page's journal title)
    site = account.get("sitename")
    if site and site != account.get("hostname"):
        md["container-title"] = [site]
    return md


#: trafilatura's fields kept under ``html``, in this order
_HTML_FIELDS: tuple[Literal["title", "author", "date", "sitename", "hostname", "url", "license",
                            "language", "description", "pagetype"], ...] = (
    "title", "author", "date", "sitename", "hostname", "url", "license", "language",
    "description", "pagetype")


def _str(value: Any) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def html_resources(page: bytes, url: str, limit: int = MAX_RESOURCES) -> list[dict[str, str]]:
    """The page's sub-resources as ``{"url", "type"}``: absolute http(s) URLs
    (resolved against ``<base href>`` or the page's URL), each once, in page
    order, at most ``limit``. ``link`` counts only as a stylesheet."""
    tree = LexborHTMLParser(page)
    base = url
    base_node = tree.css_first("base[href]")
    if base_node is not None and (href := base_node.attributes.get("href")):
        base = urllib.parse.urljoin(url, href.strip())
    found: list[dict[str, str]] = []
    seen: set[str] = set()
    for selector, attr, kind in _RESOURCES:
        for node in tree.css(selector):
            if kind == "stylesheet" and "stylesheet" not in (
                    node.attributes.get("rel") or "").lower().split():
                continue
            raw = (node.attributes.get(attr) or "").strip()
            absolute = _absolute(base, raw)
            if absolute is None or absolute in seen:
                continue
            seen.add(absolute)
            found.append({"url": absolute, "type": kind})
            if len(found) >= limit:
                return found
    return found


def _absolute(base: str, raw: str) -> str | None:
    if not raw or raw.startswith("#"):
        return None
    try:
        absolute = urllib.parse.urljoin(base, raw)
        parts = urllib.parse.urlsplit(absolute)
    except ValueError:  # a malformed URL (an unbalanced IPv6 bracket, say)
        return None
    if parts.scheme.lower() not in _SCHEMES or not parts.netloc:
        return None
    return urllib.parse.urlunsplit(parts._replace(fragment=""))
