"""Builders of the Crossref reference workers, and ``persist crossref``'s sink."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable

from sqlalchemy import Engine, select

from sandcrawler.app.services import Services
from sandcrawler.core.errors import ConfigError
from sandcrawler.core.timestamps import parse_timestamp
from sandcrawler.core.work import Outcome, Rows, Worker
from sandcrawler.db.schema import crossref
from sandcrawler.match.sync import IndexFeed
from sandcrawler.pipeline.db_sink import DatabaseSink
from sandcrawler.pipeline.sinks import Rejection
from sandcrawler.records.refs import CrossrefRow
from sandcrawler.refs.parse_workers import (
    ParseCrossrefRefsWorker,
    PersistCrossrefWorker,
    PersistGrobidRefsWorker,
)

log = logging.getLogger(__name__)


def parse_crossref_refs(services: Services, parser: str | None = None) -> Worker:
    return ParseCrossrefRefsWorker(services.citation_parser(parser))


def persist_crossref(services: Services, parse_refs: bool = False,
                     parser: str | None = None) -> Worker:
    return PersistCrossrefWorker(services.citation_parser(parser) if parse_refs else None)


def persist_grobid_refs(_services: Services) -> Worker:
    return PersistGrobidRefsWorker()


class IndexFeedSink:
    """The database sink of ``persist crossref``, which then adds the works it
    wrote to the match index (``IndexFeed``), so matching needs no `match index`
    run to see them.

    Only what the table holds is added: a row the database refused (a
    rejection), or an older version of a work that did not replace the newer
    one stored (the upsert keeps the newest ``indexed``), is not. The index is
    written after the database's commit: if it cannot be written, the works are
    in the table all the same, and the index's own reading of the table (`match
    index`, or the matcher's update) catches up; that is said once.
    """

    def __init__(self, inner: DatabaseSink, open_feed: Callable[[], IndexFeed]) -> None:
        self.inner = inner
        self.engine: Engine = inner.engine
        self._open_feed = open_feed
        self._feed: IndexFeed | None = None
        self._broken = False

    def prepare(self) -> None:
        self.inner.prepare()

    def write(self, outcomes: list[Outcome]) -> list[Rejection]:
        rejected = self.inner.write(outcomes)
        if not self._broken:
            refused = {i for i, _, _ in rejected}
            works = [row for i, o in enumerate(outcomes) if i not in refused
                     and isinstance(o.output, Rows)
                     for row in o.output.rows if isinstance(row, CrossrefRow)]
            if works:
                self._add(works)
        return rejected

    def _stored(self, works: list[CrossrefRow]) -> list[CrossrefRow]:
        """The works whose version is the one the table holds now."""
        with self.engine.connect() as conn:
            held = dict(conn.execute(select(crossref.c.doi, crossref.c.indexed).where(
                crossref.c.doi.in_({w.doi for w in works}))).all())
        return [w for w in works if held.get(w.doi) == parse_timestamp(w.indexed)]

    def _add(self, works: list[CrossrefRow]) -> None:
        try:
            if self._feed is None:
                self._feed = self._open_feed()
            # orjson reads a plain str only, not the RawJSON subclass
            self._feed.add([(w.doi, str.__str__(w.record)) for w in self._stored(works)])
        except (sqlite3.Error, OSError, ConfigError) as e:
            self._broken = True
            log.warning("the match index was not updated (%s): the works are in the crossref "
                        "table; `sandcrawler match index` adds them", e)

    def close(self) -> None:
        try:
            if self._feed is not None:
                self._feed.close()
        finally:
            self.inner.close()


def persist_crossref_sink(services: Services) -> IndexFeedSink | DatabaseSink:
    """``persist crossref``'s sink (command and worker): the database, then the
    match index (``services.match_index_writer``, opened at the first write),
    unless ``match.feed`` is off."""
    if not services.settings.match.feed:
        return services.database_sink()
    return IndexFeedSink(services.database_sink(),
                         lambda: IndexFeed(services.match_index_writer()[0]))
