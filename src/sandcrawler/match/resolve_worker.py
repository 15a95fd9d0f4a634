"""``match-refs``: a citing work's references (one ``grobid_refs`` row) resolved
into its ``citation`` rows (docs/matching.md, "References (match refs)").

The citing side is ``doi:<doi>`` for a Crossref work, ``uuid:<uuid>`` for a
document. One input row gives one ``CitationRows``, written in the batch's
transaction, so a work is resolved whole or not at all. An empty catalog
raises ``CatalogEmpty`` rather than marking every reference ``empty-catalog``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Connection, bindparam, delete

from sandcrawler.core.errors import InfrastructureError, RecordError
from sandcrawler.core.work import Item, Outcome, RecordWorker, Rows, decode_record
from sandcrawler.db.persist import write_tables
from sandcrawler.db.schema import citation
from sandcrawler.match.matcher import Matcher
from sandcrawler.match.resolving import citing_document, citing_doi, resolve
from sandcrawler.records.refs import GrobidRefsRow
from sandcrawler.records.statuses import MatchStatus, RefsStatus

#: the grobid_refs sources that name a citing work (``citing_of``)
CITING_SOURCES = ("crossref", "document")

EMPTY_CATALOG_HELP = ("the match index is empty: load Crossref works with `sandcrawler persist "
                      "crossref FILE` and build the index with `sandcrawler match index` first")


class CatalogEmpty(InfrastructureError):
    """The match index holds no work: nothing can be resolved yet."""

    service = "match-index"


def citing_of(source: str, source_id: str) -> str | None:
    """The citing side of a grobid_refs row, None for a source that names none."""
    if source == "crossref":
        return citing_doi(source_id)
    if source == "document":
        return citing_document(source_id)
    return None


@dataclass(frozen=True, slots=True)
class CitationRows(Rows):
    """All of one citing work's ``citation`` rows (``rows``), in order: the
    sink also deletes its rows at positions ``count`` and after, left by a
    longer list resolved before."""

    citing: str = ""
    count: int = 0


def write_citations(conn: Connection, outputs: Sequence[Rows]) -> None:
    """The database sink's writer for ``match-refs``: upserts (``TABLES['citation']``),
    then each work's positions past its list deleted, in the sink's transaction.

    Works are written in the order of their names: two runs resolving the same
    works at once then take PostgreSQL's row locks in the same order, and one
    waits for the other rather than deadlocking."""
    ordered = sorted(outputs, key=lambda o: o.citing if isinstance(o, CitationRows) else "")
    write_tables(conn, ordered)
    tails = [{"c": o.citing, "n": o.count} for o in ordered if isinstance(o, CitationRows)]
    if tails:
        conn.execute(delete(citation).where(citation.c.citing == bindparam("c"),
                                            citation.c.ref_index >= bindparam("n")), tails)


class MatchRefsWorker(RecordWorker):
    """grobid_refs rows (JSON, as ``persist-grobid-refs`` reads them) -> ``CitationRows``."""

    def __init__(self, matcher: Matcher) -> None:
        self.matcher = matcher
        self._catalog_seen = False

    def _check_catalog(self) -> None:
        # Asked of the index until it has once held works: the matcher keeps its
        # first answer, and a worker started before the catalog was loaded must
        # not keep that "empty" once `persist crossref` has filled it.
        if self._catalog_seen:
            return
        if self.matcher.index.size() == 0:
            raise CatalogEmpty(EMPTY_CATALOG_HELP)
        self._catalog_seen = True

    def process_batch(self, items: list[Item]) -> list[Outcome]:
        self._check_catalog()
        return super().process_batch(items)

    def process(self, item: Item) -> Outcome:
        _, row = decode_record(item.data, GrobidRefsRow, "a grobid_refs row", RefsStatus.BAD_ROW)
        citing = citing_of(row.source, row.source_id)
        if citing is None:
            raise RecordError(f"grobid_refs source {row.source!r} names no citing work "
                              f"(only {' and '.join(CITING_SOURCES)} do)",
                              status=RefsStatus.BAD_ROW)
        rows, results = resolve(self.matcher, citing, row.refs_json)
        if any(r.status == MatchStatus.EMPTY_CATALOG for r in results):
            # the index was emptied under us (a rebuild): not the work's fault
            self._catalog_seen = False
            raise CatalogEmpty(EMPTY_CATALOG_HELP)
        return Outcome(item.where, RefsStatus.SUCCESS if rows else RefsStatus.EMPTY,
                       output=CitationRows(tuple(rows), citing=citing, count=len(rows)))

    def close(self) -> None:
        """The matcher belongs to the services that built it."""
