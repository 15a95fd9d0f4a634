"""``sandcrawler process``: a file record in, its processing result out.

For each record (``web.file_records``): metadata in one pass, extraction in the
sandbox for a PDF, then the file and its thumbnails into the resource store,
the ``file`` and ``pdf0`` (and ``grobid0``) families into the PDF table and the
catalogue row refreshed. A file already processed is ``exists`` unless
``force``; every write is keyed by the sha1, so re-processing is idempotent.
Statuses and result: docs/pdf.md, "Processing a file record".
"""

from __future__ import annotations

from typing import Any

from sandcrawler.core.errors import RecordError
from sandcrawler.core.filemeta import file_metadata
from sandcrawler.core.work import Item, Kind, Outcome, RecordWorker
from sandcrawler.pdf.processor import STORED, PdfProcessor
from sandcrawler.records.pdf import ProcessResult, ProcessStatus
from sandcrawler.records.statuses import FileRecordStatus, PdfStatus
from sandcrawler.web.file_records import FileLocator, FileRecord, parse_file_record


class ProcessPdfWorker(RecordWorker):
    def __init__(self, processor: PdfProcessor, *, force: bool = False,
                 locator: FileLocator | None = None) -> None:
        self.processor = processor
        self.table = processor.table
        self.locator = locator or FileLocator(catalogue=processor.catalogue)
        self.force = force

    def process(self, item: Item) -> Outcome:
        # A record whose file cannot be read still gets a result line: on the
        # results topic it is the only news its sender has of it.
        try:
            record = parse_file_record(item.data)
        except RecordError as e:
            return _failed(item, {"path": item.where}, e)
        # what the result knows so far, by ProcessResult's field names
        known: dict[str, Any] = record.describe()
        try:
            return self._process(item, record, known)
        except RecordError as e:
            if record.sha1 and "sha1hex" not in known:  # the digest it was asked by: its key
                known["sha1hex"] = record.sha1
            return _failed(item, known, e)

    def _process(self, item: Item, record: FileRecord, known: dict[str, Any]) -> Outcome:
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
            extracted = self.processor.extract(path, meta)
            stored = self.processor.store(path, meta, extracted, cdx=record.cdx)
            if stored.uuid is not None:  # a usable document, stored and catalogued
                known.update(uuid=stored.uuid, resources=stored.resources,
                             grobid_status=stored.grobid_status,
                             grobid_quality=stored.grobid_quality)
        kind: Kind = "ok" if extracted.status in STORED else (
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

    def close(self) -> None:
        # the locator's fetcher and the processor's services are shared, closed by
        # whoever built them; the processor's sandbox is this worker's
        self.processor.close()


def _outcome(item: Item, kind: Kind, known: dict[str, Any], *, status: ProcessStatus,
             message: str | None = None, **fields: Any) -> Outcome:
    """The record's outcome; its result line is built (and validated) here only,
    from what is known so far and the fields of the step that ends it.
    ``message`` is the outcome's (stderr), not the line's."""
    result = ProcessResult(**known, status=status, **fields)
    return Outcome(item.where, status, kind=kind, output=result, error=message)


def _failed(item: Item, known: dict[str, Any], e: RecordError) -> Outcome:
    """The result line of a record whose file could not be read, or stored."""
    return _outcome(item, "error", known, status=e.status, message=str(e), error=str(e))


def result_key(out: ProcessResult) -> str | None:
    """Results are keyed by the file's sha1: one partition per file."""
    return out.sha1hex
