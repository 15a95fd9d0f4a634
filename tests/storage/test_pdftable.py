"""The PDF table of the seed (pdf-table-hbase-schema.md) on SQLite and PostgreSQL:
row keys, column families, values at rest, scans, schema rules, the crawler's
capture history and the `pdftable` commands (backfill from the real example CDX)."""

from __future__ import annotations

import base64
import hashlib
import re
import threading
import zlib
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson
import pytest
from sqlalchemy import Engine, func, select, update

from sandcrawler.app.services import Services
from sandcrawler.app.settings import load_settings
from sandcrawler.core.errors import CorruptData, InvalidName, RecordError, SchemaError
from sandcrawler.core.mime import normalize_mime
from sandcrawler.db.engine import make_engine
from sandcrawler.db.schema import pdftable_cells
from sandcrawler.db.types import octet_length
from sandcrawler.storage.pdftable import (
    PDF_SCHEMA,
    Capture,
    CaptureHistory,
    Col,
    Family,
    PdfTable,
    TableSchema,
)
from tests.helpers.cli import invoke
from tests.helpers.paths import FIXTURES

# SQL: on SQLite and PostgreSQL
pytestmark = pytest.mark.both_backends

NAME = "wbgrp-journal-extract-0-test"
CLI_TABLE = "wbgrp-journal-extract-0-dev"  # what the CLI opens with default settings
TEI_FIXTURE = "grobid-0.4.1-sample2.tei.fulltext.xml"


def sha1(n: int | str) -> bytes:
    return hashlib.sha1(str(n).encode()).digest()


def b32(raw: bytes) -> str:
    return base64.b32encode(raw).decode()


def cells(engine: Engine, table: PdfTable | None = None) -> int:
    query = select(func.count()).select_from(pdftable_cells)
    if table is not None:
        query = query.where(pdftable_cells.c.table_id == table.table_id)
    with engine.connect() as conn:
        return int(conn.execute(query).scalar_one())


def raw_value(engine: Engine, table: PdfTable, key: bytes, family: str, qual: str) -> bytes:
    c = pdftable_cells.c
    with engine.connect() as conn:
        value = conn.execute(
            select(c.value).where(c.table_id == table.table_id, c.row_key == key,
                                  c.family == family, c.qualifier == qual)
        ).scalar_one()
    return bytes(value)


@pytest.fixture
def table(engine: Engine) -> PdfTable:
    return PdfTable(engine, NAME)


def cdx_record(n: int) -> dict[str, str]:
    return {"surt": f"org,example)/{n}.pdf", "url": f"http://example.org/{n}.pdf",
            "dt": "20170706005950", "warc": f"CRAWL-{n}.warc.gz", "offset": str(n * 100),
            "c_size": "1234"}


# -- table names -------------------------------------------------------------------------


def test_table_name_from_settings() -> None:
    assert Services(load_settings(env="prod", pdftable_version=0)).pdftable_name == (
        "wbgrp-journal-extract-0-prod")
    assert Services(load_settings(env="qa", pdftable_version=3)).pdftable_name == (
        "wbgrp-journal-extract-3-qa")


def test_tables_in_one_database_are_separate(engine: Engine) -> None:
    prod = PdfTable(engine, "wbgrp-journal-extract-0-prod")
    qa = PdfTable(engine, "wbgrp-journal-extract-0-qa")
    key = sha1("shared")
    prod.put(key, {"file": {"mime": "application/pdf", "size": 10}})
    qa.put(sha1("qa-only"), {"file": {"size": 20}})
    assert prod.table_id != qa.table_id
    assert qa.get(key) is None
    assert [r.key for r in qa.scan()] == [sha1("qa-only")]
    assert [r.key for r in prod.scan()] == [key]
    assert prod.count_rows() == 1 and qa.count_rows() == 1
    assert qa.delete(key) == 0  # deleting in one table never touches the other
    assert prod.get(key) is not None
    # a second handle on the same name sees the same table
    assert PdfTable(engine, "wbgrp-journal-extract-0-prod").get(key).cells == {  # type: ignore[union-attr]
        "file": {"mime": "application/pdf", "size": 10}}


# -- row keys ----------------------------------------------------------------------------


def test_key_forms_reach_the_same_row(engine: Engine, table: PdfTable) -> None:
    raw = sha1("key-forms")
    hexkey, base32 = raw.hex(), b32(raw)
    table.put(hexkey.upper(), {"file": {"size": 1}})
    for form in (hexkey, hexkey.upper(), base32, base32.lower(), f"sha1:{hexkey}",
                 f"SHA1:{base32}", f"sha1:{base32.lower()}", raw, bytearray(raw),
                 memoryview(raw), f"  {hexkey}  "):
        row = table.get(form)
        assert row is not None and row.key == raw, form
    # writes through other forms land in the same row
    table.put(base32.lower(), {"file": {"mime": "application/pdf"}})
    table.put(raw, {"match0": {"doi": "10.1234/x"}})
    table.put(f"sha1:{hexkey}", {"file": {"size": 2}})
    assert table.count_rows() == 1
    row = table.get(raw)
    assert row is not None
    assert row.cells == {"file": {"mime": "application/pdf", "size": 2},
                         "match0": {"doi": "10.1234/x"}}
    assert row.sha1hex == hexkey and row.base32 == base32
    assert row.to_json()["key"] == base32 and row.to_json()["sha1hex"] == hexkey
    # at rest: 20 raw bytes
    with engine.connect() as conn:
        stored = conn.execute(select(pdftable_cells.c.row_key,
                                     octet_length(pdftable_cells.c.row_key))).all()
    assert {(bytes(k), n) for k, n in stored} == {(raw, 20)}


