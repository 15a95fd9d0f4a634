"""``sandcrawler extract``: a PDF's path in, its header and references out
(``pdf.extractor``), and with ``--full`` its body; nothing is stored.

A file that cannot be read is a record error (``not-found``); everything the
cascade says of a readable file (``ExtractStatus``, or the sandbox's status) is
the line's ``status``.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from sandcrawler.core.errors import RecordError
from sandcrawler.core.work import Item, Kind, Outcome, RecordWorker
from sandcrawler.pdf.extractor import ExtractedFile, Extractor
from sandcrawler.records.extraction import USABLE, ExtractRequest
from sandcrawler.records.statuses import ExtractStatus, StoreStatus

if TYPE_CHECKING:  # matching is imported only by `extract --consolidate` (its builder)
    from sandcrawler.match.consolidate import Consolidation, Consolidator


class ExtractPdfWorker(RecordWorker):
    def __init__(self, extractor: Extractor, request: ExtractRequest | None = None, *,
                 consolidator: Consolidator | None = None) -> None:
        self.extractor = extractor
        self.request = request or ExtractRequest()
        #: with ``--consolidate``: the header matched against the catalog, the
        #: page's values kept and the work's filling what the page did not say
        self.consolidator = consolidator

    def process(self, item: Item) -> Outcome:
        path = os.fsdecode(item.data)
        if not os.path.isfile(path):
            raise RecordError(f"no such file: {path}", status=StoreStatus.NOT_FOUND)
        try:
            with open(path, "rb"):
                pass
        except OSError as e:
            raise RecordError(f"cannot read {path}: {e.strerror}",
                              status=StoreStatus.NOT_FOUND) from None
        found = self.extractor.extract(path, self.request)
        consolidation: Consolidation | None = None
        if self.consolidator is not None and found.status in USABLE \
                and found.header is not None and not found.header.is_empty():
            consolidation = self.consolidator.header(found.header, 1, keep_read=True)
        # every file gets its line; a failure is also said on stderr (as process does)
        kind: Kind = "ok" if found.status in USABLE else (
            "skip" if found.status == ExtractStatus.NOT_PDF else "error")
        return Outcome(item.where, found.status, kind=kind,
                       output=ExtractedFile(path, found, consolidation,
                                            consolidated=self.consolidator is not None),
                       error=found.error)

    def close(self) -> None:
        self.extractor.close()
