"""The PDF table of the seed (docs/storage.md, "The PDF table"), kept in the project database.

An HBase-style table: rows keyed by a file's sha1 (20 raw bytes), cells grouped
in column families, one version per cell. Families and their columns are
declared once (``PDF_SCHEMA``); declaring a family is all it takes to add one,
as the cells live in one generic SQL table (``pdftable_cells``). Values are
stored as HBase would hold them: ints as 8-byte big-endian, strings as UTF-8,
JSON as UTF-8 JSON text, and every value of a ``compressed`` family deflated
(zlib), the portable stand-in for the seed's ``COMPRESSION => SNAPPY``, except
the small columns that say ``compressed=False``: the read-only API's views read
those in SQL (docs/api.md, "The original system's relations").
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import orjson
from sqlalchemy import Connection, Engine, and_, delete, func, insert, or_, select, tuple_
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import IntegrityError

from sandcrawler.core.errors import CorruptData, InvalidName, RecordError, SchemaError
from sandcrawler.core.identifiers import sha1_base32, sha1_key
from sandcrawler.db.engine import begin
from sandcrawler.db.persist import UpsertSpec, upsert
from sandcrawler.db.schema import pdftable_cells, pdftables
from sandcrawler.db.types import storable_json, storable_text
from sandcrawler.records.statuses import StoreStatus

ValueType = Literal["json", "str", "int", "bytes"]
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_RESERVED = {"key", "sha1hex"}  # row fields in the JSON form of a row
_ZLIB_LEVEL = 6


@dataclass(frozen=True, slots=True)
class Col:
    """A column's value type; JSON columns may name keys every value must have."""

    type: ValueType
    required: tuple[str, ...] = ()
    description: str = ""
    #: None: as its family is; False keeps a small value of a compressed family
    #: readable in SQL (the views of the original system's relations decode it)
    compressed: bool | None = None

    def deflated(self, family: Family) -> bool:
        return family.compressed if self.compressed is None else self.compressed


@dataclass(frozen=True)
class Family:
    name: str
    columns: Mapping[str, Col]
    compressed: bool = False
    description: str = ""

    @property
    def base(self) -> str:
        """``grobid`` for ``grobid0``: numbered versions of one family are "orthogonal"."""
        return self.name.rstrip("0123456789")


@dataclass(frozen=True)
class TableSchema:
    """Column families of a table. Enforces the seed's rule that a column name is
    used by one family only (some map/reduce tools key cells by column name);
    numbered versions of the same family (``grobid0``, ``grobid1``) may share names."""

    families: tuple[Family, ...]
    _by_name: dict[str, Family] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_name: dict[str, Family] = {}
        owner: dict[str, Family] = {}
        for fam in self.families:
            for name in (fam.name, *fam.columns):
                if not _NAME.match(name) or name in _RESERVED:
                    raise SchemaError(
                        f"family {fam.name!r}: {name!r} is not a usable name "
                        "(lower-case letters, digits and _; not 'key' or 'sha1hex')"
                    )
            if fam.name in by_name:
                raise SchemaError(f"family {fam.name!r} is declared twice")
            by_name[fam.name] = fam
            for col in fam.columns:
                other = owner.get(col)
                if other is not None and other.base != fam.base:
                    raise SchemaError(
                        f"column name {col!r} is declared by families {other.name!r} and "
                        f"{fam.name!r}; column names must be unique across families"
                    )
                owner.setdefault(col, fam)
        object.__setattr__(self, "_by_name", by_name)

    def with_family(self, family: Family) -> TableSchema:
        return TableSchema((*self.families, family))

    def family(self, name: str) -> Family:
        fam = self._by_name.get(name)
        if fam is None:
            raise InvalidName(
                f"unknown column family {name!r}; known: {', '.join(self._by_name)}",
                status=StoreStatus.UNKNOWN_FAMILY,
            )
        return fam

    def column(self, family: str, qualifier: str) -> Col:
        fam = self.family(family)
        col = fam.columns.get(qualifier)
        if col is None:
            raise InvalidName(
                f"unknown column {family}:{qualifier}; {family} has: {', '.join(fam.columns)}",
                status=StoreStatus.UNKNOWN_COLUMN,
            )
        return col

    def parse_columns(self, specs: Iterable[str]) -> list[tuple[str, str | None]]:
        """``family`` or ``family:column`` strings, checked against the schema."""
        out: list[tuple[str, str | None]] = []
        for spec in specs:
            fam, sep, qual = spec.partition(":")
            if sep:
                self.column(fam, qual)
                out.append((fam, qual))
            else:
                self.family(fam)
                out.append((fam, None))
        return out


