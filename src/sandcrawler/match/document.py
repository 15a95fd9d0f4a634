"""A document identified against the catalog, and its references resolved.

Identification: each source of the document's metadata (JATS, landing page,
GROBID, the extraction cascade, HTML, the first page's DOI, the PDF's own
info) is matched on its own, and the most trusted matched source names the
work; ``sources-disagree`` and ``doi-conflict`` are outcomes of their own.
References: ``DocumentMatcher.resolve_references`` writes the document's
``citation`` rows and its ``*.references.tei.xml`` resource (docs/matching-documents.md,
"The sources", "Combining the answers" and "References").
"""

from __future__ import annotations

import copy
import re
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Literal

from grobid_tei_xml.types import GrobidBiblio
from sqlalchemy import Engine

from sandcrawler.citations.tei_write import bibl_struct, sub, tei_root
from sandcrawler.core.errors import RecordError
from sandcrawler.core.identifiers import normalize_doi
from sandcrawler.db.engine import begin
from sandcrawler.db.queries import crossref_with_refs_row
from sandcrawler.match.consolidate import Consolidation, merge
from sandcrawler.match.matcher import Matcher
from sandcrawler.match.resolve_worker import CitationRows
from sandcrawler.match.resolve_worker import write_citations as write_citation_rows
from sandcrawler.match.resolving import CitationRow, citing_document, resolve
from sandcrawler.records.html_biblio import HtmlBiblio
from sandcrawler.records.match import MatchResult, RunnerUp
from sandcrawler.records.refs import AuthorJson, BiblioJson, biblio_json
from sandcrawler.records.statuses import DocumentMatchStatus, MatchStatus, Status
from sandcrawler.storage.catalogue import Catalogue
from sandcrawler.storage.pdftable import PdfTable
from sandcrawler.storage.precedence import AUTHORITATIVE, IDENTIFIER_FIELDS, Source, source_of

#: the PDF table's family of identification
FAMILY = "match0"


class Origin(StrEnum):
    """Where a document's biblio came from, most trusted first."""

    JATS = "jats"
    LANDING_PAGE = "landing_page"
    GROBID = "grobid"
    EXTRACT = "extract"
    HTML = "html"
    FIRST_PAGE = "first_page"
    PDF = "pdf"

    @property
    def rank(self) -> int:
        return _ORIGIN_RANK[self]


_ORIGIN_RANK = {origin: i for i, origin in enumerate(Origin)}
#: the sources that speak for the file itself (against the page that links to it)
FILE_ORIGINS = frozenset({Origin.JATS, Origin.GROBID, Origin.EXTRACT, Origin.HTML,
                          Origin.FIRST_PAGE, Origin.PDF})
#: without a match, the status that tells an operator most, first
_UNMATCHED = (MatchStatus.AMBIGUOUS, MatchStatus.OTHER_VERSION, MatchStatus.WEAK,
              MatchStatus.NO_MATCH, MatchStatus.TOO_LITTLE, MatchStatus.EMPTY_CATALOG,
              MatchStatus.BAD_BIBLIO)

DocumentStatus = MatchStatus | DocumentMatchStatus


# -- the sources' biblios ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SourceBiblio:
    """One source's biblio (``refs_json`` shape). ``printed_doi``: the DOI this
    source is about (a DOI printed on the page): its answer counts only when the
    matcher verified that DOI, since the page's text alone is no identification."""

    origin: Origin
    biblio: dict[str, Any]
    printed_doi: str | None = None


