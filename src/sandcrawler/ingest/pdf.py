"""A PDF the crawl found: processed like any PDF (``pdf.processor``), with the
crawl's capture in the PDF table (``file:cdx``, ``file:mime`` and the crawler's
``f:c`` capture history, heritrix's de-duplication record) and the references
of its GROBID full text (else the landing page's ``citation_reference`` tags)
in ``grobid_refs``. The landing page's ``html_biblio`` is one of the sources
the document is identified from, and the page's references are resolved when
GROBID gave none (``pdf.processor``, ``match.document``)."""

from __future__ import annotations

from sandcrawler.ingest.found import FoundFile
from sandcrawler.pdf.processor import PdfProcessor
from sandcrawler.records.ingest import IngestType, Processing
from sandcrawler.refs.reading import RefsWriter, refs_from_meta, refs_from_tei
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
        page_refs = refs_from_meta(found.references, None) if found.references else []
        stored = self.processor.store(path, meta, extracted, cdx=cdx,
                                      layers=[*found.layers(), Layer(Source.REQUEST, crawl)],
                                      page=found.biblio, page_references=page_refs)
        processing = Processing(kind=IngestType.PDF, status=extracted.status, uuid=stored.uuid,
                                resources=stored.resources or None,
                                grobid_status=stored.grobid_status, error=extracted.error)
        if stored.uuid is not None:
            refs = stored.references
            if not refs and stored.tei and self.processor.tei_references is None:
                refs = refs_from_tei(stored.tei)  # a processor built without a TEI reader
            self.refs.write(stored.uuid, refs, None)
            processing.references = len(refs)
        return processing

    def close(self) -> None:
        self.processor.close()