@pytest.mark.parametrize("bad", [
    "a" * 39, "a" * 41, "g" * 40, "z" * 40, "0123456789abcdef0123456789abcdef0123456x",
    "A" * 31 + "1", "A" * 31 + "8", "A" * 31 + "0", "A" * 33, "", "sha1:", "sha1:" + "a" * 39,
    b"\x00" * 19, b"\x00" * 21, b"", None, 12345, 1.5, ["a" * 40],
])
def test_bad_keys_are_rejected(engine: Engine, table: PdfTable, bad: Any) -> None:
    with pytest.raises(InvalidName) as exc:
        table.put(bad, {"file": {"size": 1}})
    assert exc.value.status == "bad-sha1"
    for call in (lambda: table.get(bad), lambda: table.delete(bad),
                 lambda: table.put_many([(sha1(1), {"file": {"size": 1}}),
                                         (bad, {"file": {"size": 1}})])):
        with pytest.raises(InvalidName) as exc:
            call()
        assert exc.value.status == "bad-sha1"
    assert cells(engine) == 0  # not even the good row of the failed put_many


# -- columns and values ------------------------------------------------------------------


def test_put_columns_then_others(engine: Engine, table: PdfTable) -> None:
    key = sha1("row")
    cdx = cdx_record(1)
    table.put(key, {"file": {"mime": "application/pdf", "size": 1000, "cdx": cdx}})
    table.put(key, {"grobid0": {"status_code": 200, "quality": "good",
                                "status": {"status": "success"}}})
    table.put(key, {"match0": {"mstatus": "match", "doi": "10.1234/abc",
                               "minfo": {"score": 0.9, "via": ["title"]}}})
    row = table.get(key)
    assert row is not None
    assert row.cells == {
        "file": {"mime": "application/pdf", "size": 1000, "cdx": cdx},
        "grobid0": {"status_code": 200, "quality": "good", "status": {"status": "success"}},
        "match0": {"mstatus": "match", "doi": "10.1234/abc",
                   "minfo": {"score": 0.9, "via": ["title"]}},
    }
    assert cells(engine) == 9
    # one version per cell: a re-put replaces the value, the cell count stays
    table.put(key, {"file": {"size": 2000}, "grobid0": {"status_code": -1}})
    assert cells(engine) == 9
    row = table.get(key)
    assert row is not None
    assert row.cells["file"] == {"mime": "application/pdf", "size": 2000, "cdx": cdx}
    assert row.cells["grobid0"]["status_code"] == -1
    # within one put_many the later write of a cell wins
    assert table.put_many([(key, {"file": {"size": 1}}), (key.hex(), {"file": {"size": 3}})]) == 1
    assert table.get(key, ["file:size"]).cells == {"file": {"size": 3}}  # type: ignore[union-attr]
    # filters: whole families and single columns, mixed
    assert set(table.get(key, ["file"]).cells) == {"file"}  # type: ignore[union-attr]
    got = table.get(key, ["file:mime", "grobid0:quality", "match0"])
    assert got is not None and got.cells == {
        "file": {"mime": "application/pdf"}, "grobid0": {"quality": "good"},
        "match0": {"mstatus": "match", "doi": "10.1234/abc",
                   "minfo": {"score": 0.9, "via": ["title"]}}}
    # a filter matching nothing in an existing row: no row
    assert table.get(key, ["f"]) is None
    assert table.get(sha1("absent")) is None


@pytest.mark.parametrize(("cells_", "status"), [
    ({"grobid": {"status": {}}}, "unknown-family"),
    ({"key": {"x": 1}}, "unknown-family"),
    ({"file": {"status": "x"}}, "unknown-column"),
    ({"match0": {"status": "x"}}, "unknown-column"),
])
def test_unknown_family_or_column(engine: Engine, table: PdfTable, cells_: dict,
                                  status: str) -> None:
    with pytest.raises(InvalidName) as exc:
        table.put(sha1(1), {"file": {"size": 1}, **cells_})
    assert exc.value.status == status
    assert cells(engine) == 0


@pytest.mark.parametrize(("spec", "status"), [
    ("nope", "unknown-family"), ("nope:x", "unknown-family"), ("file:nope", "unknown-column"),
    ("grobid0:mime", "unknown-column"),
])
def test_unknown_column_filters(table: PdfTable, spec: str, status: str) -> None:
    table.put(sha1(1), {"file": {"size": 1}})
    for call in (lambda: table.get(sha1(1), [spec]), lambda: list(table.scan(columns=[spec])),
                 lambda: table.delete(sha1(1), [spec])):
        with pytest.raises(InvalidName) as exc:
            call()
        assert exc.value.status == status
    assert table.get(sha1(1)).cells == {"file": {"size": 1}}  # type: ignore[union-attr]