PDF_SCHEMA = TableSchema((
    Family("f", {
        "c": Col("json", ("u", "d"), "crawler de-dupe record: u url, d date, f warc file, "
                 "o warc offset, c dupe count, i warc record id"),
    }, description="heritrix HBaseContentDigestHistory de-dupe, filled by crawlers"),
    Family("file", {
        "size": Col("int", description="bytes, uncompressed"),
        "mime": Col("str", description="normalised MIME type"),
        "cdx": Col("json", ("surt", "url", "dt", "warc", "offset", "c_size"),
                   "where the file was captured, all values strings"),
    }, description="crawl and file metadata, filled from CDX lines and processing"),
    Family("grobid0", {
        "status_code": Col("int", description="HTTP status from GROBID", compressed=False),
        "quality": Col("str", description="good / marginal / bad", compressed=False),
        "status": Col("json", description="status JSON from GROBID", compressed=False),
        "tei_xml": Col("str", description="TEI-XML full text from GROBID"),
        "tei_json": Col("json", description="full text as JSON"),
        "metadata": Col("json", description="title, authors, date, DOI, abstract, number "
                        "of references, language, GROBID's version", compressed=False),
    }, compressed=True, description="GROBID processing (the large columns deflated)"),
    Family("pdf0", {
        "pdf_status": Col("str", description="PDF extraction status (success, not-pdf, ...)",
                          compressed=False),
        "pdf_meta": Col("json", description="pages, page-0 size, version, info, XMP, ids, "
                        "word count", compressed=False),
        "text": Col("str", description="full text, pages separated by form feeds"),
    }, compressed=True, description="the file's own PDF metadata and text (PDFium; the "
                                    "text deflated)"),
    Family("html0", {
        "html_status": Col("str", description="HTML full-text processing status (success, "
                           "too-short, ...)"),
        "html_meta": Col("json", description="scope, has_teixml, has_thumbnail, word_count, "
                         "biblio, resources: the original system's html_meta row"),
    }, description="an HTML full text's processing (file ingest; docs/ingest.md)"),
    Family("match0", {
        "mstatus": Col("str", description="did it match the catalogue? (exact, strong, ..., "
                       "doi-conflict, sources-disagree)"),
        "doi": Col("str", description="the DOI identified (exact or strong), lower-case"),
        "minfo": Col("json", description="the sources tried, each one's status, DOI, score "
                     "and reasons; the deciding source and the runner-up"),
    }, description="identification against the catalogue (docs/matching-documents.md)"),
    Family("extract0", {
        "xstatus": Col("str", description="the extraction cascade's status (success, partial, "
                       "no-text, ...)"),
        "xheader": Col("json", description="the header: title, authors with affiliations, "
                       "date, journal, volume, issue, pages, identifiers, keywords, abstract"),
        "xrefs": Col("json", description="the references, each with its unstructured string "
                     "and parsed fields"),
        "xinfo": Col("json", description="pages (and pages read), layout reader, model "
                     "versions, seconds, error"),
    }, compressed=True, description="the embedded extraction cascade, without GROBID "
                                    "(docs/extraction.md)"),
))


def _encode(family: Family, qualifier: str, col: Col, value: Any) -> bytes:
    where = f"{family.name}:{qualifier}"
    if col.type == "int":
        if not isinstance(value, int) or isinstance(value, bool):
            raise RecordError(f"{where} takes an integer, not {value!r}",
                              status=StoreStatus.BAD_VALUE)
        try:
            data = value.to_bytes(8, "big", signed=True)
        except OverflowError:
            raise RecordError(f"{where}: {value} does not fit in 64 bits",
                              status=StoreStatus.BAD_VALUE) from None
    elif col.type == "str":
        if not isinstance(value, str):
            raise RecordError(f"{where} takes a string, not {value!r}",
                              status=StoreStatus.BAD_VALUE)
        # held to a text column's rules: the pdftable_files view reads it as text
        data = storable_text(value).encode("utf-8")
    elif col.type == "bytes":
        if not isinstance(value, bytes):
            raise RecordError(f"{where} takes bytes, not {type(value).__name__}",
                              status=StoreStatus.BAD_VALUE)
        data = value
    else:
        if col.required:
            missing = [k for k in col.required if not isinstance(value, dict) or k not in value]
            if missing:
                raise RecordError(
                    f"{where} needs key(s) {', '.join(missing)}", status=StoreStatus.BAD_VALUE
                )
        data = storable_json(value).encode("utf-8")  # the view reads it as jsonb
    return zlib.compress(data, _ZLIB_LEVEL) if col.deflated(family) else data


