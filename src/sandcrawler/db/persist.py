"""Idempotent bulk upserts of the rows workers write (crossref, grobid_refs,
ingest results, citation).

Rows arrive typed (``work.Rows``). A newer upstream version always wins and an
older one never overwrites it (``indexed`` orders crossref rows, ``source_ts``
grobid_refs rows), so replaying a topic or a file is safe. PostgreSQL: COPY
into a staging table, then one ``INSERT ... ON CONFLICT``; SQLite: executemany.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, DefaultClause, Table, or_
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import DBAPIError

from sandcrawler.core.jsontext import RawJSON
from sandcrawler.core.work import Rows
from sandcrawler.db.schema import (
    citation,
    crossref,
    grobid_refs,
    ingest_file_result,
    ingest_fileset_platform,
    ingest_request,
)
from sandcrawler.db.types import storable_json, storable_text


@dataclass(frozen=True, slots=True)
class UpsertSpec:
    """How rows of ``table`` are upserted: by ``keys``; with ``order``, an incoming
    row replaces a stored one only if its ``order`` value is not older."""

    table: Table
    keys: tuple[str, ...]
    order: str | None = None
    #: columns written when the row is new and never updated (first seen wins)
    keep: tuple[str, ...] = ()

    @property
    def data_columns(self) -> list[str]:
        """The columns an upsert updates."""
        return [c.name for c in self.table.columns if c.name not in self.keys
                and c.name != "updated" and c.name not in self.keep]

    @property
    def insert_columns(self) -> list[str]:
        return [*self.keys, *self.data_columns, *self.keep]


#: table name -> spec, in write order: crossref first, as a later issue may add a
#: foreign key from grobid_refs.
TABLES: dict[str, UpsertSpec] = {
    "crossref": UpsertSpec(crossref, ("doi",), "indexed"),
    "grobid_refs": UpsertSpec(grobid_refs, ("source", "source_id"), "source_ts"),
    # one row per request: the latest result written wins
    "ingest_file_result": UpsertSpec(ingest_file_result, ("ingest_type", "base_url")),
    "ingest_fileset_platform": UpsertSpec(ingest_fileset_platform, ("ingest_type", "base_url")),
    # the first time a request was seen is kept; its latest JSON replaces the last
    "ingest_request": UpsertSpec(
        ingest_request, ("link_source", "link_source_id", "ingest_type", "base_url"),
        keep=("created",)),
    # a citing work's references, by position: resolving it again replaces them
    # (match/resolve_worker.py also deletes the positions past a shorter list)
    "citation": UpsertSpec(citation, ("citing", "ref_index")),
}


def write_tables(conn: Connection, outputs: Iterable[Rows]) -> None:
    """Sink writer: each output's rows, upserted per table (in ``TABLES``' order).
    A row becomes its column values (``columns()``) here, as it is written."""
    per_table: dict[str, dict[tuple[Any, ...], Mapping[str, Any]]] = {
        name: {} for name in TABLES}
    for out in outputs:
        for row in out.rows:
            values = row.columns()
            # One statement may not touch a key twice: the last version in the batch wins.
            per_table[row.table][tuple(values[k] for k in TABLES[row.table].keys)] = values
    for name, rows in per_table.items():
        if rows:
            upsert(conn, TABLES[name], list(rows.values()))


def upsert(conn: Connection, spec: UpsertSpec, rows: Sequence[Mapping[str, Any]]) -> None:
    """Insert or update ``rows`` (no key twice); ``updated`` is set to now() if present."""
    if conn.dialect.name == "postgresql":
        _upsert_postgres(conn, spec, rows)
    else:
        _upsert_sqlite(conn, spec, rows)


def _upsert_sqlite(conn: Connection, spec: UpsertSpec, rows: Sequence[Mapping[str, Any]]) -> None:
    table, keys = spec.table, spec.keys
    stmt = sqlite_insert(table)
    data_cols = spec.data_columns
    set_: dict[str, Any] = {c: stmt.excluded[c] for c in data_cols}
    if "updated" in table.c:
        default = table.c.updated.server_default
        assert isinstance(default, DefaultClause)  # the schema's now()
        set_["updated"] = default.arg
    where = None
    if spec.order:
        existing, incoming = table.c[spec.order], stmt.excluded[spec.order]
        where = or_(existing.is_(None), incoming.is_(None), existing <= incoming)
    stmt = stmt.on_conflict_do_update(index_elements=list(keys), set_=set_, where=where)
    cols = spec.insert_columns
    conn.execute(stmt, [{c: row.get(c) for c in cols} for row in rows])


def _pg_value(value: Any) -> Any:
    """A value for COPY, which is below SQLAlchemy's column types: made storable
    as those types make it (db/types.py)."""
    if isinstance(value, dict | list | RawJSON):
        return storable_json(value)
    if isinstance(value, str):
        return storable_text(value)
    return value


def _upsert_postgres(conn: Connection, spec: UpsertSpec,
                     rows: Sequence[Mapping[str, Any]]) -> None:
    table, keys, order = spec.table, spec.keys, spec.order
    name = table.name
    data_cols = spec.data_columns
    cols = spec.insert_columns
    col_list = ", ".join(f'"{c}"' for c in cols)
    stage = f"_stage_{name}"
    updates = [f'"{c}" = EXCLUDED."{c}"' for c in data_cols]
    if "updated" in table.c:
        updates.append('"updated" = now()')
    sql_upsert = (
        f"INSERT INTO {name} ({col_list}) SELECT {col_list} FROM {stage} "
        f"ON CONFLICT ({', '.join(keys)}) DO UPDATE SET {', '.join(updates)}"
    )
    if order:
        sql_upsert += (
            f' WHERE {name}."{order}" IS NULL OR EXCLUDED."{order}" IS NULL '
            f'OR {name}."{order}" <= EXCLUDED."{order}"'
        )
    # psycopg only here, on PostgreSQL (whose dialect has loaded it already): an
    # SQLite run does not pay its import (80 ms of every command's start-up)
    import psycopg

    raw = conn.connection.driver_connection
    statement = f"COPY {stage} ({col_list}) FROM STDIN"
    try:
        with raw.cursor() as cur:  # type: ignore[union-attr]
            # Same TOAST compression as the target, so the INSERT ... SELECT copies
            # compressed values instead of decompressing and compressing them again.
            like = "INCLUDING DEFAULTS"
            if raw.info.server_version >= 140000:  # type: ignore[union-attr]
                like += " INCLUDING COMPRESSION"
            cur.execute(
                f"CREATE TEMP TABLE IF NOT EXISTS {stage} (LIKE {name} {like}) "
                "ON COMMIT DELETE ROWS"
            )
            with cur.copy(statement) as copy:
                for row in rows:
                    copy.write_row([_pg_value(row.get(c)) for c in cols])
            statement = sql_upsert
            cur.execute(sql_upsert)
    except psycopg.Error as e:
        # Below SQLAlchemy here: map to its exception classes (DataError,
        # IntegrityError, OperationalError, ...) like any other statement.
        raise DBAPIError.instance(statement, None, e, psycopg.Error) from e
