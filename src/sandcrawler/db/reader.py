"""The lookups the system makes of its own records, behind one interface.

``Reader`` has two implementations that answer identically (tests/test_reader.py):

* ``SqlReader``: SQL on the database engine (SQLite or PostgreSQL);
* ``PostgrestReader`` (``sandcrawler.web.postgrest``): the read-only PostgREST
  API over HTTP, as the original system's workers do, so a worker on another
  machine needs no database credentials.

``api.reader`` picks one (``Services.reader``). Rows are dicts of the relation's
columns: JSON columns as Python values, timestamps as aware UTC datetimes;
``capture`` answers a ``CdxRecord``. DOIs are looked up lower-cased, as stored.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from sqlalchemy import Engine, Select, column, select, table
from sqlalchemy.engine import Connection

from sandcrawler.db.engine import begin
from sandcrawler.db.schema import (
    catalogue,
    crossref,
    grobid_refs,
    ingest_file_result,
    metadata,
    web_cdx,
)
from sandcrawler.db.types import JsonDoc, UTCDateTime
from sandcrawler.models.capture import CdxRecord
from sandcrawler.timestamps import parse_timestamp

Row = dict[str, Any]
Key = tuple[str, str]

#: the view as a selectable with its columns' types (JSON decoded, timestamps UTC)
crossref_with_refs = table(
    "crossref_with_refs",
    column("doi", crossref.c.doi.type), column("indexed", UTCDateTime()),
    column("record", JsonDoc), column("source_ts", UTCDateTime()),
    column("refs_json", JsonDoc),
)

#: relation -> its timestamp columns (PostgREST answers them as ISO 8601 text)
TIMESTAMPS: dict[str, frozenset[str]] = {
    **{name: frozenset(c.name for c in t.columns if isinstance(c.type, UTCDateTime))
       for name, t in metadata.tables.items()},
    "crossref_with_refs": frozenset({"indexed", "source_ts"}),
}
#: the order of a URL's captures, latest first: the capture's second, then the one
#: indexed last, then its place in the WARC files (the table's key, so no two tie).
#: The one definition of "the latest capture of a URL": SQL (``latest_capture``, which
#: the web archive's replay and the pages use) and PostgREST's ``order=`` are built
#: from it, so the page shows the capture the crawler replays.
CAPTURE_ORDER = ("datetime", "row_created", "warc_path", "warc_offset")


def latest_capture_query(url: str) -> Select[Any]:
    """The SQL of "the latest ``web_cdx`` capture of exactly this URL" (one row)."""
    return (select(web_cdx).where(web_cdx.c.url == url)
            .order_by(*(web_cdx.c[name].desc() for name in CAPTURE_ORDER)).limit(1))


def latest_capture(conn: Connection, url: str) -> CdxRecord | None:
    """The latest capture of ``url`` on an open connection (a page reads several in
    one transaction)."""
    row = conn.execute(latest_capture_query(url)).mappings().first()
    return None if row is None else CdxRecord.from_row(dict(row))


def capture_at(conn: Connection, url: str, dt: str) -> CdxRecord | None:
    """The capture of ``url`` made at ``dt`` (a result's ``terminal_dt``): of two in
    that second, the one ``latest_capture`` would pick."""
    row = conn.execute(select(web_cdx).where(web_cdx.c.url == url, web_cdx.c.datetime == dt)
                       .order_by(*(web_cdx.c[name].desc() for name in CAPTURE_ORDER))
                       .limit(1)).mappings().first()
    return None if row is None else CdxRecord.from_row(dict(row))


def captures(conn: Connection, *, url: str | None = None, sha1hex: str | None = None,
             limit: int = 50) -> list[CdxRecord]:
    """Captures of exactly ``url``, or of the payload ``sha1hex``, latest first."""
    cond = web_cdx.c.url == url if url is not None else web_cdx.c.sha1hex == sha1hex
    query = (select(web_cdx).where(cond)
             .order_by(*(web_cdx.c[name].desc() for name in CAPTURE_ORDER)).limit(limit))
    return [CdxRecord.from_row(dict(r)) for r in conn.execute(query).mappings()]


def ingest_file_result_row(conn: Connection, ingest_type: str, base_url: str) -> Row | None:
    """The recorded ``ingest_file_result`` of this request, on an open connection."""
    t = ingest_file_result
    row = conn.execute(select(t).where(t.c.ingest_type == ingest_type,
                                       t.c.base_url == base_url).limit(1)).mappings().first()
    return None if row is None else normalise_row(t.name, row)


def normalise_row(relation: str, row: Mapping[Any, Any]) -> Row:
    """A row as every reader answers it: timestamps as aware UTC datetimes."""
    stamps = TIMESTAMPS[relation]
    return {k: parse_timestamp(v) if k in stamps else v for k, v in row.items()}


def lower_doi(doi: str) -> str:
    return doi.strip().lower()


class Reader(Protocol):
    """The system's lookups of its own records (see the module docstring)."""

    def ingest_hits(self, keys: Iterable[Key]) -> dict[Key, Row]:
        """The ``ingest_file_result`` rows that are hits among ``(ingest_type, base_url)``."""
        ...

    def ingest_file_result(self, ingest_type: str, base_url: str) -> Row | None:
        """The recorded result of this request, hit or not."""
        ...

    def capture(self, url: str) -> CdxRecord | None:
        """The latest ``web_cdx`` capture of exactly this URL."""
        ...

    def document_by_sha1(self, sha1hex: str) -> list[Row]:
        """``catalogue`` rows of documents holding this file, by UUID."""
        ...

    def document_by_doi(self, doi: str) -> list[Row]:
        """``catalogue`` rows of documents with this DOI, by UUID."""
        ...

    def grobid_refs(self, source: str, source_id: str) -> Row | None:
        """The ``grobid_refs`` row (``source_id`` lower-cased for ``crossref``: a DOI)."""
        ...

    def crossref_with_refs(self, doi: str) -> Row | None:
        """The Crossref record with its parsed references, if any."""
        ...

    def close(self) -> None: ...


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

    def ingest_hits(self, keys: Iterable[Key]) -> dict[Key, Row]:
        wanted = set(keys)
        urls = sorted({url for _, url in wanted})
        t = ingest_file_result
        found: dict[Key, Row] = {}
        for start in range(0, len(urls), self.batch):
            query = select(t).where(t.c.base_url.in_(urls[start:start + self.batch]),
                                    t.c.hit.is_(True))
            for row in self._rows(t.name, query):
                key = (row["ingest_type"], row["base_url"])
                if key in wanted:
                    found[key] = row
        return found

    def ingest_file_result(self, ingest_type: str, base_url: str) -> Row | None:
        with begin(self.engine) as conn:
            return ingest_file_result_row(conn, ingest_type, base_url)

    def capture(self, url: str) -> CdxRecord | None:
        with begin(self.engine) as conn:
            return latest_capture(conn, url)

    def _documents(self, name: str, value: str) -> list[Row]:
        return self._rows(catalogue.name, select(catalogue).where(catalogue.c[name] == value)
                          .order_by(catalogue.c.uuid))

    def document_by_sha1(self, sha1hex: str) -> list[Row]:
        return self._documents("sha1", sha1hex.lower())

    def document_by_doi(self, doi: str) -> list[Row]:
        return self._documents("doi", lower_doi(doi))

    def grobid_refs(self, source: str, source_id: str) -> Row | None:
        if source == "crossref":
            source_id = lower_doi(source_id)
        t = grobid_refs
        return self._one(t.name, select(t).where(t.c.source == source,
                                                 t.c.source_id == source_id))

    def crossref_with_refs(self, doi: str) -> Row | None:
        v = crossref_with_refs
        return self._one(v.name, select(v).where(v.c.doi == lower_doi(doi)))

    def close(self) -> None:
        """The engine belongs to the caller."""
