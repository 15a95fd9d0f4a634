"""``pdftable backfill-cdx``: CDX lines -> ``file:cdx`` and ``file:mime`` cells.

Each capture line becomes one row write keyed by its sha1. Revisit records and
captures whose HTTP status is not 200 are counted and skipped (they carry no
file, or not the file), as are header lines; a malformed line gets ``bad-cdx``
and the run goes on. When several lines carry the same sha1, the last one read
is kept: the table holds one version per cell.
"""

from __future__ import annotations

from sandcrawler.mime import normalize_mime
from sandcrawler.pipeline.records import Item, Outcome, RecordWorker
from sandcrawler.web.cdx import is_cdx_header, parse_cdx_line


class BackfillCdxWorker(RecordWorker):
    def __init__(self, mimetypes: frozenset[str] = frozenset()) -> None:
        #: if given, only captures of these (normalised) MIME types are written
        self.mimetypes = mimetypes

    def process(self, item: Item) -> Outcome:
        if is_cdx_header(item.data):
            return Outcome(item.where, "skip-header", kind="skip")
        cdx = parse_cdx_line(item.data)
        skip = cdx.skip_reason()
        if skip is not None:
            return Outcome(item.where, skip[0], kind="skip", error=skip[1])
        mime = normalize_mime(cdx.mime)
        if self.mimetypes and mime not in self.mimetypes:
            return Outcome(item.where, "skip-mime", kind="skip")
        return Outcome(item.where, "success",
                       output=(cdx.sha1hex, {"file": {"mime": mime, "cdx": cdx.cell()}}))