def _decode(family: Family, qualifier: str, col: Col | None, data: bytes, key: bytes) -> Any:
    where = f"row {sha1_base32(key)} {family.name}:{qualifier}"
    try:
        if col.deflated(family) if col is not None else family.compressed:
            data = zlib.decompress(data)
        if col is None or col.type == "bytes":
            return data  # a column no longer declared: shown raw rather than hidden
        if col.type == "int":
            return int.from_bytes(data, "big", signed=True)
        if col.type == "str":
            return data.decode("utf-8")
        return orjson.loads(data)
    except (zlib.error, UnicodeDecodeError, orjson.JSONDecodeError) as e:
        raise CorruptData(f"{where}: stored value does not decode: {e}") from None


@dataclass(slots=True)
class PdfRow:
    key: bytes
    #: family -> column -> decoded value
    cells: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def sha1hex(self) -> str:
        return self.key.hex()

    @property
    def base32(self) -> str:
        return sha1_base32(self.key)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"key": self.base32, "sha1hex": self.sha1hex}
        for fam, cols in self.cells.items():
            out[fam] = {q: (v.hex() if isinstance(v, bytes) else v) for q, v in cols.items()}
        return out


Cells = Mapping[str, Mapping[str, Any]]
_CELLS = UpsertSpec(pdftable_cells, ("table_id", "row_key", "family", "qualifier"))


def table_name(version: int, env: str) -> str:
    """The seed's table name, ``wbgrp-journal-extract-<version>-<env>``."""
    return f"wbgrp-journal-extract-{version}-{env}"


