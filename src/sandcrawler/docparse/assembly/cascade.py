"""The extraction cascade on one PDF (docs/extraction.md):
    layout tokens -> segmentation (one label per line: header, body,
    references, ...) -> header (one label per header token) -> names and
    affiliations -> reference segmenter (one label per references token) ->
    the citation parser (each reference string to a biblio); with the full
    text, the body's tokens -> fulltext (sections, paragraphs, callouts,
    figures, tables, formulas) -> figure and table models -> callouts linked

``extract_document`` is what a sandboxed child runs: the models are loaded
once per process (``cascade()``) and every failure of a file becomes its
``Extraction`` status; only a bug raises.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pypdfium2 as pdfium
from grobid_tei_xml.types import GrobidBiblio

from sandcrawler.citations.crf.model import CrfModel
from sandcrawler.config import ExtractSettings
from sandcrawler.core.errors import RecordError
from sandcrawler.core.identifiers import normalize_doi
from sandcrawler.core.mime import sniff_mime
from sandcrawler.core.pdf_bytes import read_xmp
from sandcrawler.docparse.assembly.affiliations import default_model as affiliations_model
from sandcrawler.docparse.assembly.affiliations import parse_affiliations
from sandcrawler.docparse.assembly.body import build_body
from sandcrawler.docparse.assembly.callouts import link_callouts
from sandcrawler.docparse.assembly.header import (
    Header,
    LinkedAffiliation,
    LinkedAuthor,
    add_reference_line,
    build_header,
)
from sandcrawler.docparse.assembly.identifiers import PageIdentifiers, page_identifiers
from sandcrawler.docparse.assembly.locator import running_locator
from sandcrawler.docparse.assembly.names import default_model as names_model
from sandcrawler.docparse.assembly.names import parse_names
from sandcrawler.docparse.assembly.references import reference_strings
from sandcrawler.docparse.assembly.titles import largest_type
from sandcrawler.docparse.assembly.zones import ZONE_CORRECTIONS
from sandcrawler.docparse.crf.columns import ColumnModel
from sandcrawler.docparse.crf.text import TextCrfModel
from sandcrawler.docparse.features.header import header_rows
from sandcrawler.docparse.features.reference_segmenter import refseg_rows
from sandcrawler.docparse.features.segmentation import segmentation_rows
from sandcrawler.docparse.layout.alto import read_layout_alto
from sandcrawler.docparse.layout.elements import Layout, LayoutError, Line, Token
from sandcrawler.docparse.layout.pdfium import read_layout_pdfium
from sandcrawler.records.extraction import Extraction, ExtractRequest
from sandcrawler.records.fulltext import Body, Figure
from sandcrawler.records.statuses import ExtractStatus, LayoutStatus
from sandcrawler.tagging.scoring import plain

#: the segmentation's labels for the zones the cascade reads
HEADER_ZONE = "<header>"
BODY_ZONE = "<body>"
REFERENCES_ZONE = "<references>"
#: without a header zone, the lines of the first page before its body stand in
FALLBACK_HEADER_LINES = 40


@dataclass
class CascadeModels:
    """Every model of the cascade, loaded once per process."""

    segmentation: ColumnModel
    header: ColumnModel
    references: ColumnModel
    names: TextCrfModel
    affiliation: TextCrfModel
    citations: CrfModel
    versions: dict[str, str] = field(default_factory=dict)

    @classmethod
    def load(cls, directory: Path | None = None, citation: Path | None = None) -> CascadeModels:
        """The shipped models, or those of ``directory`` that are there
        (``extract.models``); the citation model is ``citation.model``'s."""

        def mine(name: str) -> Path | None:
            path = directory / f"{name}.crfmodel" if directory is not None else None
            return path if path is not None and path.exists() else None

        def column(name: str) -> ColumnModel:
            return ColumnModel.load(mine(name) or name)

        def text(name: str, shipped: Callable[[], TextCrfModel]) -> TextCrfModel:
            path = mine(name)
            return TextCrfModel.load(path) if path is not None else shipped()

        seg, head = column("segmentation"), column("header")
        refs = column("reference-segmenter")
        names = text("name-header", names_model)
        affs = text("affiliation-address", affiliations_model)
        cites = CrfModel.load(citation)
        # a model's version: the first digits of its CRFsuite part's SHA-256
        versions = {name: model.version for name, model in (
            ("segmentation", seg), ("header", head), ("reference-segmenter", refs),
            ("name-header", names), ("affiliation-address", affs), ("citation", cites))}
        return cls(seg, head, refs, names, affs, cites, versions=versions, directory=directory)

    #: the body's models, loaded when a full text is first asked for
    body_models: dict[str, ColumnModel] = field(default_factory=dict)
    directory: Path | None = None

    def body_model(self, name: str) -> ColumnModel:
        """``fulltext``, ``figure`` or ``table``: the header-only path never pays
        for loading them."""
        if name not in self.body_models:
            path = self.directory / f"{name}.crfmodel" if self.directory is not None else None
            model = ColumnModel.load(path if path is not None and path.exists() else name)
            self.body_models[name] = model
            self.versions[name] = model.version
        return self.body_models[name]

    # HeaderModels: the header's names and affiliations
    def authors(self, text: str) -> list[LinkedAuthor]:
        return [LinkedAuthor(p.to_grobid_author(), list(p.markers))
                for p in parse_names(text, self.names)]

    def affiliations(self, text: str) -> list[LinkedAffiliation]:
        return [LinkedAffiliation(a.to_grobid_affiliation(), a.marker)
                for a in parse_affiliations(text, self.affiliation)]