@pytest.mark.parametrize("cells_", [
    {"file": {"size": "1000"}},
    {"file": {"size": True}},
    {"file": {"size": 1.0}},
    {"file": {"size": 2**63}},
    {"file": {"size": None}},
    {"grobid0": {"status_code": False}},
    {"file": {"mime": 7}},
    {"file": {"mime": b"application/pdf"}},
    {"match0": {"doi": None}},
    {"f": {"c": {"u": "http://example.org/"}}},
    {"f": {"c": {"d": "2017-07-06T00:59:50Z"}}},
    {"f": {"c": "http://example.org/"}},
    {"f": {"c": ["u", "d"]}},
    {"file": {"cdx": {k: v for k, v in cdx_record(1).items() if k != "c_size"}}},
    {"file": {"cdx": {k: v for k, v in cdx_record(1).items() if k != "surt"}}},
    {"file": {"cdx": {}}},
])
def test_bad_values(engine: Engine, table: PdfTable, cells_: dict) -> None:
    # a good family first: the whole put must fail, not only the bad cell
    good = {"match0": {"mstatus": "x"}} if "match0" not in cells_ else {"f": {"c": {
        "u": "http://example.org/", "d": "2017"}}}
    with pytest.raises(RecordError) as exc:
        table.put(sha1(1), {**good, **cells_})
    assert exc.value.status == "bad-value"
    assert not isinstance(exc.value, InvalidName)
    assert cells(engine) == 0  # nothing of the row was written


def test_values_at_rest(engine: Engine, table: PdfTable, shared_data: Path) -> None:
    key = sha1("at-rest")
    tei = (FIXTURES / TEI_FIXTURE).read_text("utf-8")
    status = {"status": "success", "pages": 12, "note": "ünïcödé"}
    table.put(key, {
        "grobid0": {"tei_xml": tei, "status": status, "status_code": 200, "quality": "good"},
        "file": {"size": 2**40 + 5, "mime": "application/pdf", "cdx": cdx_record(7)},
        "match0": {"doi": "10.1234/ünï"},
    })
    # grobid0 is compressed: zlib data that inflates to the value's stored form
    raw_tei = raw_value(engine, table, key, "grobid0", "tei_xml")
    assert raw_tei[:1] == b"\x78"  # zlib header
    assert zlib.decompress(raw_tei) == tei.encode("utf-8")
    assert len(raw_tei) < len(tei.encode("utf-8")) // 2
    # its small columns are plain: the views of the original system's relations
    # read them in SQL (docs/api.md)
    raw_status = raw_value(engine, table, key, "grobid0", "status")
    assert orjson.loads(raw_status) == status
    raw_code = raw_value(engine, table, key, "grobid0", "status_code")
    assert raw_code == (200).to_bytes(8, "big")
    assert raw_value(engine, table, key, "grobid0", "quality") == b"good"
    # other families are stored plain, as HBase would hold them
    assert raw_value(engine, table, key, "file", "size") == (2**40 + 5).to_bytes(8, "big")
    assert raw_value(engine, table, key, "file", "mime") == b"application/pdf"
    assert orjson.loads(raw_value(engine, table, key, "file", "cdx")) == cdx_record(7)
    assert raw_value(engine, table, key, "match0", "doi") == "10.1234/ünï".encode()
    # and read back decoded
    row = table.get(key)
    assert row is not None
    assert row.cells["grobid0"]["tei_xml"] == tei
    assert row.cells["grobid0"]["status"] == status
    assert row.cells["file"]["size"] == 2**40 + 5
    table.put(key, {"grobid0": {"status_code": -2**63}})
    assert table.get(key, ["grobid0:status_code"]).cells == {  # type: ignore[union-attr]
        "grobid0": {"status_code": -2**63}}


@pytest.mark.parametrize(("family", "qual", "garbage"), [
    ("grobid0", "tei_xml", b"this is not zlib data"),
    ("grobid0", "status", b"{not json"),
    ("grobid0", "quality", b"\xff\xfe bad utf-8"),
    ("file", "cdx", b"{\"surt\": "),
    ("file", "mime", b"\xc3\x28"),
], ids=["not-zlib", "not-json", "not-utf8-plain", "truncated-json", "not-utf8"])
def test_corrupt_value(engine: Engine, table: PdfTable, family: str, qual: str,
                       garbage: bytes) -> None:
    keys = sorted(sha1(n) for n in range(5))
    for k in keys:
        table.put(k, {"grobid0": {"tei_xml": "<TEI/>", "status": {"ok": 1}, "quality": "good"},
                      "file": {"mime": "application/pdf", "cdx": cdx_record(1)}})
    bad = keys[2]
    c = pdftable_cells.c
    with engine.begin() as conn:
        done = conn.execute(
            update(pdftable_cells)
            .where(c.row_key == bad, c.family == family, c.qualifier == qual)
            .values(value=garbage)
        ).rowcount
    assert done == 1
    with pytest.raises(CorruptData) as exc:
        table.get(bad)
    assert b32(bad) in str(exc.value) and f"{family}:{qual}" in str(exc.value)
    assert exc.value.status == "corrupt-data"
    with pytest.raises(CorruptData):
        list(table.scan())
    # the other rows, and the row's other columns, are still readable
    before = [r.key for r in table.scan(stop=bad)]
    after = [r.key for r in table.scan(start=bad + b"\x00")]
    assert before + after == keys[:2] + keys[3:]
    other = "file" if family == "grobid0" else "grobid0"
    row = table.get(bad, [other])
    assert row is not None and set(row.cells) == {other}


# -- scan and delete ---------------------------------------------------------------------


