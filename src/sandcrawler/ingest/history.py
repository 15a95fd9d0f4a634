"""What was ingested and processed before: a request's recorded hit (then it
is ``success-existing`` without a fetch), and whether a file found is
processed already (then it is not processed again)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine, select

from sandcrawler.db.engine import begin
from sandcrawler.db.schema import ingest_file_result
from sandcrawler.models.ingest import IngestType, Processing
from sandcrawler.models.statuses import PdfStatus
from sandcrawler.storage.catalogue import Catalogue
from sandcrawler.storage.pdftable import PdfTable


class IngestHistory:
    def __init__(self, engine: Engine, catalogue: Catalogue, table: PdfTable) -> None:
        self.engine = engine
        self.catalogue = catalogue
        self.table = table

    def hit(self, ingest_type: str, base_url: str) -> dict[str, Any] | None:
        """The recorded ``ingest_file_result`` row of this request, if it was a hit."""
        t = ingest_file_result
        with begin(self.engine) as conn:
            row = conn.execute(select(t).where(t.c.ingest_type == ingest_type,
                                               t.c.base_url == base_url,
                                               t.c.hit.is_(True))).first()
        return dict(row._mapping) if row is not None else None

    def processed(self, kind: str, sha1hex: str) -> Processing | None:
        """What processing recorded for this file: a PDF's ``pdf0`` status, or the
        catalogue document holding an XML or HTML file."""
        uuids = self.catalogue.lookup("sha1", sha1hex)
        if kind == IngestType.PDF:
            row = self.table.get(sha1hex, ["pdf0:pdf_status"])
            if row is None:
                return None
            return Processing(kind=kind, status=PdfStatus.EXISTS,
                              uuid=uuids[0] if uuids else None)
        if not uuids:
            return None
        return Processing(kind=kind, status=PdfStatus.EXISTS, uuid=uuids[0])
