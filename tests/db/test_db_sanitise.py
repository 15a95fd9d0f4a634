"""Strings the database cannot hold (issue 22, item 4): PostgreSQL refuses a NUL in
``text`` and ``\\u0000`` (or a lone surrogate escape) in ``jsonb``, and no driver can
encode a lone surrogate. Every value bound for the database is made storable in one
place (``db/types.py``): those characters become U+FFFD, in text columns, in JSON at
any depth (keys too), through SQLAlchemy statements and PostgreSQL's COPY alike, so
both backends store the same."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from sqlalchemy import Engine, insert, select, text

from sandcrawler.core.jsontext import RawJSON
from sandcrawler.core.work import Rows
from sandcrawler.db.engine import make_engine
from sandcrawler.db.persist import write_tables
from sandcrawler.db.schema import catalogue, crossref, grobid_refs, web_cdx
from sandcrawler.db.types import storable_json, storable_text
from sandcrawler.records.refs import CrossrefRow, ParsedRefs
from sandcrawler.storage.pdftable import PdfTable
from sandcrawler_testkit.pdfs import make_pdf
from tests.helpers.cli import invoke

# SQL: on SQLite and PostgreSQL
pytestmark = pytest.mark.both_backends

R = "\ufffd"


@pytest.mark.parametrize(("value", "stored"), [
    ("plain ascii", "plain ascii"),
    ("nul\x00inside", f"nul{R}inside"),
    ("\x00\x00", R + R),
    ("caf\xe9 \x00 \u4e2d", f"caf\xe9 {R} \u4e2d"),
    ("lone \ud800 high", f"lone {R} high"),
    ("lone \udcff low (os.fsdecode of a byte 0xff)", f"lone {R} low (os.fsdecode of a byte 0xff)"),
    ("a pair written apart \ud83d\ude00", f"a pair written apart {R}{R}"),
    ("\U0001f600 an astral character", "\U0001f600 an astral character"),
    # PostgreSQL takes the other control characters: they are data, kept
    ("tab\tnewline\ncr\rbell\x07del\x7fc1\x85", "tab\tnewline\ncr\rbell\x07del\x7fc1\x85"),
])
def test_storable_text(value: str, stored: str) -> None:
    assert storable_text(value) == stored
    stored.encode("utf-8")  # any driver can send it


def test_storable_json() -> None:
    value = {"t\x00itle": ["a\x00b", {"deep": ["\ud800", 1, None, True, 2.5]}], "ok": "fine"}
    expected = {f"t{R}itle": [f"a{R}b", {"deep": [R, 1, None, True, 2.5]}], "ok": "fine"}
    assert orjson.loads(storable_json(value)) == expected
    clean = {"a": ["b", 1]}
    assert storable_json(clean) == orjson.dumps(clean).decode()
    # JSON text passed through as it is, unless it escapes what jsonb refuses
    assert storable_json(RawJSON('{"a": "\\u0001 kept"}')) == '{"a": "\\u0001 kept"}'
    assert orjson.loads(storable_json(RawJSON('{"a\\u0000": "x\\u0000y", "b": "\\ud800"}'))) == {
        f"a{R}": f"x{R}y", "b": R}
    # an escaped backslash before u0000 is not a NUL: the value is kept
    assert orjson.loads(storable_json(RawJSON('{"a": "\\\\u0000"}'))) == {"a": "\\u0000"}
    # a pair written as escapes is one character
    assert orjson.loads(storable_json(RawJSON('"\\ud83d\\ude00"'))) == "\U0001f600"


def test_bulk_upserts_store_what_the_database_refuses(engine: Engine) -> None:
    """write_tables: COPY into a staging table on PostgreSQL, executemany on SQLite."""
    # a parsed reference's JSON (strings as read from a PDF: NUL and lone surrogates)
    ref = {"title": ["nul \x00 inside"], "k\x00ey": {"x": ["\ud800"]}}
    raw = RawJSON('{"DOI": "10.5555/raw", "title": ["\\u0000"], "s": "\\udc80"}')
    with engine.begin() as conn:
        write_tables(conn, [
            Rows((CrossrefRow(doi="10.5555/raw", indexed="2022-01-01T00:00:00Z",
                              record=raw),)),
            Rows((ParsedRefs(source="crossref", source_id="10.5555/nul\x00\ud800",
                             source_ts=None, refs_json=[ref]),)),
        ])
    with engine.connect() as conn:
        records = dict(conn.execute(select(crossref.c.doi, crossref.c.record)).all())
        refs = dict(conn.execute(select(grobid_refs.c.source_id, grobid_refs.c.refs_json)).all())
    assert records == {"10.5555/raw": {"DOI": "10.5555/raw", "title": [R], "s": R}}
    assert refs == {f"10.5555/nul{R}{R}": [{"title": [f"nul {R} inside"],
                                            f"k{R}ey": {"x": [R]}}]}


def test_statements_bind_through_the_same_types(engine: Engine) -> None:
    """A Core insert, and a lookup by the same string: both find the stored form."""
    url = "https://example.org/a\x00b\ud800"
    row = {"url": url, "datetime": "20240101000000", "surt": "org,example)/a\x00b",
           "status_code": 302, "location": "https://example.org/\x00", "warc_path": "w\x00",
           "warc_offset": 0, "warc_csize": 1}
    with engine.begin() as conn:
        conn.execute(insert(web_cdx), [row])
    with engine.connect() as conn:
        got = conn.execute(select(web_cdx.c.url, web_cdx.c.location, web_cdx.c.warc_path)
                           .where(web_cdx.c.url == url)).all()
    assert got == [(f"https://example.org/a{R}b{R}", f"https://example.org/{R}", f"w{R}")]


def test_pdftable_view_reads_cells_that_held_a_nul(pg_migrated_url: str) -> None:
    """The PDF table's cells are bytes, which PostgreSQL takes whatever they hold, but
    its view (``pdftable_files``, served by PostgREST) reads them as text and jsonb:
    one NUL in a file's MIME type or capture URL failed every query of the view."""
    engine = make_engine(pg_migrated_url)
    table = PdfTable(engine, "wbgrp-journal-extract-0-qa")
    cdx = {"surt": "org,example)/", "url": "https://example.org/\x00", "dt": "20240101000000",
           "warc": "w.warc.gz", "offset": "0", "c_size": "1"}
    table.put("a" * 40, {"file": {"size": 3, "mime": "application/pdf\x00", "cdx": cdx}})
    with engine.connect() as conn:
        got = conn.execute(text("SELECT mime, cdx->>'url' FROM pdftable_files")).all()
    assert got == [(f"application/pdf{R}", f"https://example.org/{R}")]
    # and read back through the table itself the same way
    row = table.get("a" * 40)
    assert row is not None and row.cells["file"]["mime"] == f"application/pdf{R}"
    engine.dispose()


def test_process_a_pdf_with_a_nul_in_its_title(engine: Engine, tmp_path: Path) -> None:
    """Issue 22: on PostgreSQL the catalogue upsert refused the title, after the PDF,
    its thumbnails and metadata were stored; every rerun failed the same way. Now the
    row is written, a rerun finds the file done, and a rebuild works."""
    pdf = tmp_path / "nul.pdf"
    pdf.write_bytes(make_pdf(["A paper with a broken title"], title="Broken\x00title"))
    for expected in ("success", "exists"):
        result = invoke(["process", str(pdf)])
        assert result.exit_code == 0, result.stderr
        (line,) = [orjson.loads(ln) for ln in result.stdout.splitlines()]
        assert line["status"] == expected, line
    with engine.connect() as conn:
        rows = conn.execute(select(catalogue.c.uuid, catalogue.c.title)).all()
    assert [title for _, title in rows] == [f"Broken{R}title"]
    result = invoke(["catalogue", "rebuild"])
    assert result.exit_code == 0, result.stderr
    result = invoke(["catalogue", "get", rows[0][0]])
    assert result.exit_code == 0, result.stderr