def test_scan_order_bounds_filters(table: PdfTable) -> None:
    keys = [sha1(n) for n in range(30)]
    table.put_many((k, {"file": {"size": i}, "match0": {"doi": f"10.1/{i}"}})
                   for i, k in enumerate(keys))
    ordered = sorted(keys)
    assert [r.key for r in table.scan()] == ordered
    lo, hi = ordered[5], ordered[20]
    for start in (lo, lo.hex(), lo.hex().upper(), b32(lo), b32(lo).lower(), f"sha1:{lo.hex()}"):
        for stop in (hi, hi.hex(), b32(hi), f"sha1:{b32(hi)}"):
            assert [r.key for r in table.scan(start, stop)] == ordered[5:20]
    assert [r.key for r in table.scan(start=lo)] == ordered[5:]
    assert [r.key for r in table.scan(stop=hi)] == ordered[:20]
    assert [r.key for r in table.scan(lo, lo)] == []
    # byte order, with a raw-byte prefix as a bound
    assert [r.key for r in table.scan(start=b"\x80")] == [k for k in ordered if k[0] >= 0x80]
    assert [r.key for r in table.scan(stop=b"\x80")] == [k for k in ordered if k[0] < 0x80]
    # limit
    assert [r.key for r in table.scan(limit=3)] == ordered[:3]
    assert [r.key for r in table.scan(lo, limit=4)] == ordered[5:9]
    assert [r.key for r in table.scan(limit=100)] == ordered
    assert list(table.scan(limit=0)) == []
    # family and column filters
    rows = list(table.scan(columns=["match0"], limit=5))
    assert [set(r.cells) for r in rows] == [{"match0"}] * 5
    rows = list(table.scan(columns=["file:size"]))
    assert {keys.index(r.key): r.cells["file"]["size"] for r in rows} == {i: i for i in range(30)}
    assert list(table.scan(columns=["grobid0"])) == []
    with pytest.raises(InvalidName):
        list(table.scan(start="not-a-key"))


def test_scan_streams_many_rows(table: PdfTable) -> None:
    n = 5000
    keys = [sha1(f"many-{i}") for i in range(n)]
    written = table.put_many(
        (k, {"file": {"size": i, "mime": "application/pdf"}}) for i, k in enumerate(keys))
    assert written == 2 * n
    assert table.count_rows() == n
    index = {k: i for i, k in enumerate(keys)}
    prev = b""
    seen = 0
    for row in table.scan():  # 10,000 cells: rows must not be split across fetched batches
        assert row.key > prev
        assert row.cells == {"file": {"size": index[row.key], "mime": "application/pdf"}}
        prev = row.key
        seen += 1
    assert seen == n
    sizes = {r.key: r.cells["file"]["size"] for r in table.scan(columns=["file:size"])}
    assert sizes == {k: i for i, k in enumerate(keys)}


def test_delete(engine: Engine, table: PdfTable) -> None:
    a, b = sha1("a"), sha1("b")
    for k in (a, b):
        table.put(k, {"file": {"size": 1, "mime": "application/pdf", "cdx": cdx_record(1)},
                      "grobid0": {"status_code": 200, "quality": "good"},
                      "match0": {"doi": "10.1/x"}})
    assert cells(engine) == 12
    assert table.delete(a, ["file:cdx"]) == 1
    assert table.get(a, ["file"]).cells == {  # type: ignore[union-attr]
        "file": {"size": 1, "mime": "application/pdf"}}
    assert table.delete(a, ["grobid0"]) == 2
    assert table.delete(a, ["grobid0"]) == 0
    assert table.delete(a.hex(), ["file:size", "match0"]) == 2
    assert table.get(a).cells == {"file": {"mime": "application/pdf"}}  # type: ignore[union-attr]
    assert table.delete(b32(a)) == 1
    assert table.get(a) is None
    assert table.delete(a) == 0
    assert table.get(b) is not None and cells(engine) == 6
    assert table.delete(b) == 6
    assert table.count_rows() == 0 and cells(engine) == 0


# -- schema definition rules -------------------------------------------------------------


def test_pdf_schema_matches_the_seed() -> None:
    assert [f.name for f in PDF_SCHEMA.families] == ["f", "file", "grobid0", "pdf0", "html0",
                                                     "match0", "extract0"]
    assert list(PDF_SCHEMA.family("f").columns) == ["c"]
    assert PDF_SCHEMA.family("f").columns["c"].required == ("u", "d")
    assert set(PDF_SCHEMA.family("file").columns) == {"size", "mime", "cdx"}
    assert PDF_SCHEMA.family("file").columns["cdx"].required == (
        "surt", "url", "dt", "warc", "offset", "c_size")
    assert set(PDF_SCHEMA.family("grobid0").columns) == {
        "status_code", "quality", "status", "tei_xml", "tei_json", "metadata"}
    assert set(PDF_SCHEMA.family("match0").columns) == {"mstatus", "doi", "minfo"}
    # the seed's future "is this a PDF?" step, declared like any new family
    assert set(PDF_SCHEMA.family("pdf0").columns) == {"pdf_status", "pdf_meta", "text"}
    assert set(PDF_SCHEMA.family("extract0").columns) == {"xstatus", "xheader", "xrefs", "xinfo"}
    assert set(PDF_SCHEMA.family("html0").columns) == {"html_status", "html_meta"}
    # the small columns of the compressed families are plain: the API's views read them
    plain = {(f.name, q) for f in PDF_SCHEMA.families if f.compressed
             for q, c in f.columns.items() if not c.deflated(f)}
    assert plain == {("grobid0", "status_code"), ("grobid0", "quality"), ("grobid0", "status"),
                     ("grobid0", "metadata"), ("pdf0", "pdf_status"), ("pdf0", "pdf_meta")}
    assert [f.name for f in PDF_SCHEMA.families if f.compressed] == ["grobid0", "pdf0",
                                                                      "extract0"]
    columns = [c for f in PDF_SCHEMA.families for c in f.columns]
    assert len(columns) == len(set(columns))