def _clean(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    text = " ".join(value.split())
    return text or None


def _doi(value: Any) -> str | None:
    try:
        return normalize_doi(value) if value else None
    except RecordError:
        return None


def grobid_source(header: Mapping[str, Any] | None,
                  origin: Origin = Origin.GROBID) -> SourceBiblio | None:
    """GROBID's header (``GrobidBiblio.to_dict()``, the ``tei_json`` ``header``),
    or the extraction cascade's (``origin`` ``extract``: the same shape)."""
    if not header:
        return None
    biblio = {k: v for k, v in header.items() if k in _BIBLIO_KEYS and v}
    if not biblio.get("title") and not biblio.get("authors"):
        return None
    return SourceBiblio(origin, biblio)


_BIBLIO_KEYS = frozenset({"title", "authors", "date", "journal", "journal_abbrev",
                          "book_title", "volume", "issue", "pages", "first_page", "doi",
                          "pmid", "pmcid", "arxiv_id"})


def landing_source(page: HtmlBiblio | None) -> SourceBiblio | None:
    """A landing page's ``html_biblio``."""
    if page is None:
        return None
    biblio: dict[str, Any] = {}
    for key, value in (("title", page.title), ("date", page.release_date),
                       ("journal", page.container_name),
                       ("journal_abbrev", page.container_abbrev), ("volume", page.volume),
                       ("issue", page.issue), ("first_page", page.first_page),
                       ("doi", page.doi), ("pmid", page.pmid), ("pmcid", page.pmcid),
                       ("arxiv_id", page.arxiv_id)):
        if (text := _clean(value)) is not None:
            biblio[key] = text
    names = [n for n in (_clean(n) for n in page.contrib_raw_names or ()) if n]
    if names:
        biblio["authors"] = [{"full_name": n} for n in names]
    if not biblio.get("title") and not biblio.get("doi"):
        return None
    return SourceBiblio(Origin.LANDING_PAGE, biblio)


def crossref_shaped_biblio(md: Mapping[str, Any]) -> BiblioJson:
    """Catalogue metadata in Crossref's field names (JATS front matter, for one)
    as a biblio."""
    biblio: BiblioJson = {}
    titles = md.get("title")
    title = titles[0] if isinstance(titles, list) and titles else titles
    if (text := _clean(title)) is not None:
        biblio["title"] = text
    authors: list[AuthorJson] = []
    for a in md.get("author") or ():
        if not isinstance(a, Mapping):
            continue
        family, given, name = _clean(a.get("family")), _clean(a.get("given")), _clean(a.get("name"))
        full = name or " ".join(p for p in (given, family) if p) or None
        if family or full:
            author: AuthorJson = {}
            if family:
                author["surname"] = family
            if given:
                author["given_name"] = given
            if full:
                author["full_name"] = full
            authors.append(author)
    if authors:
        biblio["authors"] = authors
    issued = md.get("issued")
    parts = issued.get("date-parts") if isinstance(issued, Mapping) else None
    if isinstance(parts, list) and parts and isinstance(parts[0], list) and parts[0]:
        biblio["date"] = "-".join(f"{int(p):02d}" if i else str(int(p))
                                  for i, p in enumerate(parts[0]) if isinstance(p, int))
    containers = md.get("container-title")
    container = containers[0] if isinstance(containers, list) and containers else containers
    if (text := _clean(container)) is not None:
        biblio["journal"] = text
    locators: tuple[Literal["volume", "issue"], ...] = ("volume", "issue")
    for key in locators:
        if (text := _clean(md.get(key))) is not None:
            biblio[key] = text
    if (page := _clean(md.get("page"))) is not None:
        biblio["pages"] = page
    schemes: tuple[Literal["doi", "pmid", "pmcid"], ...] = ("doi", "pmid", "pmcid")
    for scheme in schemes:
        names = IDENTIFIER_FIELDS[scheme]
        value = next((md[n] for n in names if isinstance(md.get(n), str | int)), None)
        if value is not None:
            biblio[scheme] = str(value)
    return biblio


def metadata_source(origin: Origin, metadata: Mapping[str, Any] | None) -> SourceBiblio | None:
    """Catalogue metadata one source gave (Crossref's field names): a JATS
    article's front matter (``ingest.jats.jats_metadata``), an HTML page's
    reading (``ingest.html_fulltext.html_metadata``)."""
    biblio = crossref_shaped_biblio(metadata or {})
    if not biblio.get("title") and not biblio.get("doi"):
        return None
    return SourceBiblio(origin, dict(biblio))


#: a DOI as printed: ``10.<registrant>/<suffix>`` up to white space or markup
_PRINTED_DOI = re.compile(r"\b10\.\d{4,9}/[^\s\"'<>]+", re.IGNORECASE)
_TRAILING = ".,;:'\"\u201d\u2019\u00bb"
#: the first page's text handed to the matcher with a printed DOI (the matcher
#: reads 4,000 characters of a reference string; the title is near the top)
FIRST_PAGE_CHARS = 4000


def printed_dois(text: str, limit: int = 3) -> list[str]:
    """The DOIs printed in ``text`` (a page), normalised, each once, in order:
    at most ``limit`` (the article's own is near the top; the rest are citations)."""
    found: list[str] = []
    for m in _PRINTED_DOI.finditer(text):
        raw = m.group(0)
        while raw and (raw[-1] in _TRAILING or (raw[-1] in ")]}" and _unbalanced(raw))):
            raw = raw[:-1]
        doi = _doi(raw)
        if doi and doi not in found:
            found.append(doi)
            if len(found) >= limit:
                break
    return found


def _unbalanced(text: str) -> bool:
    close = text[-1]
    opening = {")": "(", "]": "[", "}": "{"}[close]
    return text.count(close) > text.count(opening)


#: a PDF document-info title that is a file name or a tool's placeholder
_JUNK_TITLE = re.compile(
    r"^\s*(?:microsoft\s+(?:word|powerpoint|excel)\b|untitled\b|document\s*\d*\s*$"
    r"|layout\s*\d|slide\s*\d|powerpoint\s+presentation|title\s*$|no\s+title|doi\s*:"
    r"|pii\s*:|10\.\d{4,9}/|https?://|www\.|[a-z]:\\)"
    r"|\.(?:docx?|pdf|tex|dvi|e?ps|indd|qxd|qxp|rtf|odt|wpd|p65|pmd|sxw|fm|xml|html?)\b",
    re.IGNORECASE)
_LETTERS = re.compile(r"[^\W\d_]{2,}")
#: document-info authors that are an account, not a person
_JUNK_AUTHOR = re.compile(r"^(?:admin(?:istrator)?|user|owner|author|unknown|guest|hp|dell"
                          r"|lenovo|staff|editor|office|pc|default)$", re.IGNORECASE)


def junk_title(title: str) -> bool:
    """A PDF's own title that says nothing of the work: a file name ("Microsoft
    Word - x.doc"), a placeholder ("Untitled"), an identifier, one word."""
    return bool(_JUNK_TITLE.search(title)) or len(_LETTERS.findall(title)) < 2


def _info_authors(value: str) -> list[dict[str, str]]:
    names = re.split(r"\s*(?:;|,(?=\s*\S+\s+\S)|\band\b|&)\s*", value)
    return [{"full_name": n} for n in (" ".join(x.split()) for x in names)
            if n and " " in n and not _JUNK_AUTHOR.match(n)]


def pdf_sources(info: Mapping[str, str], xmp: Mapping[str, str],
                text: str | None) -> list[SourceBiblio]:
    """What the PDF says of itself: its document info and XMP (title, author,
    DOI), and each DOI printed on its first page. A DOI is checked against the
    first page's text, which holds the title and authors as printed."""
    page = (text or "").split("\f", 1)[0][:FIRST_PAGE_CHARS * 2]
    out: list[SourceBiblio] = []
    for doi in printed_dois(page):
        out.append(SourceBiblio(Origin.FIRST_PAGE,
                                {"doi": doi, "unstructured": page[:FIRST_PAGE_CHARS]},
                                printed_doi=doi))
    title = _clean(xmp.get("title")) or _clean(info.get("title"))
    own: dict[str, Any] = {}
    if title and not junk_title(title):
        own["title"] = title
        author = _clean(xmp.get("creator")) or _clean(info.get("author"))
        if author and (authors := _info_authors(author)):
            own["authors"] = authors
    xmp_doi = _doi(xmp.get("doi"))
    if xmp_doi:
        own["doi"] = xmp_doi
    if own.get("title"):
        out.append(SourceBiblio(Origin.PDF, own))
    elif xmp_doi and page.strip() and all(s.printed_doi != xmp_doi for s in out):
        # a DOI alone cannot be checked: against the first page, like a printed one
        out.append(SourceBiblio(Origin.PDF, {"doi": xmp_doi,
                                             "unstructured": page[:FIRST_PAGE_CHARS]},
                                printed_doi=xmp_doi))
    return out


# -- identification ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SourceAnswer:
    origin: Origin
    result: MatchResult
    #: the DOI the source's biblio carried (normalised), if any
    carried_doi: str | None = None
    #: counted in the identification (a printed DOI's answer only when it verified it)
    used: bool = True
    #: the DOI a printed-DOI source is about
    printed_doi: str | None = None

    @property
    def matched_doi(self) -> str | None:
        return self.result.doi if self.used and self.result.matched else None

    def refutes(self, doi: str) -> bool:
        """The source carried ``doi`` and the matcher found it names another work."""
        return self.carried_doi == doi and "doi:wrong" in self.result.reasons

    def to_json(self) -> dict[str, Any]:
        out = self.result.to_json()
        del out["id"]
        out = {"source": str(self.origin), **out}
        if self.printed_doi is not None:
            out["printed_doi"] = self.printed_doi
        if not self.used:
            out["used"] = False
        return out


@dataclass(frozen=True, slots=True)
class OtherSourceWork:
    """The runner-up when two sources name different works: the other source's."""

    doi: str
    score: float
    source: Origin
    status: Status

    def to_json(self) -> dict[str, Any]:
        return {"doi": self.doi, "score": self.score, "source": str(self.source),
                "status": str(self.status)}


@dataclass(frozen=True, slots=True)
class Identification:
    """What a document is, as its sources say: the ``match0`` family."""

    status: DocumentStatus
    #: the work identified (``exact``/``strong`` and no conflict), lower-case
    doi: str | None = None
    score: float = 0.0
    #: whose answer it is
    origin: Origin | None = None
    reasons: tuple[str, ...] = ()
    answers: tuple[SourceAnswer, ...] = ()
    #: the second-best work: another source's, or the best answer's own runner-up
    runner_up: OtherSourceWork | RunnerUp | None = None
    #: ``doi-conflict``: the DOI the document had, and the one matched
    document_doi: str | None = None
    matched_doi: str | None = None
    #: ``sources-disagree``: the page's work and the file's
    page_doi: str | None = None
    file_doi: str | None = None
    #: the identified DOI takes the place of an extraction's DOI the matcher refuted
    replaces: str | None = None
    #: the extracted header with the identified work's metadata filled in where the
    #: page said nothing (what the page said kept), and what that merge did
    header: BiblioJson | None = None
    consolidation: Consolidation | None = None

    @property
    def identified(self) -> bool:
        return self.doi is not None

    def minfo(self) -> dict[str, Any]:
        out: dict[str, Any] = {"source": str(self.origin) if self.origin else None,
                               "score": self.score, "reasons": list(self.reasons),
                               "sources": [a.to_json() for a in self.answers],
                               "runner_up": self.runner_up.to_json() if self.runner_up else None}
        for key in ("document_doi", "matched_doi", "page_doi", "file_doi", "replaces"):
            if (value := getattr(self, key)) is not None:
                out[key] = value
        if self.header is not None and self.consolidation is not None:
            out["header"] = self.header
            out["consolidation"] = self.consolidation.to_json()
        return out

    def cells(self) -> dict[str, Any]:
        """The ``match0`` cells: ``mstatus``, ``doi`` (only when identified), ``minfo``."""
        cells: dict[str, Any] = {"mstatus": str(self.status), "minfo": self.minfo()}
        if self.doi is not None:
            cells["doi"] = self.doi
        return cells


def match_sources(matcher: Matcher, sources: Iterable[SourceBiblio]) -> list[SourceAnswer]:
    """Each source matched on its own."""
    answers = []
    for source in sources:
        try:
            result = matcher.match(source.biblio)
        except RecordError as e:  # a biblio the matcher refuses: its status, the rest go on
            result = MatchResult(e.status, error=str(e))
        used = source.printed_doi is None or result.doi == source.printed_doi
        answers.append(SourceAnswer(source.origin, result, _doi(source.biblio.get("doi")), used,
                                    source.printed_doi))
    return answers


def identify(matcher: Matcher, sources: Iterable[SourceBiblio], *,
             document_doi: str | None = None, replaceable: bool = False) -> Identification:
    """The document's identification from its sources. ``document_doi``: the DOI
    it already has; ``replaceable``: that DOI is an extraction's (GROBID, the
    PDF's), which an answer refuting it lets the identified DOI replace."""
    return combine(match_sources(matcher, sources), document_doi=document_doi,
                   replaceable=replaceable)


def _exact_first(answer: SourceAnswer) -> tuple[int, int, float]:
    return (0 if answer.result.status == MatchStatus.EXACT else 1, answer.origin.rank,
            -answer.result.score)


def _by_origin(answer: SourceAnswer) -> tuple[int, int, float]:
    return (answer.origin.rank, 0 if answer.result.status == MatchStatus.EXACT else 1,
            -answer.result.score)


def _other_source(answer: SourceAnswer, doi: str) -> OtherSourceWork:
    return OtherSourceWork(doi, answer.result.score, answer.origin, answer.result.status)


def combine(answers: Sequence[SourceAnswer], *, document_doi: str | None = None,
            replaceable: bool = False) -> Identification:
    answers = tuple(answers)
    # the work: the most trusted source's; the answer reported: the best of those
    # that name it (an exact match from any of them)
    matched = sorted((a for a in answers if a.matched_doi), key=_by_origin)
    if not matched:
        return _unmatched(answers)
    doi = matched[0].matched_doi
    assert doi is not None
    best = min((a for a in matched if a.matched_doi == doi), key=_exact_first)
    page = [a for a in matched if a.origin == Origin.LANDING_PAGE]
    file = [a for a in matched if a.origin in FILE_ORIGINS]
    # the PDF's own title alone never contradicts the page: it is too often
    # another document's (a template's, the journal's), so it only agrees
    if page and any(a.origin != Origin.PDF for a in file) \
            and all(a.matched_doi != page[0].matched_doi for a in file):
        file = [a for a in file if a.origin != Origin.PDF] or file
        return Identification(DocumentMatchStatus.SOURCES_DISAGREE, score=best.result.score,
                              origin=best.origin, reasons=best.result.reasons, answers=answers,
                              page_doi=page[0].matched_doi, file_doi=file[0].matched_doi,
                              runner_up=_other_source(file[0], file[0].matched_doi or ""))
    other = next((a for a in matched[1:] if a.matched_doi != doi), None)
    runner: OtherSourceWork | RunnerUp | None = best.result.runner_up
    if other is not None:
        runner = _other_source(other, other.matched_doi or "")
    status = best.result.status
    found = Identification(status if isinstance(status, MatchStatus) else MatchStatus.STRONG,
                           doi=doi, score=best.result.score, origin=best.origin,
                           reasons=best.result.reasons, answers=answers, runner_up=runner)
    if document_doi and document_doi != doi:
        if replaceable and any(a.refutes(document_doi) for a in answers):
            return replace(found, replaces=document_doi)
        return replace(found, status=DocumentMatchStatus.DOI_CONFLICT, doi=None,
                       document_doi=document_doi, matched_doi=doi)
    return found


def _unmatched(answers: tuple[SourceAnswer, ...]) -> Identification:
    if not answers:
        return Identification(MatchStatus.TOO_LITTLE, reasons=("sources:none",))

    def key(a: SourceAnswer) -> tuple[int, int, float]:
        status = a.result.status if a.used else MatchStatus.NO_MATCH
        order = _UNMATCHED.index(status) if status in _UNMATCHED else len(_UNMATCHED)
        return (order, a.origin.rank, -a.result.score)

    best = min(answers, key=key)
    status: Status = best.result.status if best.used else MatchStatus.NO_MATCH
    return Identification(status if isinstance(status, MatchStatus) else MatchStatus.BAD_BIBLIO,
                          score=best.result.score, origin=best.origin,
                          reasons=best.result.reasons, answers=answers,
                          runner_up=best.result.runner_up)


# -- references ----------------------------------------------------------------------------

def _bibl_struct(index: int, ref: Mapping[str, Any], result: MatchResult) -> ET.Element:
    struct = bibl_struct(index, ref, own_doi=False)
    # the work it matched, then the reference's own DOI as parsed when another,
    # first among the identifiers (right after monogr)
    at = next(i for i, el in enumerate(struct) if el.tag == "monogr") + 1
    cited = _doi(ref.get("doi"))
    for doi, extra in ((result.doi, {}), (cited if cited != result.doi else None,
                                          {"subtype": "cited"})):
        if doi:
            idno = ET.Element("idno", {"type": "DOI", **extra})
            idno.text = doi
            struct.insert(at, idno)
            at += 1
    note = sub(struct, "note", " ".join(result.reasons) or None, type="match",
               subtype=str(result.status), n=f"{result.score:g}")
    if result.error:
        note.set("resp", "sandcrawler")
    if result.candidate and result.candidate != result.doi:
        sub(struct, "idno", result.candidate, type="DOI", subtype="candidate")
    if result.runner_up is not None:
        sub(struct, "idno", result.runner_up.doi, type="DOI", subtype="runner-up")
    return struct


def references_tei(doc_uuid: str, refs: Sequence[Mapping[str, Any]],
                   results: Sequence[MatchResult]) -> bytes:
    """The ``*.references.tei.xml`` of a document: its references as parsed
    (the matcher's parse for a reference that was only a string), each with the
    DOI it matched (``idno type="DOI"``) and a ``note type="match"`` (status in
    ``subtype``, score in ``n``, the reasons as its text)."""
    tei = tei_root()
    header = sub(tei, "teiHeader")
    desc = sub(header, "fileDesc")
    sub(sub(desc, "titleStmt"), "title", f"References of document {doc_uuid}, resolved "
                                            "against the catalog")
    sub(sub(desc, "publicationStmt"), "publisher", "sandcrawler")
    sub(sub(desc, "sourceDesc"), "p", "The references of the document's full text "
                                        "(GROBID TEI, JATS or citation_reference tags), "
                                        "each matched against the Crossref catalog.")
    listbibl = sub(sub(sub(sub(tei, "text"), "back"), "div", type="references"), "listBibl")
    for i, (ref, result) in enumerate(zip(refs, results, strict=True)):
        parsed = dict(result.parsed or {})
        merged = {**parsed, **{k: v for k, v in ref.items() if v}} if parsed else dict(ref)
        listbibl.append(_bibl_struct(i, merged, result))
    ET.indent(tei)
    out: bytes = ET.tostring(tei, encoding="utf-8", xml_declaration=True)
    return out


@dataclass(slots=True)
class ResolvedReferences:
    """What resolving a document's references did."""

    count: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    #: whether the ``references`` resource was written
    stored: bool = False

    @property
    def matched(self) -> int:
        return self.statuses[MatchStatus.EXACT] + self.statuses[MatchStatus.STRONG]


def write_citations(engine: Engine, citing: str, rows: Sequence[CitationRow]) -> None:
    """A citing work's rows, replacing its earlier ones (positions past a shorter
    list deleted), as ``match refs`` writes them."""
    with begin(engine) as conn:
        write_citation_rows(conn, [CitationRows(rows=tuple(rows), citing=citing,
                                                count=len(rows))])


# -- the service ---------------------------------------------------------------------------


class DocumentMatcher:
    """Identifies catalogue documents and resolves their references, writing
    ``match0``, the catalogue's DOI, ``citation`` rows and ``*.references.tei.xml``.

    Built by the services only when there is a catalog to match against (the
    crossref table holds works): without one, nothing is written, so no
    document is marked as looked up against nothing."""

    def __init__(self, matcher: Matcher, catalogue: Catalogue, table: PdfTable,
                 engine: Engine) -> None:
        self.matcher = matcher
        self.catalogue = catalogue
        self.table = table
        self.engine = engine

    def document_doi(self, doc_uuid: str) -> tuple[str | None, bool]:
        """The DOI the document has (its metadata's), and whether it is an
        extraction's (GROBID, HTML, the PDF's), which a refuting answer may replace."""
        if not self.catalogue.resources.exists(doc_uuid, "metadata"):
            return None, False
        metadata = self.catalogue.metadata(doc_uuid)
        for name in IDENTIFIER_FIELDS["doi"]:
            if (doi := _doi(metadata.get(name))) is not None:
                return doi, source_of(metadata, name) not in AUTHORITATIVE
        return None, False

    def identify(self, doc_uuid: str, sources: Iterable[SourceBiblio]) -> Identification:
        """Identify the document; an identified DOI it lacked is added to its
        catalogue metadata (as Crossref's: the catalog's record names it). The
        caller writes ``cells()`` to the PDF table (with its other cells)."""
        had, replaceable = self.document_doi(doc_uuid)
        found = identify(self.matcher, sources, document_doi=had, replaceable=replaceable)
        if found.doi is not None and found.doi != had:
            self.catalogue.put_metadata(doc_uuid, {"DOI": found.doi}, source=Source.CROSSREF)
        return found

    def consolidated(self, found: Identification,
                     header: GrobidBiblio | None) -> Identification:
        """``found`` with ``header`` (the extracted one) consolidated with the
        identified work: what the page said kept, the work filling the rest, as
        ``extract --consolidate`` does (match/consolidate.py)."""
        if found.doi is None or header is None:
            return found
        with self.engine.connect() as conn:
            row = crossref_with_refs_row(conn, found.doi)
        if row is None:
            return found
        merged = copy.deepcopy(header)
        done = merge(merged, row["record"], found.doi, keep_read=True)
        return replace(found, header=biblio_json(merged), consolidation=done)

    def identify_file(self, doc_uuid: str, sha1: str,
                      sources: Iterable[SourceBiblio]) -> Identification:
        """``identify``, and the ``match0`` cells written to the file's PDF table row."""
        found = self.identify(doc_uuid, sources)
        self.table.put(sha1, {FAMILY: found.cells()})
        return found

    def resolve_references(self, doc_uuid: str,
                           refs: Sequence[Mapping[str, Any]]) -> ResolvedReferences:
        """Resolve the document's references: its ``citation`` rows (``uuid:``
        citing) and its ``references`` resource. No references: nothing written."""
        if not refs:
            return ResolvedReferences()
        citing = citing_document(doc_uuid)
        rows, results = resolve(self.matcher, citing, refs)
        self.catalogue.resources.put(doc_uuid, "references",
                                     references_tei(doc_uuid, refs, results))
        write_citations(self.engine, citing, rows)
        return ResolvedReferences(len(rows), Counter(str(r.status) for r in rows), stored=True)
