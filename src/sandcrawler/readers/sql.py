"""``Reader`` over SQL on the database engine (SQLite or PostgreSQL)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

from sqlalchemy import (
    Engine,
    select,
)

from sandcrawler.db.engine import begin
from sandcrawler.db.queries import (
    Key,
    Row,
    citations_of,
    cited_by,
    crossref_with_refs,
    ingest_file_result_row,
    latest_capture,
    lower_doi,
    normalise_row,
)
from sandcrawler.db.rows import (
    CatalogueRow,
    CitationTableRow,
    CrossrefWithRefsRow,
    GrobidRefsRow,
    IngestFileResultRow,
)
from sandcrawler.db.schema import (
    catalogue,
    grobid_refs,
    ingest_file_result,
)
from sandcrawler.records.capture import CdxRecord


class SqlReader:
    """``Reader`` over SQL (the engine is the caller's)."""

    def __init__(self, engine: Engine, *, batch: int = 500) -> None:
        self.engine = engine
        self.batch = batch

    def _rows(self, relation: str, query: Any) -> list[Row]:
        with begin(self.engine) as conn:
            return [normalise_row(relation, r) for r in conn.execute(query).mappings()]

    def _one(self, relation: str, query: Any) -> Row | None:
        rows = self._rows(relation, query.limit(1))
        return rows[0] if rows else None

    def ingest_hits(self, keys: Iterable[Key]) -> dict[Key, IngestFileResultRow]:
        wanted = set(keys)
        urls = sorted({url for _, url in wanted})
        t = ingest_file_result
        found: dict[Key, IngestFileResultRow] = {}
        for start in range(0, len(urls), self.batch):
            query = select(t).where(t.c.base_url.in_(urls[start:start + self.batch]),
                                    t.c.hit.is_(True))
            for row in self._rows(t.name, query):
                key = (row["ingest_type"], row["base_url"])
                if key in wanted:
                    found[key] = cast(IngestFileResultRow, row)
        return found

    def ingest_file_result(self, ingest_type: str,
                           base_url: str) -> IngestFileResultRow | None:
        with begin(self.engine) as conn:
            return ingest_file_result_row(conn, ingest_type, base_url)

    def capture(self, url: str) -> CdxRecord | None:
        with begin(self.engine) as conn:
            return latest_capture(conn, url)

    def _documents(self, name: str, value: str) -> list[CatalogueRow]:
        rows: list[Any] = self._rows(catalogue.name, select(catalogue).where(
            catalogue.c[name] == value).order_by(catalogue.c.uuid))
        return rows

    def document_by_sha1(self, sha1hex: str) -> list[CatalogueRow]:
        return self._documents("sha1", sha1hex.lower())

    def document_by_doi(self, doi: str) -> list[CatalogueRow]:
        return self._documents("doi", lower_doi(doi))

    def grobid_refs(self, source: str, source_id: str) -> GrobidRefsRow | None:
        if source == "crossref":
            source_id = lower_doi(source_id)
        t = grobid_refs
        return cast("GrobidRefsRow | None", self._one(
            t.name, select(t).where(t.c.source == source, t.c.source_id == source_id)))

    def crossref_with_refs(self, doi: str) -> CrossrefWithRefsRow | None:
        v = crossref_with_refs
        return cast("CrossrefWithRefsRow | None",
                    self._one(v.name, select(v).where(v.c.doi == lower_doi(doi))))

    def citations(self, citing: str) -> list[CitationTableRow]:
        with begin(self.engine) as conn:
            return citations_of(conn, citing)

    def cited_by(self, doi: str, *, offset: int = 0,
                 limit: int = 50) -> tuple[int, list[CitationTableRow]]:
        with begin(self.engine) as conn:
            return cited_by(conn, doi, offset=offset, limit=limit)

    def close(self) -> None:
        """The engine belongs to the caller."""
