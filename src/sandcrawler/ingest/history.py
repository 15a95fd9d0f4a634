"""What was ingested and processed before: a request's recorded hit (then it
is ``success-existing`` without a fetch), and whether a file found is
processed already (then it is not processed again)."""

from __future__ import annotations

from collections.abc import Iterable

from sandcrawler.db.rows import IngestFileResultRow
from sandcrawler.readers.base import Reader
from sandcrawler.records.ingest import IngestType, Processing
from sandcrawler.records.statuses import PdfStatus
from sandcrawler.storage.catalogue import Catalogue
from sandcrawler.storage.pdftable import PdfTable


class IngestHistory:
    def __init__(self, reader: Reader, catalogue: Catalogue, table: PdfTable) -> None:
        self.reader = reader
        self.catalogue = catalogue
        self.table = table

    def hit(self, ingest_type: str, base_url: str) -> IngestFileResultRow | None:
        """The recorded ``ingest_file_result`` row of this request, if it was a hit."""
        return self.hits([(ingest_type, base_url)]).get((ingest_type, base_url))

    def hits(self, keys: Iterable[tuple[str, str]]
             ) -> dict[tuple[str, str], IngestFileResultRow]:
        """The recorded hits among ``(ingest_type, base_url)`` keys, in one query per
        few hundred keys (a batch of requests asks once), through the reader
        (``api.reader``: SQL or PostgREST)."""
        return self.reader.ingest_hits(keys)

    def processed(self, kind: str, sha1hex: str) -> Processing | None:
        """What processing recorded for this file: a PDF's ``pdf0`` status, or the
        catalogue document holding an XML or HTML file."""
        if kind == IngestType.PDF and self.table.get(sha1hex, ["pdf0:pdf_status"]) is None:
            return None
        # a PDF extraction could not use has a pdf0 row and no document
        uuids = self.catalogue.lookup("sha1", sha1hex)
        if kind == IngestType.PDF:
            return Processing(kind=kind, status=PdfStatus.EXISTS,
                              uuid=uuids[0] if uuids else None)
        if not uuids:
            return None
        return Processing(kind=kind, status=PdfStatus.EXISTS, uuid=uuids[0])