class PdfTable:
    """One named PDF table (``wbgrp-journal-extract-<version>-<env>``) in the database."""

    def __init__(self, engine: Engine, name: str, schema: TableSchema = PDF_SCHEMA) -> None:
        self.engine = engine
        self.name = name
        self.schema = schema
        self._table_id: int | None = None

    @property
    def table_id(self) -> int:
        if self._table_id is None:
            self._table_id = self._lookup_or_create()
        return self._table_id

    def _lookup_or_create(self) -> int:
        query = select(pdftables.c.id).where(pdftables.c.name == self.name)
        with begin(self.engine) as conn:
            found = conn.execute(query).scalar()
            if found is not None:
                return int(found)
        try:
            with begin(self.engine) as conn:
                conn.execute(insert(pdftables).values(name=self.name))
        except IntegrityError:
            pass  # created meanwhile by another writer
        with begin(self.engine) as conn:
            return int(conn.execute(query).scalar_one())

    # -- writing

    def encode_row(self, key: Any, cells: Cells) -> list[dict[str, Any]]:
        """Cell rows for the SQL table; RecordError for an unknown column or bad value."""
        raw_key = sha1_key(key)
        out = []
        for fam_name, cols in cells.items():
            fam = self.schema.family(fam_name)
            for qual, value in cols.items():
                col = self.schema.column(fam_name, qual)
                out.append({
                    "table_id": self.table_id, "row_key": raw_key, "family": fam_name,
                    "qualifier": qual, "value": _encode(fam, qual, col, value),
                })
        return out

    def put(self, key: Any, cells: Cells) -> None:
        """Write some columns of one row; other columns keep their values."""
        self.put_many([(key, cells)])

    def put_many(self, rows: Iterable[tuple[Any, Cells]]) -> int:
        """Write rows in one transaction; a later write to the same cell wins.
        Returns the number of cells written."""
        with begin(self.engine) as conn:
            return self.write(conn, rows)

    def write(self, conn: Connection, rows: Iterable[tuple[Any, Cells]]) -> int:
        """``put_many`` inside the caller's transaction (the pipeline's database sink)."""
        by_cell: dict[tuple[Any, ...], dict[str, Any]] = {}
        for key, cells in rows:
            for cell in self.encode_row(key, cells):
                by_cell[(cell["row_key"], cell["family"], cell["qualifier"])] = cell
        if by_cell:
            upsert(conn, _CELLS, list(by_cell.values()))
        return len(by_cell)

    def delete(self, key: Any, columns: Iterable[str] = ()) -> int:
        """Delete a row, or only the given ``family`` / ``family:column`` cells.
        Returns the number of cells removed."""
        c = pdftable_cells.c
        where = and_(c.table_id == self.table_id, c.row_key == sha1_key(key))
        selected = self._column_filter(columns)
        if selected is not None:
            where = and_(where, selected)
        with begin(self.engine) as conn:
            return conn.execute(delete(pdftable_cells).where(where)).rowcount

    # -- reading

    def get(self, key: Any, columns: Iterable[str] = (), *,
            conn: Connection | None = None) -> PdfRow | None:
        """The row (all families, or only the given ``family`` / ``family:column``);
        on ``conn`` when given (a caller reading several things at once)."""
        raw = sha1_key(key)
        # one row's cells: a plain query (scan's server-side cursor costs round trips)
        query = self._query(raw, raw + b"\x00", columns)
        if conn is not None:
            cells = conn.execute(query).all()
        else:
            with begin(self.engine) as own:
                cells = own.execute(query).all()
        return next(self._rows(iter(cells), None), None)

    def scan(
        self,
        start: Any = None,
        stop: Any = None,
        columns: Iterable[str] = (),
        limit: int | None = None,
    ) -> Iterator[PdfRow]:
        """Rows with ``start <= key < stop`` in key order, keys as sha1 (any form) or raw
        bytes (a prefix of one is allowed as a bound). Streams: memory stays flat."""
        if limit is not None and limit <= 0:
            return
        query = self._query(start, stop, columns)
        with self.engine.connect() as conn:
            result = conn.execution_options(stream_results=True, yield_per=2000).execute(query)
            yield from self._rows(iter(result), limit)

    def _query(self, start: Any, stop: Any, columns: Iterable[str]) -> Any:
        c = pdftable_cells.c
        where = c.table_id == self.table_id
        if start is not None:
            where = and_(where, c.row_key >= _bound(start))
        if stop is not None:
            where = and_(where, c.row_key < _bound(stop))
        selected = self._column_filter(columns)
        if selected is not None:
            where = and_(where, selected)
        return (select(c.row_key, c.family, c.qualifier, c.value)
                .where(where).order_by(c.row_key, c.family, c.qualifier))

    def _rows(self, cells: Iterator[Any], limit: int | None) -> Iterator[PdfRow]:
        """Cells in key order, as rows."""
        emitted = 0
        row: PdfRow | None = None
        for row_key, fam_name, qual, value in cells:
            row_key = bytes(row_key)
            if row is None or row.key != row_key:
                if row is not None:
                    yield row
                    emitted += 1
                    if limit is not None and emitted >= limit:
                        return
                row = PdfRow(row_key)
            fam = self._family_or_raw(fam_name)
            row.cells.setdefault(fam_name, {})[qual] = _decode(
                fam, qual, fam.columns.get(qual), bytes(value), row_key
            )
        if row is not None and (limit is None or emitted < limit):
            yield row

    def count_rows(self) -> int:
        c = pdftable_cells.c
        query = select(func.count(c.row_key.distinct())).where(c.table_id == self.table_id)
        with begin(self.engine) as conn:
            return int(conn.execute(query).scalar_one())

    def value_counts(self, family: str, qualifier: str, *,
                     conn: Connection | None = None) -> dict[str, int]:
        """How many rows hold each value of one column, the values as text (an
        ``int`` column's number, a string's text): e.g. rows per ``pdf0:pdf_status``.
        Empty when the table was never written (it is not created by reading)."""
        if conn is None:
            with begin(self.engine) as own:
                return self.value_counts(family, qualifier, conn=own)
        table_id = self._table_id
        if table_id is None:
            table_id = conn.execute(select(pdftables.c.id).where(
                pdftables.c.name == self.name)).scalar()
            if table_id is None:
                return {}
        fam = self._family_or_raw(family)
        col = fam.columns.get(qualifier)
        c = pdftable_cells.c
        counts: dict[str, int] = {}
        for value, n in conn.execute(
            select(c.value, func.count())
            .where(c.table_id == table_id, c.family == family, c.qualifier == qualifier)
            .group_by(c.value)
        ):
            deflated = col.deflated(fam) if col is not None else fam.compressed
            data = zlib.decompress(value) if deflated else bytes(value)
            name = (str(int.from_bytes(data, "big", signed=True))
                    if col is not None and col.type == "int" and len(data) == 8
                    else data.decode("utf-8", "replace"))
            counts[name] = counts.get(name, 0) + n
        return counts

    def _family_or_raw(self, name: str) -> Family:
        try:
            return self.schema.family(name)
        except InvalidName:
            return Family(name, {})  # stored by a schema that declared more: shown raw

    def _column_filter(self, columns: Iterable[str]) -> Any:
        parsed = self.schema.parse_columns(columns)
        if not parsed:
            return None
        c = pdftable_cells.c
        whole = [fam for fam, qual in parsed if qual is None]
        cells = [(fam, qual) for fam, qual in parsed if qual is not None]
        clauses = []
        if whole:
            clauses.append(c.family.in_(whole))
        if cells:
            clauses.append(tuple_(c.family, c.qualifier).in_(cells))
        return or_(*clauses)


