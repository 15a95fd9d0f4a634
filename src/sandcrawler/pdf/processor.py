"""Processing one PDF on disk: extraction in the sandbox, GROBID full text,
the resource store and catalogue, identification against the catalog and the
references resolved (when there is a catalog: ``match.document``), and the PDF
table's cells.

Shared by ``sandcrawler process`` (file records, ``pdf/worker.py``) and file
ingest (a PDF the crawler found, ``ingest/pdf.py``), so a PDF is processed the
same way whichever way it arrived.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sandcrawler.core.errors import RecordError
from sandcrawler.docparse.assembly.tei import TeiOptions, extraction_tei
from sandcrawler.grobid.client import GrobidClient
from sandcrawler.match.document import (
    FAMILY,
    DocumentMatcher,
    Identification,
    Origin,
    ResolvedReferences,
    SourceBiblio,
    grobid_source,
    landing_source,
    pdf_sources,
)
from sandcrawler.pdf.extractor import EXTRACT_FAMILY, Extractor, extraction_cells
from sandcrawler.pdf.fulltext import (
    Fulltext,
    FulltextOutcome,
    Quality,
    cascade_fulltext,
    grobid_fulltext,
    not_run,
)
from sandcrawler.pdf.info import PdfExtract, extract_pdf
from sandcrawler.process.sandbox import Sandbox, SandboxError
from sandcrawler.records.capture import CdxRecord
from sandcrawler.records.catalogue_metadata import CrossrefAuthor
from sandcrawler.records.extraction import USABLE, Extraction, ExtractRequest
from sandcrawler.records.files import FileMeta
from sandcrawler.records.html_biblio import HtmlBiblio
from sandcrawler.records.refs import BiblioJson, biblio_json
from sandcrawler.records.statuses import FulltextStatus, PdfStatus, SandboxStatus
from sandcrawler.storage.catalogue import Catalogue
from sandcrawler.storage.pdftable import PdfTable
from sandcrawler.storage.precedence import Layer, Source

#: extraction statuses that still give a usable document (stored and catalogued)
STORED = frozenset({PdfStatus.SUCCESS, PdfStatus.EMPTY_PAGE0, PdfStatus.TEXT_TOO_LARGE})
#: the cascade's stored TEI has what the original system always asks GROBID
#: for: the raw reference strings and affiliations, and sentences (a citation's
#: context is its sentence)
STORED_TEI = TeiOptions(raw_citations=True, raw_affiliations=True, segment_sentences=True)


@dataclass(slots=True)
class StoredPdf:
    """What storing a processed PDF did: the document (for a usable PDF), its
    resources, GROBID's status and quality, and the TEI it returned."""

    uuid: str | None = None
    resources: list[str] = field(default_factory=list)
    grobid_status: FulltextOutcome | None = None
    grobid_quality: Quality | None = None
    tei: str | None = None
    #: the document's references: GROBID's (``tei_references``), else the page's
    references: list[BiblioJson] = field(default_factory=list)
    #: what the document is (``match0``), when there is a catalog to match against
    identification: Identification | None = None
    resolved: ResolvedReferences | None = None
    #: the embedded extraction cascade's (``extract0``), when it ran
    extraction: Extraction | None = None