#: the models this process loaded, and from where
_LOADED: tuple[tuple[Path | None, Path | None], CascadeModels] | None = None


def cascade(directory: Path | None = None, citation: Path | None = None) -> CascadeModels:
    """The models, loaded once per process (a sandboxed child serves many files)."""
    global _LOADED
    if _LOADED is None or _LOADED[0] != (directory, citation):
        _LOADED = ((directory, citation), CascadeModels.load(directory, citation))
    return _LOADED[1]


def extract_document(path: str | Path, settings: ExtractSettings,
                     citation_model: Path | None = None,
                     request: ExtractRequest | None = None) -> Extraction:
    started = time.monotonic()
    out = _extract(str(path), settings, citation_model, request or ExtractRequest())
    out.seconds = round(time.monotonic() - started, 3)
    return out


def _extract(path: str, settings: ExtractSettings, citation_model: Path | None,
             request: ExtractRequest) -> Extraction:
    with open(path, "rb") as f:
        head = f.read(4096)
    if sniff_mime(head) != "application/pdf":
        return Extraction(ExtractStatus.NOT_PDF, error="the file is not a PDF")
    opened = _page_count(path)
    if isinstance(opened, Extraction):
        return opened
    pages = opened
    ranges = requested_ranges(pages, settings.max_pages, request)
    if not ranges:
        return Extraction(ExtractStatus.EMPTY_PDF, pages=pages, error=(
            f"no page in the range asked for ({request.first_page}-{request.last_page} "
            f"of {pages})"))
    try:
        layout = _layout(path, settings, ranges)
    except LayoutError as e:
        status = e.status if isinstance(e.status, LayoutStatus) else LayoutStatus.LAYOUT_FAILED
        return Extraction(status, error=str(e), pages=pages)
    read = len(layout.pages)
    asked = sum(last - first + 1 for first, last in requested_ranges(pages, pages, request))
    lines = layout.lines()
    if not any(line.tokens for line in lines):
        return Extraction(LayoutStatus.NO_TEXT, error="no text on any page (a scan?)",
                          pages=pages, pages_read=read, reader=layout.reader)
    models = cascade(settings.models, citation_model)
    zones = [plain(label) for label in models.segmentation.tag(segmentation_rows(layout))]
    for correct in ZONE_CORRECTIONS:
        zones = correct(lines, zones)
    header = _header(layout, lines, zones, models)
    if not (header.biblio.journal and (header.biblio.volume or header.biblio.first_page)) \
            and (locator := running_locator(lines, zones, models.citations.parse)):
        add_reference_line(header.biblio, locator)
    found_ids = page_identifiers(lines, zones)
    # the file's XMP is scanned (a read of the whole file) only when the pages
    # print no DOI of the document's own
    _own_identifiers(header.biblio, found_ids,
                     None if found_ids.doi else read_xmp(path).get("doi"))
    ref_lines = [line for line, zone in zip(lines, zones, strict=True)
                 if zone == REFERENCES_ZONE]
    strings = []
    if ref_lines and request.references and not request.header_only:
        tokens, rows = refseg_rows(layout, ref_lines)
        strings = reference_strings(tokens, models.references.tag(rows),
                                    limit=settings.max_references + 1)
    partial = len(strings) > settings.max_references or read < asked
    references = []
    for i, ref in enumerate(strings[:settings.max_references]):
        biblio = models.citations.parse(ref.text)
        biblio.unstructured = ref.text
        biblio.index = i
        if ref.label:
            biblio.id = ref.label
        references.append(biblio)
    body = None
    if request.full and not request.header_only:
        body = _body(layout, lines, zones, models, references)
    return Extraction(ExtractStatus.PARTIAL if partial else ExtractStatus.SUCCESS,
                      error=_partial_note(asked, read, len(strings), settings) if partial
                      else None,
                      header=header.biblio, abstract=header.abstract,
                      keywords=header.keywords, references=references, pages=pages,
                      pages_read=read, reader=layout.reader, models=models.versions,
                      body=body)