def _bound(value: Any) -> bytes:
    if isinstance(value, bytes | bytearray):
        return bytes(value)
    return sha1_key(value)


@dataclass(frozen=True, slots=True)
class Capture:
    """The first capture of some content, as ``f:c`` holds it (``to_cell``: the
    cell's JSON, heritrix's one-letter keys)."""

    url: str
    #: as the crawler gave it
    date: str
    warc: str | None = None
    offset: int | None = None
    record_id: str | None = None
    #: later captures of the same content counted so far
    dupes: int = 0

    @classmethod
    def from_cell(cls, cell: Any, where: str) -> Capture:
        """The stored cell; CorruptData if it is not a capture."""
        if not (isinstance(cell, Mapping) and isinstance(cell.get("u"), str)
                and isinstance(cell.get("d"), str)):
            raise CorruptData(f"{where} f:c: stored value is not a capture")
        return cls(cell["u"], cell["d"], warc=cell.get("f"), offset=cell.get("o"),
                   record_id=cell.get("i"), dupes=int(cell.get("c") or 0))

    def to_cell(self) -> dict[str, Any]:
        """The cell's JSON; unset fields left out, not stored as null."""
        cell: dict[str, Any] = {"u": self.url, "d": self.date}
        for key, value in (("f", self.warc), ("o", self.offset), ("i", self.record_id)):
            if value is not None:
                cell[key] = value
        if self.dupes:
            cell["c"] = self.dupes
        return cell


class CaptureHistory:
    """The crawler's writer API for ``f:c`` (heritrix's content-digest de-dupe history).

    ``record`` stores the first capture of some content. A later capture of the
    same content bumps the dupe count ``c`` and returns the first capture, which
    is what a crawler needs to write a revisit record instead of the bytes again.
    Safe with concurrent crawlers: the read and update share one transaction.
    """

    def __init__(self, table: PdfTable) -> None:
        self.table = table

    def lookup(self, sha1: Any) -> Capture | None:
        row = self.table.get(sha1, ["f:c"])
        return Capture.from_cell(row.cells["f"]["c"], row.base32) if row else None

    def record(
        self,
        sha1: Any,
        *,
        url: str,
        date: str,
        warc: str | None = None,
        offset: int | None = None,
        record_id: str | None = None,
    ) -> Capture | None:
        """Store this capture if the content is new (returns None); otherwise count
        the duplicate and return the stored first capture."""
        if not url or not date:
            raise RecordError("a capture needs a url and a date", status=StoreStatus.BAD_VALUE)
        capture = Capture(url, date, warc=warc, offset=offset, record_id=record_id).to_cell()
        raw = sha1_key(sha1)
        fam = self.table.schema.family("f")
        col = self.table.schema.column("f", "c")
        c = pdftable_cells.c
        where = and_(c.table_id == self.table.table_id, c.row_key == raw, c.family == "f",
                     c.qualifier == "c")
        cell = self.table.encode_row(raw, {"f": {"c": capture}})[0]
        pk = [col_.name for col_ in pdftable_cells.primary_key.columns]
        with begin(self.table.engine) as conn:
            dialect_insert = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
            # Insert-if-absent first: it is a write, so on SQLite it takes the database's
            # write lock before anything is read, and concurrent crawlers are serialised.
            inserted = conn.execute(
                dialect_insert(pdftable_cells).values(**cell)
                .on_conflict_do_nothing(index_elements=pk)
                .returning(pdftable_cells.c.row_key)  # rowcount is not portable here
            ).first()
            if inserted is not None:
                return None
            query = select(c.value).where(where)
            if conn.dialect.name == "postgresql":
                query = query.with_for_update()  # the row lock serialises the bump
            first = _decode(fam, "c", col, bytes(conn.execute(query).scalar_one()), raw)
            if not isinstance(first, dict):
                raise CorruptData(f"row {sha1_base32(raw)} f:c: stored value is not an object")
            # bumped in the stored JSON itself: keys of another writer stay as they were
            first["c"] = int(first.get("c") or 0) + 1
            conn.execute(
                pdftable_cells.update().where(where).values(value=_encode(fam, "c", col, first))
            )
            return Capture.from_cell(first, sha1_base32(raw))