class PdfProcessor:
    """One PDF on disk through extraction, GROBID, the cascade, the store, the
    catalogue and the PDF table.

    - ``catalogue``, ``table``: where documents and their PDF facts are recorded.
    - ``timeout``, ``memory_limit``, ``extract_options``: the sandboxed PDFium
      extraction's limits and options (``pdf.info.extract_pdf``).
    - ``grobid``, ``grobid_options``, ``grobid_max_bytes``: the GROBID client (None:
      no GROBID), its form fields, and the largest file sent to it.
    - ``extractor``: the embedded cascade (``extract.enabled``); ``documents``: the
      catalog matcher (None: no catalog); ``tei_references``: reads GROBID's TEI
      references, given by the composition root.
    """

    def __init__(
        self,
        catalogue: Catalogue,
        table: PdfTable,
        *,
        timeout: float = 120.0,
        memory_limit: int | None = 2 * 1024**3,
        extract_options: dict[str, Any] | None = None,
        grobid: GrobidClient | None = None,
        grobid_options: list[tuple[str, str]] | None = None,
        grobid_max_bytes: int = 256 * 2**20,
        documents: DocumentMatcher | None = None,
        tei_references: Callable[[str], list[BiblioJson]] | None = None,
        extractor: Extractor | None = None,
    ) -> None:
        self.catalogue = catalogue
        #: the embedded extraction cascade (``extract.enabled``), beside GROBID
        self.extractor = extractor
        #: identifies documents and resolves their references; None: no catalog
        self.documents = documents
        #: reads the references of GROBID's TEI (``refs.reading.refs_from_tei``,
        #: given by the composition root: refs is this package's independent sibling)
        self.tei_references = tei_references
        self.table = table
        self.grobid = grobid
        self.grobid_options = grobid_options or []
        self.grobid_max_bytes = grobid_max_bytes
        self.timeout = timeout
        #: thumbnails, listing_width, max_text_chars for extract_pdf
        self.extract_options = extract_options or {}
        self.sandbox = Sandbox(memory_limit=memory_limit)

    def extract(self, path: str, meta: FileMeta) -> PdfExtract:
        """PDFs in the sandbox (a timeout or crash is a status); other files not-pdf."""
        if meta.mimetype != "application/pdf":
            return PdfExtract(PdfStatus.NOT_PDF, error=f"the file is {meta.mimetype}")
        try:
            return self.sandbox.call(extract_pdf, path, timeout=self.timeout,
                                     **self.extract_options)
        except SandboxError as e:
            return PdfExtract(SandboxStatus(e.status), error=str(e))

    def store(self, path: str, meta: FileMeta, out: PdfExtract, *,
              cdx: CdxRecord | None = None, layers: Sequence[Layer] = (),
              page: HtmlBiblio | None = None,
              page_references: Sequence[BiblioJson] = ()) -> StoredPdf:
        """Write the file's cells (and, for a usable document, its resources and
        catalogue row). The catalogue metadata is ``layers`` (what the caller
        knows: the request's identifiers, a landing page's meta tags) and what
        GROBID and the PDF itself say, merged by precedence: extraction fills
        what is missing and never replaces what an authoritative source gave.

        With a catalog to match against (``documents``), the document is
        identified from GROBID's header, the PDF's own metadata, a DOI on its
        first page and the landing page's ``page`` biblio (``match0``, and the
        catalogue's DOI), and its references (GROBID's, else
        ``page_references``: the page's ``citation_reference`` tags, parsed)
        are resolved."""
        stored = StoredPdf()
        cells: dict[str, dict[str, Any]] = {
            "file": {"size": meta.size_bytes, "mime": meta.mimetype},
            "pdf0": {"pdf_status": out.status, "pdf_meta": out.to_json()},
        }
        if cdx is not None:
            cells["file"]["cdx"] = cdx.cell()
        if out.text is not None:
            cells["pdf0"]["text"] = out.text
        if out.status in STORED:
            fulltext = self._fulltext(path, meta)
            cells["grobid0"] = fulltext.cells()
            secondary = dict(out.thumbnails)
            if fulltext.tei is not None:
                secondary["grobid-tei"] = fulltext.tei.encode("utf-8")
            # without GROBID, the cascade reads the body too and its TEI stands in
            # for GROBID's in the grobid0 family and the grobid-tei resource
            full = fulltext.status == FulltextStatus.NOT_RUN
            extraction = self.extractor.extract(path, ExtractRequest(full=full)) \
                if self.extractor is not None else None
            if extraction is not None:
                cells[EXTRACT_FAMILY] = extraction_cells(extraction)
                if extraction.status in USABLE:
                    tei = extraction_tei(extraction, STORED_TEI)
                    secondary["extract-tei"] = tei
                    if full and extraction.body is not None:
                        # stored as GROBID's would be; what GROBID said (not-run) is
                        # still what processing reports, and the header and the
                        # references stay the extract source's
                        cells["grobid0"] = cascade_fulltext(tei).cells()
                        secondary["grobid-tei"] = tei
            entry = self.catalogue.add_file(
                path, kind="pdf", sha1=meta.sha1hex, resources=secondary,
                layers=[*layers, *_extracted(out, fulltext, extraction)],
            )
            # the references: GROBID's, else the cascade's, else the landing page's
            stored = StoredPdf(uuid=entry.uuid, resources=list(entry.resources),
                               grobid_status=fulltext.status,
                               grobid_quality=fulltext.quality, tei=fulltext.tei,
                               references=self._references(fulltext)
                               or _extracted_references(extraction)
                               or [r.copy() for r in page_references],
                               extraction=extraction)
            if self.documents is not None:
                found = self.documents.identify(entry.uuid,
                                                _sources(out, fulltext, extraction, page))
                if extraction is not None and extraction.status in USABLE:
                    # the cascade's header with the identified work filled in
                    found = self.documents.consolidated(found, extraction.header)
                cells[FAMILY] = found.cells()
                stored.identification = found
                stored.resolved = self.documents.resolve_references(entry.uuid,
                                                                    stored.references)
                if stored.resolved.stored:  # the references resource, listed
                    stored.resources = list(self.catalogue.refresh(entry.uuid).resources)
        # The table last: its pdf0 row is what marks the file as done.
        self.table.put(meta.sha1hex, cells)
        return stored

    def _references(self, fulltext: Fulltext) -> list[BiblioJson]:
        if self.tei_references is None or fulltext.tei is None \
                or fulltext.status != FulltextStatus.SUCCESS:
            return []
        try:
            return self.tei_references(fulltext.tei)
        except RecordError:  # TEI GROBID said was whole but that does not parse: none
            return []

    def _fulltext(self, path: str, meta: FileMeta) -> Fulltext:
        if self.grobid is None:
            return not_run("no GROBID URL configured")
        if meta.size_bytes > self.grobid_max_bytes:
            limit = self.grobid_max_bytes / 2**20
            return Fulltext(FulltextStatus.TOO_LARGE,
                            error=f"over the {limit:g} MB limit for GROBID")
        with open(path, "rb") as f:
            pdf = f.read()
        return grobid_fulltext(self.grobid, pdf, self.grobid_options)

    def close(self) -> None:
        # The catalogue, table and GROBID client are shared services, closed by
        # whoever built them; the sandboxes are this processor's.
        self.sandbox.close()
        if self.extractor is not None:
            self.extractor.close()

