"""The lookups of the system's own records on an open connection, each written once:
the pages (``site/``) read several in one transaction, the web archive's replay
and ``readers.sql.SqlReader`` use them too. Rows come typed (``db/rows.py``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

from sqlalchemy import (
    Select,
    column,
    func,
    literal,
    null,
    or_,
    select,
    table,
    union_all,
)
from sqlalchemy.engine import Connection

from sandcrawler.core.timestamps import parse_timestamp
from sandcrawler.db.rows import (
    CitationTableRow,
    CrossrefTitle,
    CrossrefWithRefsRow,
    IngestFileResultRow,
    IngestFilesetRow,
    IngestRequestRow,
    IngestStatus,
    IngestStatusCount,
    ListedIngest,
    RecentCapture,
    RecentIngest,
    TimelineCapture,
)
from sandcrawler.db.schema import (
    citation,
    crossref,
    grobid_refs,
    ingest_file_result,
    ingest_fileset_platform,
    ingest_request,
    metadata,
    web_cdx,
)
from sandcrawler.db.types import JsonDoc, UTCDateTime
from sandcrawler.db.words import holds_every_word
from sandcrawler.records.capture import CdxRecord

#: a row as read, before it is typed (``normalise_row``)
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


def ingest_file_result_row(conn: Connection, ingest_type: str,
                           base_url: str) -> IngestFileResultRow | None:
    """The recorded ``ingest_file_result`` of this request, on an open connection."""
    t = ingest_file_result
    row = conn.execute(select(t).where(t.c.ingest_type == ingest_type,
                                       t.c.base_url == base_url).limit(1)).mappings().first()
    return None if row is None else cast(IngestFileResultRow, normalise_row(t.name, row))


# --- the pages' lookups, on an open connection --------------------------------------------


def _typed(conn: Connection, query: Any) -> list[Any]:
    """The rows of ``query`` as dicts (the caller names their type)."""
    return [dict(r) for r in conn.execute(query).mappings()]


def row_counts(conn: Connection, tables: Sequence[str]) -> dict[str, int]:
    """How many rows each of these tables (``db/schema.py``) holds, in the order given."""
    return {name: conn.execute(select(func.count()).select_from(metadata.tables[name]))
            .scalar_one() for name in tables}


def ingest_status_counts(conn: Connection) -> list[IngestStatusCount]:
    """How many file, then dataset, ingest results of each type ended with each status."""
    out: list[IngestStatusCount] = []
    for t in (ingest_file_result, ingest_fileset_platform):
        for ingest_type, status, n in conn.execute(
            select(t.c.ingest_type, t.c.status, func.count())
            .group_by(t.c.ingest_type, t.c.status)
        ):
            out.append({"ingest_type": ingest_type, "status": status, "count": n})
    return out


def refs_by_source(conn: Connection) -> dict[str, int]:
    """How many ``grobid_refs`` rows each source (``crossref``, ``document``) has."""
    t = grobid_refs
    return {source: n for source, n in conn.execute(
        select(t.c.source, func.count()).group_by(t.c.source))}


def recent_ingest_results(conn: Connection, limit: int) -> list[RecentIngest]:
    """The file ingest results updated last, newest first."""
    t = ingest_file_result
    rows: list[RecentIngest] = _typed(conn, select(
        t.c.ingest_type, t.c.base_url, t.c.status, t.c.updated)
        .order_by(t.c.updated.desc()).limit(limit))
    return rows


def recent_captures(conn: Connection, limit: int) -> list[RecentCapture]:
    """The captures indexed last, newest first."""
    c = web_cdx.c
    rows: list[RecentCapture] = _typed(conn, select(
        c.url, c.datetime, c.status_code, c.mimetype, c.warc_path, c.warc_offset)
        .order_by(c.row_created.desc(), c.warc_offset.desc()).limit(limit))
    return rows


def parsed_refs(conn: Connection, source: str, source_id: str) -> list[Any] | None:
    """The references parsed for ``(source, source_id)`` (``grobid_refs.refs_json``);
    None when none were."""
    t = grobid_refs
    row = conn.execute(select(t.c.refs_json).where(
        t.c.source == source, t.c.source_id == source_id)).first()
    return None if row is None else cast("list[Any] | None", row[0])


def has_crossref(conn: Connection, doi: str) -> bool:
    """Whether the ``crossref`` table holds a record of ``doi`` (as stored)."""
    return conn.execute(select(crossref.c.doi).where(crossref.c.doi == doi)).first() is not None


def crossref_titles(conn: Connection, doi: str) -> list[CrossrefTitle]:
    """The Crossref record of ``doi`` (as stored), its DOI and title."""
    rows: list[CrossrefTitle] = _typed(conn, select(
        crossref.c.doi, crossref.c.record["title"].label("title")).where(crossref.c.doi == doi))
    return rows


def crossref_with_title_words(conn: Connection, words: Sequence[str], *, offset: int,
                              limit: int) -> list[CrossrefTitle]:
    """The Crossref records whose first title holds every word (case-insensitive), by
    DOI, a page at a time."""
    first_title = crossref.c.record[("title", 0)].as_string()  # SQLite and PostgreSQL alike
    rows: list[CrossrefTitle] = _typed(conn, select(
        crossref.c.doi, crossref.c.record["title"].label("title"))
        .where(holds_every_word(first_title, words)).order_by(crossref.c.doi)
        .offset(offset).limit(limit))
    return rows


def crossref_with_refs_row(conn: Connection, doi: str) -> CrossrefWithRefsRow | None:
    """The Crossref record of ``doi`` (as stored) with its parsed references."""
    v = crossref_with_refs.c
    row = conn.execute(select(v.doi, v.indexed, v.record, v.source_ts, v.refs_json)
                       .where(v.doi == doi)).mappings().first()
    return None if row is None else cast(CrossrefWithRefsRow, dict(row))


def ingest_results_ending_in(conn: Connection, sha1hex: str,
                             limit: int) -> list[IngestFileResultRow]:
    """The file ingest results whose terminal is the file ``sha1hex``, updated last
    first."""
    t = ingest_file_result
    rows: list[IngestFileResultRow] = _typed(conn, select(t).where(
        t.c.terminal_sha1hex == sha1hex).order_by(t.c.updated.desc()).limit(limit))
    return rows


def ingest_statuses_ending_in(conn: Connection, sha1hex: str, limit: int) -> list[IngestStatus]:
    """Which file ingest requests ended in the file ``sha1hex``, and how."""
    t = ingest_file_result
    rows: list[IngestStatus] = _typed(conn, select(t.c.ingest_type, t.c.base_url, t.c.status)
                                      .where(t.c.terminal_sha1hex == sha1hex).limit(limit))
    return rows


def ingest_statuses_ending_at(conn: Connection, url: str, dt: str,
                              limit: int) -> list[IngestStatus]:
    """Which file ingest requests ended in the capture of ``url`` at ``dt``, and how."""
    t = ingest_file_result
    rows: list[IngestStatus] = _typed(conn, select(t.c.ingest_type, t.c.base_url, t.c.status)
                                      .where(t.c.terminal_url == url, t.c.terminal_dt == dt)
                                      .limit(limit))
    return rows


def ingest_statuses_of_url(conn: Connection, url: str, limit: int) -> list[IngestStatus]:
    """The file ingest results that started or ended at ``url``, then the dataset
    ingest results that started there (``limit`` of each; a result may be listed
    twice)."""
    t, f = ingest_file_result, ingest_fileset_platform
    rows: list[IngestStatus] = _typed(conn, select(t.c.ingest_type, t.c.base_url, t.c.status)
                                      .where(or_(t.c.base_url == url, t.c.terminal_url == url))
                                      .limit(limit))
    rows += _typed(conn, select(f.c.ingest_type, f.c.base_url, f.c.status)
                   .where(f.c.base_url == url).limit(limit))
    return rows


def ingest_requests(conn: Connection, ingest_type: str, base_url: str,
                    limit: int) -> list[IngestRequestRow]:
    """The requests seen for ``(ingest_type, base_url)`` (from any source)."""
    t = ingest_request
    rows: list[IngestRequestRow] = _typed(conn, select(t).where(
        t.c.base_url == base_url, t.c.ingest_type == ingest_type).limit(limit))
    return rows


def ingest_fileset_row(conn: Connection, ingest_type: str,
                       base_url: str) -> IngestFilesetRow | None:
    """The recorded dataset ingest result of this request."""
    t = ingest_fileset_platform
    row = conn.execute(select(t).where(t.c.ingest_type == ingest_type,
                                       t.c.base_url == base_url)).mappings().first()
    return None if row is None else cast(IngestFilesetRow, dict(row))


def list_ingest_results(conn: Connection, *, ingest_type: str = "", status: str | None = "",
                        oldest_first: bool = False, offset: int = 0,
                        limit: int = 50) -> tuple[int, list[ListedIngest]]:
    """How many file and dataset ingest results there are of ``ingest_type`` with
    ``status`` ("" for any; a ``status`` of None: those without one), and a page of
    them by when they were updated (then type and base URL)."""
    selects = []
    for t, kind in ((ingest_file_result, "file"), (ingest_fileset_platform, "dataset")):
        conds = []
        if ingest_type:
            conds.append(t.c.ingest_type == ingest_type)
        if status is None:
            conds.append(t.c.status.is_(None))
        elif status:
            conds.append(t.c.status == status)
        terminal = t.c.terminal_url if "terminal_url" in t.c else null()
        selects.append(select(t.c.ingest_type, t.c.base_url, t.c.status, t.c.updated,
                              terminal.label("terminal_url"), literal(kind).label("kind"))
                       .where(*conds))
    rows = union_all(*selects).subquery()
    order = rows.c.updated.asc() if oldest_first else rows.c.updated.desc()
    total: int = conn.execute(select(func.count()).select_from(rows)).scalar_one()
    found: list[ListedIngest] = _typed(conn, select(rows).order_by(
        order, rows.c.ingest_type, rows.c.base_url).offset(offset).limit(limit))
    return total, found


def capture_count(conn: Connection, url: str) -> int:
    """How many captures of exactly ``url`` the archive holds."""
    count: int = conn.execute(select(func.count()).select_from(web_cdx)
                              .where(web_cdx.c.url == url)).scalar_one()
    return count


def capture_timeline(conn: Connection, url: str, *, offset: int,
                     limit: int) -> list[TimelineCapture]:
    """The captures of exactly ``url``, oldest first, a page at a time."""
    c = web_cdx.c
    rows: list[TimelineCapture] = _typed(conn, select(
        c.datetime, c.status_code, c.mimetype, c.location, c.size, c.sha1hex,
        c.warc_path, c.warc_offset)
        .where(c.url == url).order_by(c.datetime, c.warc_path, c.warc_offset)
        .offset(offset).limit(limit))
    return rows


# --- resolved references (the citation table) ----------------------------------------------

#: the order of a DOI's citations: by citing work, then by place in its list; the
#: table's key, so no two tie and every reader pages alike
CITED_BY_ORDER = ("citing", "ref_index")


def citing_key(citing: str) -> str:
    """A citing side as stored: ``doi:<doi>`` and ``uuid:<uuid>`` are both written
    lower-case (``match/resolving.py``)."""
    return citing.strip().lower()


def citations_of(conn: Connection, citing: str) -> list[CitationTableRow]:
    """The resolved references of one citing work, in the order of its list."""
    t = citation
    rows: list[Any] = [normalise_row(t.name, r) for r in conn.execute(
        select(t).where(t.c.citing == citing_key(citing)).order_by(t.c.ref_index)).mappings()]
    return rows


def cited_by(conn: Connection, doi: str, *, offset: int = 0,
             limit: int = 50) -> tuple[int, list[CitationTableRow]]:
    """How many references (of any citing work) resolved to ``doi``, and a page of
    them in ``CITED_BY_ORDER``. Only a match names a DOI, so every one is a match."""
    t = citation
    cond = t.c.cited_doi == lower_doi(doi)
    total: int = conn.execute(select(func.count()).select_from(t).where(cond)).scalar_one()
    rows: list[Any] = [normalise_row(t.name, r) for r in conn.execute(
        select(t).where(cond).order_by(*(t.c[name] for name in CITED_BY_ORDER))
        .offset(offset).limit(limit)).mappings()]
    return total, rows


def crossref_titles_of(conn: Connection, dois: Iterable[str]) -> list[CrossrefTitle]:
    """The Crossref records the table holds among these DOIs (as stored), their DOI
    and title, by DOI."""
    wanted = sorted(set(dois))
    rows: list[CrossrefTitle] = []
    for start in range(0, len(wanted), 500):
        rows += _typed(conn, select(crossref.c.doi, crossref.c.record["title"].label("title"))
                       .where(crossref.c.doi.in_(wanted[start:start + 500]))
                       .order_by(crossref.c.doi))
    return rows


def normalise_row(relation: str, row: Mapping[Any, Any]) -> Row:
    """A row as every reader answers it: timestamps as aware UTC datetimes."""
    stamps = TIMESTAMPS[relation]
    return {k: parse_timestamp(v) if k in stamps else v for k, v in row.items()}


def lower_doi(doi: str) -> str:
    return doi.strip().lower()
