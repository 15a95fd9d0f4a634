"""A PDF the crawl found: processed like any PDF (``pdf.processor``), with the
crawl's capture in the PDF table (``file:cdx``, ``file:mime`` and the crawler's
``f:c`` capture history, heritrix's de-duplication record) and the references
of its GROBID full text in ``grobid_refs``."""

from __future__ import annotations

from sandcrawler.ingest.found import FoundFile
from sandcrawler.ingest.references import RefsWriter, refs_from_meta, refs_from_tei
from sandcrawler.models.ingest import IngestType, Processing
from sandcrawler.pdf.processor import PdfProcessor
from sandcrawler.storage.pdftable import CaptureHistory
from sandcrawler.storage.precedence import Layer, Source


class PdfIngestProcessor:
    def __init__(self, processor: PdfProcessor, refs: RefsWriter) -> None:
        self.processor = processor
        self.refs = refs
        self.history = CaptureHistory(processor.table)

    def process(self, found: FoundFile) -> Processing:
        path, meta, cdx = str(found.path), found.file_meta, found.cdx
        # the capture first: a revisit counts a duplicate of the first capture
        self.history.record(meta.sha1hex, url=cdx.url, date=cdx.datetime,
                            warc=cdx.warc_path, offset=cdx.warc_offset)
        extracted = self.processor.extract(path, meta)
        crawl = {"ingest": {"base_url": found.request.base_url, "landing_url": found.landing_url,
                            "terminal_url": cdx.url, "terminal_dt": cdx.datetime}}
        stored = self.processor.store(path, meta, extracted, cdx=cdx,
                                      layers=[*found.layers(), Layer(Source.REQUEST, crawl)])
        processing = Processing(kind=IngestType.PDF, status=extracted.status, uuid=stored.uuid,
                                resources=stored.resources or None,
                                grobid_status=stored.grobid_status, error=extracted.error)
        if stored.uuid is not None:
            refs = refs_from_tei(stored.tei) if stored.tei else []
            if not refs and found.references:
                refs = refs_from_meta(found.references, None)
            self.refs.write(stored.uuid, refs, None)
            processing.references = len(refs)
        return processing

    def close(self) -> None:
        self.processor.close()