def test_duplicate_column_across_families() -> None:
    with pytest.raises(SchemaError) as exc:
        TableSchema((Family("grobid0", {"status": Col("json")}),
                     Family("match0", {"status": Col("str")})))
    assert "grobid0" in str(exc.value) and "match0" in str(exc.value)
    assert "status" in str(exc.value)
    for col in ("status", "mime", "c", "doi"):
        with pytest.raises(SchemaError) as exc:
            PDF_SCHEMA.with_family(Family("ocr0", {"pages": Col("int"), col: Col("str")}))
        assert "ocr0" in str(exc.value)
        owner = {"status": "grobid0", "mime": "file", "c": "f", "doi": "match0"}[col]
        assert repr(owner) in str(exc.value)
    # also when the clash comes after an allowed numbered version
    with pytest.raises(SchemaError):
        PDF_SCHEMA.with_family(Family("grobid1", {"status": Col("json")})).with_family(
            Family("ocr0", {"status": Col("str")}))


def test_numbered_versions_may_share_names() -> None:
    schema = PDF_SCHEMA.with_family(
        Family("grobid1", {"status": Col("json"), "tei_xml": Col("str"), "extra": Col("int")},
               compressed=True))
    assert schema.column("grobid1", "status").type == "json"
    assert schema.with_family(Family("match1", {"doi": Col("str")})).family("match1")


@pytest.mark.parametrize("families", [
    (Family("file", {"size": Col("int")}), Family("file", {"other": Col("str")})),
    (Family("key", {"x": Col("str")}),),
    (Family("sha1hex", {"x": Col("str")}),),
    (Family("Bad-Name", {"x": Col("str")}),),
    (Family("ocr0", {"Bad-Name": Col("str")}),),
    (Family("ocr0", {"key": Col("str")}),),
    (Family("ocr0", {"a:b": Col("str")}),),
    (Family("0pdf", {"x": Col("str")}),),
    (Family("", {"x": Col("str")}),),
    (Family("ocr0", {"": Col("str")}),),
])
def test_bad_declarations(families: tuple[Family, ...]) -> None:
    with pytest.raises(SchemaError):
        TableSchema(families)
    with pytest.raises(SchemaError):
        TableSchema(PDF_SCHEMA.families + families)


def test_family_declared_twice_via_with_family() -> None:
    with pytest.raises(SchemaError, match="twice"):
        PDF_SCHEMA.with_family(Family("match0", {"mstatus2": Col("str")}))


def test_new_family_end_to_end(engine: Engine) -> None:
    ocr0 = Family("ocr0", {"ocr_status": Col("str"), "pages": Col("int"),
                           "info": Col("json", ("ok",)), "blob": Col("bytes")})
    extended = PdfTable(engine, NAME, schema=PDF_SCHEMA.with_family(ocr0))
    key = sha1("ocr0")
    extended.put(key, {"ocr0": {"ocr_status": "is-pdf", "pages": 12, "info": {"ok": True},
                                "blob": b"\x00\xff"},
                       "file": {"mime": "application/pdf"}})
    row = extended.get(key, ["ocr0"])
    assert row is not None and row.cells == {"ocr0": {
        "ocr_status": "is-pdf", "pages": 12, "info": {"ok": True}, "blob": b"\x00\xff"}}
    assert extended.get(key, ["ocr0:pages"]).cells == {"ocr0": {"pages": 12}}  # type: ignore[union-attr]
    with pytest.raises(RecordError):
        extended.put(key, {"ocr0": {"info": {"nope": 1}}})
    # a table opened with the plain schema still reads the row: ocr0 shown raw
    plain = PdfTable(engine, NAME)
    row = plain.get(key)
    assert row is not None
    assert row.cells["file"] == {"mime": "application/pdf"}
    assert row.cells["ocr0"] == {"ocr_status": b"is-pdf", "pages": (12).to_bytes(8, "big"),
                                 "info": b'{"ok":true}', "blob": b"\x00\xff"}
    as_json = orjson.loads(orjson.dumps(row.to_json()))
    assert as_json["ocr0"]["pages"] == (12).to_bytes(8, "big").hex()
    assert [r.key for r in plain.scan()] == [key]
    # but cannot address it, nor write it
    with pytest.raises(InvalidName):
        plain.get(key, ["ocr0"])
    with pytest.raises(InvalidName):
        plain.put(key, {"ocr0": {"pages": 1}})
    # the plain table can still delete the whole row, undeclared cells included
    assert plain.delete(key) == 5


# -- capture history (f:c) ---------------------------------------------------------------