def requested_ranges(pages: int, max_pages: int,
                     request: ExtractRequest) -> list[tuple[int, int]]:
    """The 0-based page ranges to read for ``request``: its first pages for a
    header alone, else its ``start``-``end`` window (GROBID's, 1-based) cut to
    ``max_pages`` as :func:`page_ranges` cuts a whole document."""
    first = max(1, request.first_page or 1) - 1
    if request.header_only:
        last = min(pages, first + max(1, request.header_pages), request.last_page or pages)
        return [(first, last - 1)] if first < last else []
    last = min(pages, request.last_page or pages) - 1
    if last < first:
        return []
    return [(first + a, first + b) for a, b in page_ranges(last - first + 1, max_pages)]


def _body(layout: Layout, lines: list[Line], zones: list[str], models: CascadeModels,
          references: list[GrobidBiblio]) -> Body:
    body_lines = [line for line, zone in zip(lines, zones, strict=True)
                  if zone == BODY_ZONE and line.tokens]
    if not body_lines:
        return Body()
    # the body's modules are imported when a full text is first asked for
    from sandcrawler.docparse.assembly.figures import read_figure
    from sandcrawler.docparse.features.fulltext import biblio_callouts, fulltext_rows

    # the callout columns say whether a token is a reference's label or its first
    # author's surname, as GROBID's rows do: the model leans on them (blank, a fold
    # of the 10-fold run lost 6.6 points of F1, citation markers 9)
    tokens, rows = fulltext_rows(layout, body_lines, callouts=biblio_callouts(references))
    labels = models.body_model("fulltext").tag(rows)

    def read(start: int, end: int, kind: str, figure_id: str) -> Figure:
        # the figure and table models read the fulltext model's rows, as GROBID's do
        return read_figure(tokens[start:end], layout, models.body_model(kind), kind=kind,
                           id=figure_id, rows=rows[start:end])

    body = build_body(tokens, labels, read)
    link_callouts(body, references)
    return body


def page_ranges(pages: int, max_pages: int) -> list[tuple[int, int]]:
    """0-based inclusive page ranges to read: all, or the first and last halves
    of ``max_pages`` (the header is at the start, the references at the end)."""
    if pages <= max_pages:
        return [(0, pages - 1)]
    half = max_pages // 2
    return [(0, half - 1), (pages - (max_pages - half), pages - 1)]


def _partial_note(pages: int, read: int, found: int, settings: ExtractSettings) -> str:
    notes = []
    if read < pages:
        notes.append(f"{read} of {pages} pages read (the first and last of extract.max_pages)")
    if found > settings.max_references:
        notes.append(f"the first {settings.max_references} references parsed "
                     "(extract.max_references)")
    return "; ".join(notes)


