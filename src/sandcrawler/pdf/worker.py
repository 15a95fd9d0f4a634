"""``sandcrawler process``: a file record in, its processing result out.

A record is a path, a URL, a capture in a WARC (from a CDX line), or the sha1
of a file already stored (see ``sandcrawler.file_records``). For each file:
metadata in one pass (size, hashes, sniffed MIME type); for a PDF, extraction
in the sandbox (time and memory limits); then the primary file and its
thumbnails into the resource store under the document's UUID, the ``file`` and
``pdf0`` (and ``grobid0``) families into the PDF table, and the catalogue row
refreshed. A file whose ``pdf0`` status is already recorded is skipped
(``exists``; before fetching it, when the record gives its sha1) unless
``force``: re-processing is idempotent either way, as every write is keyed by
the sha1.

Statuses: the extraction's and ``exists`` (``PdfStatus``), the sandbox's
(``SandboxStatus``); for the record itself ``FileRecordStatus`` and
``FetchStatus`` (and ``not-found``, ``bad-name``, ``bad-sha1``, ``bad-json``);
for CDX lines ``CdxStatus``. docs/pdf.md has their tables. The result line is
a ``ProcessResult`` (``sandcrawler.models.pdf``), built once per record.
"""

from __future__ import annotations

from typing import Any

from sandcrawler.errors import RecordError
from sandcrawler.file_records import FileLocator, FileRecord, parse_file_record
from sandcrawler.filemeta import file_metadata
from sandcrawler.grobid_client import GrobidClient
from sandcrawler.models.files import FileMeta
from sandcrawler.models.pdf import ProcessResult
from sandcrawler.models.statuses import FileRecordStatus, FulltextStatus, PdfStatus, SandboxStatus
from sandcrawler.pdf.extract import PdfExtract, extract_pdf
from sandcrawler.pdf.fulltext import grobid_fulltext, not_run
from sandcrawler.sandbox import Sandbox, SandboxError
from sandcrawler.storage.catalogue import Catalogue
from sandcrawler.storage.pdftable import PdfTable
from sandcrawler.work import Item, Kind, Outcome, RecordWorker

#: extraction statuses that still give a usable document (stored and catalogued)
_STORED = {PdfStatus.SUCCESS, PdfStatus.EMPTY_PAGE0, PdfStatus.TEXT_TOO_LARGE}