def test_capture_history(table: PdfTable) -> None:
    history = CaptureHistory(table)
    digest = sha1("capture")
    assert history.lookup(digest) is None
    first = {"u": "http://example.org/a.pdf", "d": "2017-07-06T00:59:50Z",
             "f": "CRAWL-1.warc.gz", "o": 1234, "i": "<urn:uuid:1>"}
    assert history.record(digest.hex(), url=first["u"], date=first["d"], warc=first["f"],
                          offset=first["o"], record_id=first["i"]) is None
    capture = Capture("http://example.org/a.pdf", "2017-07-06T00:59:50Z",
                      warc="CRAWL-1.warc.gz", offset=1234, record_id="<urn:uuid:1>")
    assert history.lookup(b32(digest)) == capture
    assert capture.to_cell() == first
    assert table.get(digest).cells == {"f": {"c": first}}  # type: ignore[union-attr]
    dup = history.record(digest, url="http://mirror.example.org/a.pdf",
                         date="2018-01-01T00:00:00Z")
    assert dup == replace(capture, dupes=1)
    assert history.record(b32(digest).lower(), url="http://x.org/", date="2019") == replace(
        capture, dupes=2)
    assert history.lookup(digest) == replace(capture, dupes=2)
    assert table.get(digest).cells == {"f": {"c": {**first, "c": 2}}}  # type: ignore[union-attr]
    # optional fields are left out, not stored as null
    other = sha1("capture-2")
    assert history.record(other, url="http://example.org/b.pdf", date="2017") is None
    assert history.lookup(other) == Capture("http://example.org/b.pdf", "2017")
    assert table.get(other).cells == {  # type: ignore[union-attr]
        "f": {"c": {"u": "http://example.org/b.pdf", "d": "2017"}}}
    # a missing url or date is refused and nothing is stored
    third = sha1("capture-3")
    for kwargs in ({"url": "", "date": "2017"}, {"url": "http://x.org/", "date": ""}):
        with pytest.raises(RecordError) as exc:
            history.record(third, **kwargs)
        assert exc.value.status == "bad-value"
    assert history.lookup(third) is None
    with pytest.raises(InvalidName):
        history.record("nope", url="http://x.org/", date="2017")
    # other cells of the row are not touched
    table.put(digest, {"file": {"size": 5}})
    history.record(digest, url="http://x.org/", date="2020")
    assert table.get(digest).cells == {  # type: ignore[union-attr]
        "f": {"c": {**first, "c": 3}}, "file": {"size": 5}}