def _page_count(path: str) -> int | Extraction:
    try:
        doc = pdfium.PdfDocument(path)
    except pdfium.PdfiumError as e:
        message = str(e)
        if "password" in message.lower():
            return Extraction(ExtractStatus.ENCRYPTED, error="a password is needed")
        return Extraction(ExtractStatus.BAD_PDF, error=f"PDFium cannot open it: {message}")
    try:
        count = len(doc)
    finally:
        doc.close()
    if count == 0:
        return Extraction(ExtractStatus.EMPTY_PDF, error="the PDF has no pages")
    return count


def _layout(path: str, settings: ExtractSettings, ranges: list[tuple[int, int]]) -> Layout:
    """Both layout readers, the configured one first, the other when it fails."""
    readers = ["pdfalto", "pdfium"] if settings.reader == "pdfalto" else ["pdfium", "pdfalto"]
    errors: list[LayoutError] = []
    for reader in readers:
        try:
            return _read(reader, path, settings, ranges)
        except LayoutError as e:
            errors.append(e)
    # the first reader's status (the configured one), both readers' reasons
    raise LayoutError("; ".join(f"{r}: {e}" for r, e in zip(readers, errors, strict=True)),
                      status=errors[0].status)


def _read(reader: str, path: str, settings: ExtractSettings,
          ranges: list[tuple[int, int]]) -> Layout:
    parts = []
    for first, last in ranges:
        if reader == "pdfalto":
            parts.append(read_layout_alto(path, timeout=settings.timeout,
                                          memory_limit=settings.memory_limit_mb * 2**20,
                                          first_page=first, last_page=last))
        else:
            parts.append(read_layout_pdfium(path, first_page=first, last_page=last))
    layout = parts[0]
    for more in parts[1:]:
        layout.pages.extend(more.pages)
    return layout


def _header(layout: Layout, lines: list[Line], zones: list[str],
            models: CascadeModels) -> Header:
    head = [line for line, zone in zip(lines, zones, strict=True) if zone == HEADER_ZONE]
    if not head:
        head = _fallback_header(lines, zones)
    # the title, in the first page's largest type, taken for body text or a
    # figure: back into the header, in its place
    if (run := largest_type([line.tokens for line in lines])) is not None:
        kept = {id(line) for line in head}
        if not any(id(line) in kept for line in lines[run[0]:run[1]]):
            kept.update(id(line) for line in lines[run[0]:run[1]])
            head = [line for line in lines if id(line) in kept]
    if not head:
        return Header(GrobidBiblio(authors=[]))
    tokens, rows = header_rows(layout, head)
    return build_header(tokens, models.header.tag(rows), models, models.citations.parse)


def _own_identifiers(biblio: GrobidBiblio, found: PageIdentifiers,
                     metadata_doi: str | None) -> None:
    """The identifiers the first pages print as the document's own (a DOI the
    header zone held that reads as a cited work's is dropped); without a printed
    one, the DOI of the file's own XMP metadata."""
    doi = found.doi
    if doi is None and metadata_doi:
        try:
            doi = normalize_doi(metadata_doi)
        except RecordError:
            doi = None
    biblio.doi = doi
    biblio.arxiv_id = found.arxiv_id or biblio.arxiv_id
    biblio.pmid = found.pmid or biblio.pmid
    biblio.pmcid = found.pmcid or biblio.pmcid


def _fallback_header(lines: list[Line], zones: list[str]) -> list[Line]:
    """The first page's lines before its first body line (a document whose
    header the segmentation missed still gets a try); when the page starts
    with what it took for body text, its first lines all the same (the title
    and authors are there, and the header model tells them from the text)."""
    first = [line for line in lines if line.tokens and line.tokens[0].page == 0]
    before: list[Line] = []
    for line, zone in zip(lines, zones, strict=True):
        if not line.tokens or line.tokens[0].page != 0 or zone == "<body>":
            break
        before.append(line)
    return (before or first)[:FALLBACK_HEADER_LINES]


def tokens_of(lines: Sequence[Line]) -> list[Token]:
    return [t for line in lines for t in line.tokens]
