"""What was ingested and processed before: a request's recorded hit (then it
is ``success-existing`` without a fetch), and whether a file found is
processed already (then it is not processed again)."""

from __future__ import annotations

from collections.abc import Iterable
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
        return self.hits([(ingest_type, base_url)]).get((ingest_type, base_url))

    def hits(self, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], dict[str, Any]]:
        """The recorded hits among ``(ingest_type, base_url)`` keys, in one query per
        few hundred keys (a batch of requests asks once)."""
        wanted = set(keys)
        found: dict[tuple[str, str], dict[str, Any]] = {}
        urls = sorted({url for _, url in wanted})
        t = ingest_file_result
        with begin(self.engine) as conn:
            for start in range(0, len(urls), 500):
                rows = conn.execute(select(t).where(t.c.base_url.in_(urls[start:start + 500]),
                                                    t.c.hit.is_(True)))
                for row in rows:
                    key = (row.ingest_type, row.base_url)
                    if key in wanted:
                        found[key] = dict(row._mapping)
        return found

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