def test_capture_history_concurrent(migrated_db_url: str) -> None:
    """Four crawlers record the same new content at once: on both backends one of them
    stores the first capture and every duplicate is counted exactly once."""
    engine = make_engine(migrated_db_url)
    try:
        digest = sha1("concurrent")
        results: list[Capture | None] = []
        errors: list[BaseException] = []
        lock = threading.Lock()
        barrier = threading.Barrier(4)

        def crawler(n: int) -> None:
            history = CaptureHistory(PdfTable(engine, NAME))  # each its own handle
            try:
                barrier.wait()
                for i in range(25):
                    got = history.record(digest, url=f"http://example.org/{n}/{i}",
                                         date="2017-07-06T00:59:50Z")
                    with lock:
                        results.append(got)
            except BaseException as e:  # reported below
                errors.append(e)

        threads = [threading.Thread(target=crawler, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        assert len(results) == 100
        firsts = [r for r in results if r is None]
        assert len(firsts) == 1
        counts = sorted(r.dupes for r in results if r is not None)
        assert counts == list(range(1, 100))  # every duplicate counted exactly once
        final = CaptureHistory(PdfTable(engine, NAME)).lookup(digest)
        assert final is not None and final.dupes == 99
        assert {r.url for r in results if r is not None} == {final.url}
        assert PdfTable(engine, NAME).count_rows() == 1
    finally:
        engine.dispose()


# -- CLI: backfill-cdx -------------------------------------------------------------------


def summary(stderr: str) -> tuple[int, dict[str, int]]:
    m = re.search(r"^pdftable backfill-cdx: (\d+) records in [^:]*?(?:: (.*))?$", stderr, re.M)
    assert m, stderr
    counts = {}
    for part in (m.group(2) or "").split(", "):
        if part:
            status, n = part.rsplit(" ", 1)
            counts[status] = int(n)
    return int(m.group(1)), counts


def expected_backfill(lines: list[bytes],
                      mimetypes: frozenset[str] = frozenset()) -> tuple[Counter, dict]:
    """What backfill-cdx must do with well-formed 11-field lines, computed here."""
    statuses: Counter = Counter()
    rows: dict[bytes, dict[str, Any]] = {}
    for line in lines:
        f = line.decode().split(" ")
        assert len(f) == 11
        if f[3] == "warc/revisit":
            statuses["skip-revisit"] += 1
        elif f[4] != "200":
            statuses["skip-status"] += 1
        elif mimetypes and normalize_mime(f[3]) not in mimetypes:
            statuses["skip-mime"] += 1
        else:
            statuses["success"] += 1
            rows[base64.b32decode(f[5])] = {
                "mime": normalize_mime(f[3]),
                "cdx": {"surt": f[0], "dt": f[1], "url": f[2], "c_size": f[8],
                        "offset": f[9], "warc": f[10]},
            }
    return statuses, rows


def all_rows(engine: Engine, name: str = CLI_TABLE) -> dict[bytes, dict]:
    return {r.key: r.cells for r in PdfTable(engine, name).scan()}


@pytest.fixture
def example_cdx(shared_data: Path) -> Path:
    return FIXTURES / "example.cdx"


def test_backfill_cdx(engine: Engine, migrated_db_url: str, example_cdx: Path,
                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SANDCRAWLER_DATABASE_URL", migrated_db_url)
    lines = [ln for ln in example_cdx.read_bytes().splitlines() if ln.strip()]
    statuses, expected = expected_backfill(lines)
    assert statuses["success"] > 0 and statuses["skip-status"] > 0  # the file has both

    result = invoke(["pdftable", "backfill-cdx", str(example_cdx)])
    assert result.exit_code == 0, result.stderr
    total, counts = summary(result.stderr)
    assert total == len(lines)
    assert counts == dict(statuses)
    assert "bad-cdx" not in result.stderr and "internal-error" not in result.stderr
    rows = all_rows(engine)
    assert set(rows) == set(expected)
    for key, want in expected.items():
        assert rows[key] == {"file": want}
        assert list(rows[key]["file"]["cdx"]) == ["surt", "url", "dt", "warc", "offset",
                                                   "c_size"]
        assert all(isinstance(v, str) for v in rows[key]["file"]["cdx"].values())
    first_run = rows
    n_cells = cells(engine)
    assert n_cells == 2 * len(expected)

    # re-running changes nothing
    again = invoke(["pdftable", "backfill-cdx", str(example_cdx)])
    assert again.exit_code == 0
    assert summary(again.stderr)[1] == dict(statuses)
    assert cells(engine) == n_cells and all_rows(engine) == first_run

    # from stdin, same result
    piped = invoke(["pdftable", "backfill-cdx", "-"], input=example_cdx.read_bytes())
    assert piped.exit_code == 0, piped.stderr
    assert summary(piped.stderr) == (len(lines), dict(statuses))
    assert cells(engine) == n_cells and all_rows(engine) == first_run

    # the rows are there for `pdftable get`
    some = next(iter(expected))
    got = invoke(["pdftable", "get", b32(some)])
    assert got.exit_code == 0
    assert orjson.loads(got.stdout)["file"] == expected[some]


def test_backfill_cdx_bad_lines(engine: Engine, migrated_db_url: str, example_cdx: Path,
                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SANDCRAWLER_DATABASE_URL", migrated_db_url)
    assert invoke(["pdftable", "backfill-cdx", str(example_cdx)]).exit_code == 0
    first_run = all_rows(engine)
    assert first_run

    template = next(ln for ln in example_cdx.read_bytes().splitlines()
                    if ln.split(b" ")[4] == b"200").split(b" ")

    def line(n: int, **change: bytes) -> bytes:
        f = list(template)
        f[0] = b"org,example)/new/%d.pdf" % n
        f[2] = b"http://example.org/new/%d.pdf" % n
        f[5] = b32(sha1(f"new-{n}")).encode()
        f[9] = str(1000 + n).encode()
        for i, name in enumerate(("surt", "dt", "url", "mime", "status", "digest", "redirect",
                                  "meta", "c_size", "offset", "warc")):
            if name in change:
                f[i] = change[name]
        return b" ".join(f)

    good = [line(1), line(2, mime=b"application/x-pdf"), line(3, mime=b"Application/PDF")]
    bad_10 = b" ".join(line(4).split(b" ")[:10])
    bad_12 = line(5) + b" extra"
    inputs: list[tuple[bytes, str | None]] = [
        (b" CDX N b a m s k r M S V g", "skip-header"),
        (good[0], "success"),
        (bad_10, "bad-cdx"),
        (b"", None),
        (bad_12, "bad-cdx"),
        (line(6, digest=b"NOTASHA1"), "bad-cdx"),
        (line(7, digest=b"1" * 32), "bad-cdx"),
        (line(8, dt=b"2017070600595"), "bad-cdx"),
        (line(9, dt=b"2017-07-06T0059"), "bad-cdx"),
        (good[1], "success"),
        (line(10, offset=b"12x"), "bad-cdx"),
        (line(17, offset="1²".encode()), "bad-cdx"),  # str.isdigit() says yes, int() no
        (line(18, dt="２０１７０７０６００５９５０".encode()), "bad-cdx"),  # full-width digits
        (line(19, status="２００".encode()), "bad-cdx"),
        (line(11, c_size=b"-5"), "bad-cdx"),
        (line(12, url=b"http://example.org/\xff\xfe.pdf"), "bad-cdx"),
        (b"   ", None),
        (line(13, mime=b"warc/revisit", status=b"-"), "skip-revisit"),
        (line(14, status=b"404"), "skip-status"),
        (line(15, status=b"2OO"), "bad-cdx"),
        (line(16, warc=b"-"), "bad-cdx"),
        (b"garbage", "bad-cdx"),
        (good[2], "success"),
        (b"", None),
    ]
    data = b"\n".join(text for text, _ in inputs) + b"\n"
    result = invoke(["pdftable", "backfill-cdx", "-"], input=data)
    assert result.exit_code == 0, result.stderr
    want = Counter(status for _, status in inputs if status)
    total, counts = summary(result.stderr)
    assert total == sum(want.values())
    assert counts == dict(want)
    for n, (_, status) in enumerate(inputs, start=1):
        if status == "bad-cdx":
            assert re.search(rf"^line {n}: bad-cdx: ", result.stderr, re.M), (n, result.stderr)
        else:
            assert not re.search(rf"^line {n}: ", result.stderr, re.M), (n, result.stderr)
    assert "Traceback" not in result.stderr
    rows = all_rows(engine)
    new = {k: v for k, v in rows.items() if k not in first_run}
    assert set(new) == {sha1("new-1"), sha1("new-2"), sha1("new-3")}
    assert {v["file"]["mime"] for v in new.values()} == {"application/pdf"}
    assert new[sha1("new-2")]["file"]["cdx"]["url"] == "http://example.org/new/2.pdf"
    assert {k: rows[k] for k in first_run} == first_run  # the first run's rows unchanged


def test_backfill_cdx_mimetype_filter(engine: Engine, migrated_db_url: str, example_cdx: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SANDCRAWLER_DATABASE_URL", migrated_db_url)
    lines = [ln for ln in example_cdx.read_bytes().splitlines() if ln.strip()]
    only_pdf = frozenset({"application/pdf"})
    statuses, expected = expected_backfill(lines, only_pdf)
    assert statuses["skip-mime"] > 0
    result = invoke(["pdftable", "backfill-cdx", "--mimetype", "Application/X-PDF",
                     str(example_cdx)])
    assert result.exit_code == 0, result.stderr
    assert summary(result.stderr)[1] == dict(statuses)
    rows = all_rows(engine)
    assert set(rows) == set(expected)
    assert {r["file"]["mime"] for r in rows.values()} == {"application/pdf"}


# -- CLI: get, scan, delete, schema ------------------------------------------------------


def test_cli_get_scan_delete(engine: Engine, migrated_db_url: str,
                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SANDCRAWLER_DATABASE_URL", migrated_db_url)
    table = PdfTable(engine, CLI_TABLE)
    keys = sorted(sha1(f"cli-{n}") for n in range(6))
    for i, k in enumerate(keys):
        table.put(k, {"file": {"mime": "application/pdf", "size": i},
                      "grobid0": {"status_code": 200}})
    k = keys[0]
    want = {"key": b32(k), "sha1hex": k.hex(),
            "file": {"mime": "application/pdf", "size": 0}, "grobid0": {"status_code": 200}}
    for form in (k.hex(), k.hex().upper(), b32(k), b32(k).lower()):
        result = invoke(["pdftable", "get", form])
        assert result.exit_code == 0, result.stderr
        assert orjson.loads(result.stdout) == want
    result = invoke(["pdftable", "get", k.hex(), "-c", "file:mime"])
    assert orjson.loads(result.stdout) == {"key": b32(k), "sha1hex": k.hex(),
                                           "file": {"mime": "application/pdf"}}
    missing = sha1("missing")
    result = invoke(["pdftable", "get", missing.hex()])
    assert result.exit_code == 1
    assert result.stdout == ""
    assert f"no row {missing.hex()}" in result.stderr and "Traceback" not in result.stderr
    for bad in (["get", "abc"], ["get", k.hex(), "-c", "nope"], ["scan", "--start", "xyz"]):
        result = invoke(["pdftable", *bad])
        assert result.exit_code == 1, bad
        assert result.stderr.startswith("Error: ") and "Traceback" not in result.stderr

    def scanned(*args: str) -> list[str]:
        result = invoke(["pdftable", "scan", *args])
        assert result.exit_code == 0, result.stderr
        return [orjson.loads(ln)["sha1hex"] for ln in result.stdout.splitlines()]

    hexes = [x.hex() for x in keys]
    assert scanned() == hexes
    assert scanned("--start", hexes[1], "--stop", b32(keys[4])) == hexes[1:4]
    assert scanned("--start", b32(keys[1]).lower(), "--limit", "2") == hexes[1:3]
    assert scanned("--limit", "0") == []
    result = invoke(["pdftable", "scan", "-c", "grobid0", "--limit", "1"])
    assert orjson.loads(result.stdout) == {"key": b32(k), "sha1hex": k.hex(),
                                           "grobid0": {"status_code": 200}}

    result = invoke(["pdftable", "delete", b32(k), "-c", "file:size"])
    assert result.exit_code == 0 and "1 cell(s) deleted" in result.stderr
    assert table.get(k).cells == {  # type: ignore[union-attr]
        "file": {"mime": "application/pdf"}, "grobid0": {"status_code": 200}}
    result = invoke(["pdftable", "delete", k.hex()])
    assert result.exit_code == 0 and "2 cell(s) deleted" in result.stderr
    assert table.get(k) is None
    result = invoke(["pdftable", "delete", k.hex()])
    assert result.exit_code == 0 and "0 cell(s) deleted" in result.stderr
    assert table.count_rows() == 5


def test_cli_schema(engine: Engine) -> None:
    result = invoke(["pdftable", "schema"])
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert f"table: {CLI_TABLE}" in out
    families = re.findall(r"^(\w+)( \(compressed\))?: ", out, re.M)
    assert families == [("table", ""), ("f", ""), ("file", ""), ("grobid0", " (compressed)"),
                        ("pdf0", " (compressed)"), ("html0", ""), ("match0", ""),
                        ("extract0", " (compressed)")]
    columns = re.findall(r"^  (\w+:\w+)\s+(\w+)", out, re.M)
    # a compressed family's small columns, read by the API's views, are plain
    assert re.search(r"^  grobid0:status_code\s+int\s+plain ", out, re.M)
    assert re.search(r"^  grobid0:tei_xml\s+str\s+[^p]", out, re.M)
    assert ("f:c", "json") in columns and ("file:size", "int") in columns
    assert ("grobid0:tei_xml", "str") in columns and ("match0:minfo", "json") in columns
    assert len(columns) == sum(len(f.columns) for f in PDF_SCHEMA.families)
