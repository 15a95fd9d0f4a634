"""``pdftable backfill-cdx``: CDX lines -> ``file:cdx`` and ``file:mime`` cells.

Each capture line becomes one row write keyed by its sha1. Revisit records and
captures whose HTTP status is not 200 are counted and skipped (they carry no
file, or not the file), as are header lines; a malformed line gets ``bad-cdx``
and the run goes on. When several lines carry the same sha1, the last one read
is kept: the table holds one version per cell.
"""

from __future__ import annotations

from sandcrawler.core.mime import normalize_mime
from sandcrawler.core.work import Item, Outcome, PdfCells, RecordWorker
from sandcrawler.records.statuses import BackfillStatus
from sandcrawler.web.archive.cdx import CaptureSkip, read_capture


class BackfillCdxWorker(RecordWorker):
    def __init__(self, mimetypes: frozenset[str] = frozenset()) -> None:
        #: if given, only captures of these (normalised) MIME types are written
        self.mimetypes = mimetypes

    def process(self, item: Item) -> Outcome:
        cdx = read_capture(item.data)
        if isinstance(cdx, CaptureSkip):
            return Outcome(item.where, cdx.status, kind="skip", error=cdx.detail)
        mime = normalize_mime(cdx.mimetype)
        if self.mimetypes and mime not in self.mimetypes:
            return Outcome(item.where, BackfillStatus.SKIP_MIME, kind="skip")
        assert cdx.sha1hex is not None  # read_capture refuses a line without a sha1
        return Outcome(item.where, BackfillStatus.SUCCESS,
                       output=PdfCells(cdx.sha1hex, {"file": {"mime": mime, "cdx": cdx.cell()}}))
