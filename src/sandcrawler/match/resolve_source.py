"""``match refs``' input: the citing works whose ``citation`` rows are not current.

A citing work is one ``grobid_refs`` row (a Crossref work's references, or a
document's), read in key order a page at a time, each page on a connection of
its own. A work is current, and passed over, when its citation rows are newer
than its ``grobid_refs`` row by more than ``SETTLE``; why the margin:
docs/matching.md, "Which works are resolved again".
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any

import orjson
from sqlalchemy import Engine, func, select, tuple_

from sandcrawler.core.timestamps import iso_utc
from sandcrawler.core.work import Item, in_batches
from sandcrawler.db.schema import citation, grobid_refs
from sandcrawler.match.resolve_worker import citing_of
from sandcrawler.match.sync import OVERLAP

#: how much newer than its source a work's citation rows must be to be current
SETTLE = OVERLAP
#: grobid_refs rows read per query
PAGE = 500


class CitingWorksSource:
    """Items of grobid_refs rows (the JSON ``persist-grobid-refs`` reads), one per
    citing work to resolve; ``current`` counts the works passed over."""

    progress_unit = "rec"
    name = "the grobid_refs table"

    def __init__(self, engine: Engine, sources: Sequence[str], *, redo: bool = False,
                 limit: int | None = None, page: int = PAGE) -> None:
        self.engine = engine
        self.sources = tuple(sources)
        self.redo = redo
        self.limit = limit
        self.page = page
        #: rows read, works passed over as current, works handed on
        self.read = self.current = self.taken = 0
        with engine.connect() as conn:
            self.progress_total: int | None = int(conn.execute(
                select(func.count()).select_from(grobid_refs)
                .where(grobid_refs.c.source.in_(self.sources))).scalar_one())

    def progress_position(self) -> int:
        return self.read

    def _pages(self) -> Iterator[Sequence[Any]]:
        after: tuple[str, str] | None = None
        while True:
            q = select(grobid_refs.c.source, grobid_refs.c.source_id, grobid_refs.c.source_ts,
                       grobid_refs.c.updated, grobid_refs.c.refs_json
                       ).where(grobid_refs.c.source.in_(self.sources))
            if after is not None:
                q = q.where(tuple_(grobid_refs.c.source, grobid_refs.c.source_id) > after)
            with self.engine.connect() as conn:
                rows = conn.execute(q.order_by(grobid_refs.c.source, grobid_refs.c.source_id)
                                    .limit(self.page)).all()
            if not rows:
                return
            yield rows
            if len(rows) < self.page:
                return
            after = (rows[-1].source, rows[-1].source_id)

    def _state(self, citings: list[str]) -> dict[str, tuple[datetime, int]]:
        """Each citing work's oldest citation row and its number of rows."""
        if self.redo or not citings:
            return {}
        with self.engine.connect() as conn:
            found = conn.execute(
                select(citation.c.citing, func.min(citation.c.updated), func.count())
                .where(citation.c.citing.in_(citings)).group_by(citation.c.citing)).all()
        return {c: (oldest, int(n)) for c, oldest, n in found}

    def _items(self) -> Iterator[Item]:
        for rows in self._pages():
            named = [(citing_of(r.source, r.source_id) or "", r) for r in rows]
            state = self._state([c for c, _ in named if c])
            for citing, r in named:
                self.read += 1
                refs = r.refs_json if isinstance(r.refs_json, list) else None
                if not self.redo and citing and self._is_current(refs, r.updated,
                                                                 state.get(citing)):
                    self.current += 1
                    continue
                if self.limit is not None and self.taken >= self.limit:
                    return
                self.taken += 1
                data = orjson.dumps({"source": r.source, "source_id": r.source_id,
                                     "source_ts": iso_utc(r.source_ts),
                                     "refs_json": r.refs_json})
                yield Item(where=citing or f"grobid_refs {r.source}/{r.source_id}", data=data)

    @staticmethod
    def _is_current(refs: list[Any] | None, updated: datetime,
                    state: tuple[datetime, int] | None) -> bool:
        if state is None:
            # no rows: current only when there is nothing to resolve
            return refs is not None and not refs
        oldest, count = state
        return refs is not None and count == len(refs) and oldest > updated + SETTLE

    def batches(self, size: int) -> Iterator[list[Item]]:
        return in_batches(self._items(), size)

    def ack(self, items: list[Item]) -> None:
        """Nothing to forget: the citation rows are the position."""

    def close(self) -> None:
        """Each page had its own connection."""