class ProcessPdfWorker(RecordWorker):
    def __init__(
        self,
        catalogue: Catalogue,
        table: PdfTable,
        *,
        force: bool = False,
        timeout: float = 120.0,
        memory_limit: int | None = 2 * 1024**3,
        extract_options: dict[str, Any] | None = None,
        grobid: GrobidClient | None = None,
        grobid_options: list[tuple[str, str]] | None = None,
        grobid_max_bytes: int = 256 * 2**20,
        locator: FileLocator | None = None,
    ) -> None:
        self.catalogue = catalogue
        self.locator = locator or FileLocator(catalogue=catalogue)
        self.table = table
        self.grobid = grobid
        self.grobid_options = grobid_options or []
        self.grobid_max_bytes = grobid_max_bytes
        self.force = force
        self.timeout = timeout
        #: thumbnails, listing_width, max_text_chars for extract_pdf
        self.extract_options = extract_options or {}
        self.sandbox = Sandbox(memory_limit=memory_limit)

    def process(self, item: Item) -> Outcome:
        record = parse_file_record(item.data)
        # what the result knows so far, by ProcessResult's field names
        known: dict[str, Any] = record.describe()
        # A record that names its digest is recognised as done before it is fetched.
        if record.sha1 and (done := self._done(item, record.sha1,
                                               {**known, "sha1hex": record.sha1})):
            return done
        with self.locator.local_file(record) as path:
            meta = file_metadata(path)
            if record.sha1 and meta.sha1hex != record.sha1:
                raise RecordError(f"{record.name}: the bytes have sha1 {meta.sha1hex}, "
                                  f"the record says {record.sha1}",
                                  status=FileRecordStatus.SHA1_MISMATCH)
            # the result line is flat, its size ``size`` (docs/pdf.md)
            known.update(size=meta.size_bytes, **meta.model_dump(exclude={"size_bytes"}))
            if not record.sha1 and (done := self._done(item, meta.sha1hex, known)):
                return done
            extracted = self._extract(path, meta)
            known.update(self._store(path, meta, extracted, record))
        kind: Kind = "ok" if extracted.status in _STORED else (
            "skip" if extracted.status == PdfStatus.NOT_PDF else "error")
        return _outcome(item, kind, known, status=extracted.status,
                        message=extracted.error if kind == "error" else None,
                        error=extracted.error, page_count=extracted.page_count,
                        word_count=extracted.word_count, pdf_version=extracted.pdf_version)

    def _done(self, item: Item, sha1: str, known: dict[str, Any]) -> Outcome | None:
        """The ``exists`` outcome when this sha1's pdf0 status is recorded already
        (never with ``force``)."""
        row = None if self.force else self.table.get(sha1, ["pdf0:pdf_status"])
        if row is None:
            return None
        return _outcome(item, "skip", known, status=PdfStatus.EXISTS,
                        pdf_status=row.cells["pdf0"]["pdf_status"])

    def _extract(self, path: str, meta: FileMeta) -> PdfExtract:
        """PDFs in the sandbox (a timeout or crash is a status); other files not-pdf."""
        if meta.mimetype != "application/pdf":
            return PdfExtract(PdfStatus.NOT_PDF, error=f"the file is {meta.mimetype}")
        try:
            return self.sandbox.call(extract_pdf, path, timeout=self.timeout,
                                     **self.extract_options)
        except SandboxError as e:
            return PdfExtract(SandboxStatus(e.status), error=str(e))

    def _store(self, path: str, meta: FileMeta, out: PdfExtract,
               record: FileRecord) -> dict[str, Any]:
        """Writes the file's cells (and, for a usable document, its resources and
        catalogue row); what the result says about the document stored."""
        stored: dict[str, Any] = {}
        cells: dict[str, dict[str, Any]] = {
            "file": {"size": meta.size_bytes, "mime": meta.mimetype},
            "pdf0": {"pdf_status": out.status, "pdf_meta": out.to_json()},
        }
        if record.cdx is not None:
            cells["file"]["cdx"] = record.cdx.cell()
        if out.text is not None:
            cells["pdf0"]["text"] = out.text
        if out.status in _STORED:
            grobid0, tei = self._fulltext(path, meta)
            cells["grobid0"] = grobid0
            secondary = dict(out.thumbnails)
            if tei is not None:
                secondary["grobid-tei"] = tei.encode("utf-8")
            entry = self.catalogue.add_file(
                path, kind="pdf", sha1=meta.sha1hex, metadata=_metadata(out, grobid0),
                resources=secondary,
            )
            stored.update(uuid=entry.uuid, resources=list(entry.resources),
                          grobid_status=grobid0["status"]["status"],
                          grobid_quality=grobid0.get("quality"))
        # The table last: its pdf0 row is what marks the file as done.
        self.table.put(meta.sha1hex, cells)
        return stored

    def _fulltext(self, path: str, meta: FileMeta) -> tuple[dict[str, Any], str | None]:
        if self.grobid is None:
            return not_run("no GROBID URL configured"), None
        if meta.size_bytes > self.grobid_max_bytes:
            limit = self.grobid_max_bytes / 2**20
            return {"status": {"status": FulltextStatus.TOO_LARGE,
                               "error": f"over the {limit:g} MB limit for GROBID"}}, None
        with open(path, "rb") as f:
            pdf = f.read()
        return grobid_fulltext(self.grobid, pdf, self.grobid_options)

    def close(self) -> None:
        # The catalogue, table, locator's fetcher and GROBID client are shared
        # services, closed by whoever built them.
        self.sandbox.close()


def _outcome(item: Item, kind: Kind, known: dict[str, Any], *, status: str,
             message: str | None = None, **fields: Any) -> Outcome:
    """The record's outcome; its result line is built (and validated) here only,
    from what is known so far and the fields of the step that ends it.
    ``message`` is the outcome's (stderr), not the line's."""
    result = ProcessResult(**known, status=status, **fields)
    return Outcome(item.where, status, kind=kind, output=result.to_json(), error=message)


def _metadata(out: PdfExtract, grobid0: dict[str, Any]) -> dict[str, Any]:
    """Header metadata: GROBID's when it found a header, else the PDF's own."""
    meta: dict[str, Any] = {}
    header = grobid0.get("metadata") if grobid0.get("quality") in ("good", "marginal") else None
    if header:
        if header.get("title"):
            meta["title"] = [header["title"]]
        if header.get("authors"):
            meta["author"] = [
                {"given": a.get("given_name"), "family": a.get("surname"),
                 "name": a.get("full_name")} for a in header["authors"]
            ]
        if header.get("doi"):
            meta["DOI"] = header["doi"]
        if header.get("abstract"):
            meta["abstract"] = header["abstract"]
        meta["metadata_source"] = "grobid"
    else:
        title = out.xmp.get("title") or out.info.get("title")
        if title:
            meta["title"] = [title]
        author = out.xmp.get("creator") or out.info.get("author")
        if author:
            meta["pdf_author"] = author
        if out.xmp.get("doi"):
            meta["DOI"] = out.xmp["doi"]
        meta["metadata_source"] = "pdf"
    meta["pdf"] = out.to_json()
    return meta


def result_key(out: Any) -> str | None:
    """Results are keyed by the file's sha1: one partition per file."""
    return out.get("sha1hex") if isinstance(out, dict) else None
