"""The match index kept current with the ``crossref`` table.

The index remembers the latest ``updated`` it has read, in the same transaction
as the works, so a killed run resumes where it ended; each run starts
``OVERLAP`` before that mark, as transactions may commit out of order.
``persist crossref`` also feeds the index (``IndexFeed``) (docs/matching.md,
"The index").
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from multiprocessing import get_context
from typing import Any

import orjson
from sqlalchemy import (
    ColumnElement,
    Engine,
    Text,
    and_,
    cast,
    func,
    literal,
    or_,
    select,
    type_coerce,
)

from sandcrawler.core.timestamps import iso_utc
from sandcrawler.db.schema import crossref
from sandcrawler.match.index import IndexWriter
from sandcrawler.match.records import CatalogRecord, from_crossref
from sandcrawler.process.lifetime import die_with_parent

MARK = "crossref_updated"
#: how far before the mark each run starts reading again (longer than a
#: persist transaction takes)
OVERLAP = timedelta(minutes=1)
BATCH = 5000
#: works behind from which a second process reads them (starting it costs ~0.3 s)
PARALLEL_FROM = 20_000


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


def _text_at(ts: datetime) -> str:
    naive = ts.astimezone(UTC).replace(tzinfo=None)
    return naive.strftime("%Y-%m-%d %H:%M:%S") + (
        f".{naive.microsecond:06d}" if naive.microsecond else "")


def _written_after(engine: Engine, ts: datetime, doi: str | None = None,
                   *, inclusive: bool = False) -> ColumnElement[bool]:
    """Rows written after ``ts`` (at ``ts`` too with ``inclusive``; at ``ts``
    with a DOI after ``doi``, for the next page of a tie).

    SQLite keeps the timestamp as text, in CURRENT_TIMESTAMP's form or with
    microseconds when a client wrote it: text bounds the range (and uses the
    index; "…:00" sorts before "…:00.000000"), julianday() compares the times."""
    when: ColumnElement[Any]
    at: ColumnElement[Any]
    if engine.dialect.name == "sqlite":
        text = _text_at(ts)
        stored = type_coerce(crossref.c.updated, Text)
        bound = stored >= literal(text, Text)
        when, at = func.julianday(stored), func.julianday(literal(text, Text))
    else:
        when, at = crossref.c.updated, literal(ts, crossref.c.updated.type)
        bound = when >= at
    if inclusive:
        return bound
    if doi is None:
        return and_(bound, when > at)
    return and_(bound, or_(when > at, and_(when == at, crossref.c.doi > doi)))


def behind(engine: Engine, index: IndexWriter) -> int:
    """How many crossref rows were written after the index's mark (0: current)."""
    mark = index.meta(MARK)
    with engine.connect() as conn:
        q = select(func.count()).select_from(crossref)
        if mark:
            q = q.where(_written_after(engine, datetime.fromisoformat(mark)))
        return int(conn.execute(q).scalar_one())


def sync(engine: Engine, index: IndexWriter, *, rebuild: bool = False,
         progress: Callable[[int], object] | None = None, batch: int = BATCH) -> SyncStats:
    """Read the works written since the index's mark (all of them with
    ``rebuild``) into the index; returns what was done."""
    started = time.monotonic()
    if rebuild:
        index.clear()
    mark = index.meta(MARK)
    lag = behind(engine, index)
    if mark and not lag:
        # Nothing written after the mark: the common case of a command that
        # checks first. (Rows a late transaction wrote just before the mark are
        # read by the next run that has work to do, or were added by the feed.)
        return SyncStats(0, 0, time.monotonic() - started, index.size(), 0)
    since: datetime | None = datetime.fromisoformat(mark) - OVERLAP if mark else None
    read = indexed = 0
    # Reading works into records takes as long as writing them: with many to
    # read, a second process reads batch n+1 while this one writes batch n
    # (order, and so the mark, stay those of the table).
    # the reader dies with this process: a run killed with SIGKILL left it behind
    pool = (ProcessPoolExecutor(1, mp_context=get_context("spawn"), initializer=die_with_parent)
            if lag > PARALLEL_FROM else None)
    pending: tuple[Future[list[CatalogRecord]] | list[CatalogRecord], int, Any] | None = None
    try:
        for rows in _batches(engine, since, batch):
            works = [(doi, record) for doi, _, record in rows]
            job = pool.submit(records_of, works) if pool else records_of(works)
            if pending is not None:
                indexed += _write(index, *pending)
                read += pending[1]
                if progress:
                    progress(pending[1])
            pending = (job, len(rows), rows[-1][1])
        if pending is not None:
            indexed += _write(index, *pending)
            read += pending[1]
            if progress:
                progress(pending[1])
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    if rebuild or read > 50_000:
        index.optimize()
    return SyncStats(read, indexed, time.monotonic() - started, index.size(), lag)


def records_of(works: list[tuple[str, Any]]) -> list[CatalogRecord]:
    return [record_of(doi, record) for doi, record in works]


def _batches(engine: Engine, since: datetime | None,
             batch: int) -> Iterator[list[tuple[str, datetime, str]]]:
    """The crossref rows written at or after ``since``, in (updated, doi) order."""
    after_doi: str | None = None
    with engine.connect() as conn:
        while True:
            # the record as JSON text, decoded by orjson: the column type's own
            # decoding was a third of a build's time
            q = select(crossref.c.doi, crossref.c.updated, cast(crossref.c.record, Text))
            if since is not None:
                q = q.where(_written_after(engine, since, after_doi,
                                           inclusive=after_doi is None))
            rows = [(doi, ts, record) for doi, ts, record in conn.execute(
                q.order_by(crossref.c.updated, crossref.c.doi).limit(batch))]
            if not rows:
                return
            yield rows
            since, after_doi = rows[-1][1], rows[-1][0]
            if len(rows) < batch:
                return


def _write(index: IndexWriter, job: Future[list[CatalogRecord]] | list[CatalogRecord],
           count: int, last_updated: datetime) -> int:
    """One batch into the index, and the mark moved past it, in one transaction."""
    records = job.result() if isinstance(job, Future) else job
    with index.transaction():
        n = index.upsert(records)
        previous = index.meta(MARK)
        if previous is None or last_updated > datetime.fromisoformat(previous):
            index.set_meta(MARK, iso_utc(last_updated) or "")
    return n


class IndexFeed:
    """Adds works to the index as a worker persists them (``persist crossref``)."""

    def __init__(self, index: IndexWriter) -> None:
        self.index = index

    def add(self, works: Iterable[tuple[str, Any]]) -> int:
        records = [record_of(doi, record) for doi, record in works]
        if not records:
            return 0
        with self.index.transaction():
            return self.index.upsert(records)

    def close(self) -> None:
        self.index.close()
