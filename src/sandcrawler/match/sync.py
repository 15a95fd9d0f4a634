"""The match index kept current with the ``crossref`` table.

The table's ``updated`` column says when each row was last written. The index
remembers the latest ``updated`` it has read (``meta.crossref_updated``), in
the same SQLite transaction as the works it read, so a run killed at any point
resumes where its last committed batch ended. Each run starts a little before
that mark (``OVERLAP``): a transaction that began earlier may commit after a
later one, and its rows would otherwise be skipped. Reading a row twice is
harmless: an unchanged record is not written again.

``persist crossref`` also adds the works it writes (``IndexFeed``), so an index
beside a running worker is current without a run of ``match index``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import orjson
from sqlalchemy import Engine, and_, func, or_, select

from sandcrawler.db.schema import crossref
from sandcrawler.match.index import SqliteIndex
from sandcrawler.match.records import CatalogRecord, from_crossref
from sandcrawler.timestamps import iso_utc

MARK = "crossref_updated"
#: how far before the mark each run starts reading again
OVERLAP = timedelta(minutes=10)
BATCH = 5000


@dataclass(frozen=True, slots=True)
class SyncStats:
    read: int
    indexed: int
    seconds: float
    size: int
    #: works the table holds that the index did not before this run (at its start)
    behind: int


def record_of(doi: str, record: Any) -> CatalogRecord:
    work = orjson.loads(record) if isinstance(record, str | bytes) else record
    if not isinstance(work, Mapping):
        work = {}
    return from_crossref(doi, work)


def behind(engine: Engine, index: SqliteIndex) -> int:
    """How many crossref rows were written after the index's mark (0: current)."""
    mark = index.meta(MARK)
    with engine.connect() as conn:
        q = select(func.count()).select_from(crossref)
        if mark:
            q = q.where(crossref.c.updated > datetime.fromisoformat(mark))
        return int(conn.execute(q).scalar_one())


def sync(engine: Engine, index: SqliteIndex, *, rebuild: bool = False,
         progress: Callable[[int], object] | None = None, batch: int = BATCH) -> SyncStats:
    """Read the works written since the index's mark (all of them with
    ``rebuild``) into the index; returns what was done."""
    started = time.monotonic()
    if rebuild:
        with index.transaction():
            for table in ("works", "locators", "alt_ids"):
                index.conn.execute(f"DELETE FROM {table}")
            index.conn.execute("INSERT INTO titles (titles) VALUES ('delete-all')")
            index.conn.execute("DELETE FROM meta WHERE key = ?", (MARK,))
    mark = index.meta(MARK)
    lag = behind(engine, index)
    since: datetime | None = datetime.fromisoformat(mark) - OVERLAP if mark else None
    after_doi: str | None = None
    read = indexed = 0
    with engine.connect() as conn:
        while True:
            q = select(crossref.c.doi, crossref.c.updated, crossref.c.record)
            if since is not None and after_doi is not None:
                q = q.where(or_(crossref.c.updated > since,
                                and_(crossref.c.updated == since, crossref.c.doi > after_doi)))
            elif since is not None:
                q = q.where(crossref.c.updated >= since)
            rows = conn.execute(q.order_by(crossref.c.updated, crossref.c.doi)
                                .limit(batch)).all()
            if not rows:
                break
            records = [record_of(doi, record) for doi, _, record in rows]
            last_doi, last_updated = rows[-1][0], rows[-1][1]
            with index.transaction():
                indexed += index.upsert(records)
                previous = index.meta(MARK)
                new_mark = iso_utc(last_updated)
                if new_mark and (previous is None or last_updated > datetime.fromisoformat(
                        previous)):
                    index.set_meta(MARK, new_mark)
            read += len(rows)
            if progress:
                progress(len(rows))
            since, after_doi = last_updated, last_doi
            if len(rows) < batch:
                break
    if rebuild or read > 50_000:
        index.optimize()
    return SyncStats(read, indexed, time.monotonic() - started, index.size(), lag)


class IndexFeed:
    """Adds works to the index as a worker persists them (``persist crossref``)."""

    def __init__(self, index: SqliteIndex) -> None:
        self.index = index

    def add(self, works: Iterable[tuple[str, Any]]) -> int:
        records = [record_of(doi, record) for doi, record in works]
        if not records:
            return 0
        with self.index.transaction():
            return self.index.upsert(records)

    def close(self) -> None:
        self.index.close()