def _sources(out: PdfExtract, fulltext: Fulltext, extraction: Extraction | None,
             page: HtmlBiblio | None) -> list[SourceBiblio]:
    """The document's metadata sources for identification (``match.document``)."""
    header = fulltext.tei_json.get("header") if fulltext.tei_json else None
    found = [landing_source(page),
             grobid_source(header if isinstance(header, dict) else None)]
    if extraction is not None and extraction.status in USABLE:
        found.append(grobid_source(extraction.header_json(), Origin.EXTRACT))
    return [s for s in found if s is not None] + pdf_sources(out.info, out.xmp, out.text)


def _extracted_references(extraction: Extraction | None) -> list[BiblioJson]:
    if extraction is None or extraction.status not in USABLE:
        return []
    return [biblio_json(ref) for ref in extraction.references]


def _header_layer(source: Source, title: str | None, authors: list[dict[str, Any]],
                  abstract: str | None, **more: Any) -> Layer | None:
    """A header as catalogue metadata: Crossref-shaped JSON (storage.precedence)."""
    meta: dict[str, Any] = {}
    if title:
        meta["title"] = [title]
    if authors:
        meta["author"] = [_author(a) for a in authors]
    if abstract:
        meta["abstract"] = abstract
    meta |= {k: v for k, v in more.items() if v}
    return Layer(source, meta) if meta else None


def _author(a: Mapping[str, Any]) -> CrossrefAuthor:
    """A biblio's author in Crossref's names, its affiliation as Crossref writes
    one (``[{"name": ...}]``: department, laboratory, institution, place)."""
    out: CrossrefAuthor = {"given": a.get("given_name"), "family": a.get("surname"),
                           "name": a.get("full_name")}
    aff = a.get("affiliation")
    if isinstance(aff, dict):
        address = aff.get("address")
        if not isinstance(address, dict):
            address = {}
        parts = [aff.get("department"), aff.get("laboratory"), aff.get("institution"),
                 address.get("settlement"), address.get("country")]
        if name := ", ".join(str(p) for p in parts if p):
            out["affiliation"] = [{"name": name}]
    return out


def _extracted(out: PdfExtract, fulltext: Fulltext,
               extraction: Extraction | None) -> list[Layer]:
    """What extraction says: GROBID's header when it found a usable one, the
    cascade's, and the PDF's own XMP and document info (below both: its title
    and author fields are often junk, "Microsoft Word - x.doc"), with the
    extraction's record."""
    layers = []
    header = fulltext.metadata if fulltext.quality in ("good", "marginal") else None
    if header and (layer := _header_layer(Source.GROBID, header.title, header.authors,
                                          header.abstract, DOI=header.doi)):
        layers.append(layer)
    if extraction is not None and extraction.status in USABLE and extraction.header:
        h = extraction.header
        pages = h.pages or (f"{h.first_page}-{h.last_page}" if h.first_page and h.last_page
                            else h.first_page)
        issued = {"date-parts": [[int(p) for p in h.date.split("-")]]} if h.date else None
        layer = _header_layer(
            Source.EXTRACT, h.title, h.to_dict().get("authors") or [], extraction.abstract,
            DOI=h.doi, volume=h.volume, issue=h.issue, page=pages,
            **{"container-title": [h.journal] if h.journal else None, "issued": issued,
               "subject": extraction.keywords or None})
        if layer is not None:
            layers.append(layer)
    own: dict[str, Any] = {"pdf": out.to_json()}
    if title := out.xmp.get("title") or out.info.get("title"):
        own["title"] = [title]
    if author := out.xmp.get("creator") or out.info.get("author"):
        own["pdf_author"] = author
    if out.xmp.get("doi"):
        own["DOI"] = out.xmp["doi"]
    layers.append(Layer(Source.PDF, own))
    return layers
