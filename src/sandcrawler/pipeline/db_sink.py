"""The pipeline's database sink: each batch's outputs upserted in one transaction."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import DataError, IntegrityError

from sandcrawler.core.work import Outcome
from sandcrawler.db.engine import begin, first_line
from sandcrawler.db.persist import write_tables
from sandcrawler.pipeline.sinks import Rejection
from sandcrawler.records.statuses import PipelineStatus

#: writes a batch's outputs on the connection (what it returns, a count, is not used)
Writer = Callable[[Connection, list[Any]], object]


class DatabaseSink:
    """Hands the batch's outputs to ``writer`` inside one transaction.

    If the database refuses the batch for its data (a constraint), each output is
    retried in its own transaction so only the offending records fail. The schema
    is checked before the first write (``prepare``): a database that is down then
    is an infrastructure error like any other, which workers back off from.

    The engine belongs to whoever gave it (the services of the process): the
    sink never disposes it.
    """

    def __init__(self, engine: Engine, writer: Writer = write_tables,
                 prepare: Callable[[], None] | None = None) -> None:
        self.engine = engine
        self.writer = writer
        #: run before the first write (the composition root's one schema check)
        self._prepare = prepare
        self._prepared = prepare is None

    def prepare(self) -> None:
        if not self._prepared and self._prepare is not None:
            self._prepare()
            self._prepared = True

    def write(self, outcomes: list[Outcome]) -> list[Rejection]:
        indexed = [(i, o.output) for i, o in enumerate(outcomes) if o.output is not None]
        if not indexed:
            return []
        self.prepare()
        try:
            with begin(self.engine) as conn:
                self.writer(conn, [out for _, out in indexed])
            return []
        except (IntegrityError, DataError):
            pass
        rejected: list[Rejection] = []
        for i, out in indexed:
            try:
                with begin(self.engine) as conn:
                    self.writer(conn, [out])
            except (IntegrityError, DataError) as e:
                rejected.append((i, PipelineStatus.DB_REJECTED, first_line(e.orig or e)))
        return rejected

    def close(self) -> None:
        """Nothing of its own to release: the engine is its owner's to dispose."""
