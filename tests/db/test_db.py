"""Schema, migrations and upserts on SQLite and PostgreSQL."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import inspect, select, text
from sqlalchemy.exc import IntegrityError

from sandcrawler.core.jsontext import RawJSON
from sandcrawler.core.work import Rows
from sandcrawler.db import migrate
from sandcrawler.db.engine import make_engine
from sandcrawler.db.persist import write_tables
from sandcrawler.db.schema import crossref, grobid_refs, metadata
from sandcrawler.records.refs import CrossrefRow, GrobidRefsRow
from tests.helpers.cli import run_cli

# SQL: on SQLite and PostgreSQL
pytestmark = pytest.mark.both_backends


def test_migrations_create_the_schema(engine) -> None:  # type: ignore[no-untyped-def]
    insp = inspect(engine)
    assert set(insp.get_table_names()) >= {"crossref", "grobid_refs"}
    assert "crossref_with_refs" in insp.get_view_names()
    for name, table in metadata.tables.items():
        cols = {c["name"]: c for c in insp.get_columns(name)}
        assert list(cols) == [c.name for c in table.columns]
        for c in table.columns:
            assert cols[c.name]["nullable"] == c.nullable, (name, c.name)
    assert insp.get_pk_constraint("grobid_refs")["constrained_columns"] == ["source", "source_id"]
    assert insp.get_pk_constraint("crossref")["constrained_columns"] == ["doi"]
    assert sorted(i["column_names"] for i in insp.get_indexes("crossref")) == [
        ["indexed"], ["updated"]]
    assert [i["column_names"] for i in insp.get_indexes("citation")] == [["cited_doi"]]
    checks = {c["name"] for c in insp.get_check_constraints("grobid_refs")}
    assert checks == {"grobid_refs_source_check", "grobid_refs_source_id_check"}
    assert insp.get_pk_constraint("pdftable_cells")["constrained_columns"] == [
        "table_id", "row_key", "family", "qualifier"]
    assert {i["name"] for i in insp.get_indexes("catalogue")} == {
        f"catalogue_{n}_idx" for n in ("sha1", "doi", "pmid", "pmcid", "arxiv")}
    assert insp.get_pk_constraint("ingest_fileset_platform")["constrained_columns"] == [
        "ingest_type", "base_url"]
    assert [(i["name"], i["column_names"]) for i in insp.get_indexes("ingest_fileset_platform")
            ] == [("ingest_fileset_platform_name_domain_id_idx",
                   ["platform_name", "platform_domain", "platform_id"])]
    assert {i["name"] for i in insp.get_indexes("ingest_file_result")} == {
        "ingest_file_result_terminal_url_idx", "ingest_file_result_terminal_sha1hex_idx"}
    st = migrate.status(engine)
    assert st.up_to_date and st.row_counts == {
        "crossref": 0, "grobid_refs": 0, "catalogue": 0, "pdftables": 0, "pdftable_cells": 0,
        "ingest_file_result": 0, "ingest_fileset_platform": 0, "web_cdx": 0, "citation": 0,
        "ingest_request": 0}
    assert insp.get_pk_constraint("web_cdx")["constrained_columns"] == ["warc_path", "warc_offset"]
    assert {i["name"] for i in insp.get_indexes("web_cdx")} == {
        "web_cdx_url_datetime_idx", "web_cdx_sha1hex_idx", "web_cdx_surt_datetime_idx"}
    assert insp.get_pk_constraint("ingest_request")["constrained_columns"] == [
        "link_source", "link_source_id", "ingest_type", "base_url"]
    assert {i["name"] for i in insp.get_indexes("ingest_request")} == {
        "ingest_request_base_url_idx", "ingest_request_source_created_idx"}


def test_postgres_types(pg_url: str) -> None:
    engine = make_engine(pg_url)
    migrate.upgrade(engine)
    with engine.connect() as conn:
        types = dict(conn.execute(text(
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_name = 'grobid_refs'")).all())
    with engine.connect() as conn:
        compression = dict(conn.execute(text(
            "SELECT attname, attcompression FROM pg_attribute WHERE attrelid IN "
            "('crossref'::regclass, 'grobid_refs'::regclass) AND attname IN ('record', 'refs_json')"
        )).all())
    assert compression == {"record": "l", "refs_json": "l"}  # lz4
    with engine.connect() as conn:
        storage = conn.execute(text(
            "SELECT attstorage FROM pg_attribute WHERE attrelid = 'pdftable_cells'::regclass "
            "AND attname = 'value'")).scalar()
    assert storage == "e"  # values come deflated: out of line, not compressed again
    assert types == {"source": "text", "source_id": "text",
                     "source_ts": "timestamp with time zone",
                     "updated": "timestamp with time zone", "refs_json": "jsonb"}


FILESET_ROW = {"ingest_type": "dataset", "base_url": "https://zenodo.org/record/1", "hit": True,
               "platform_name": "zenodo", "platform_domain": "zenodo.org", "platform_id": "1"}


def test_fileset_platform_row_round_trip(engine) -> None:  # type: ignore[no-untyped-def]
    table = metadata.tables["ingest_fileset_platform"]
    manifest = [{"path": "a.csv", "size": 3, "sha1": "a" * 40}]
    with engine.begin() as conn:
        conn.execute(table.insert(), {**FILESET_ROW, "web_bundle_dt": "20211231235959",
                                      "total_size": 2**40, "manifest": manifest})
        row = conn.execute(table.select()).mappings().one()
    assert row["manifest"] == manifest and row["total_size"] == 2**40 and row["hit"] is True


@pytest.mark.parametrize(
    ("table", "row"),
    [
        ("crossref", {"doi": "10.1234/UPPER", "indexed": "2021-01-01T00:00:00Z", "record": {}}),
        ("crossref", {"doi": "10.", "indexed": "2021-01-01T00:00:00Z", "record": {}}),
        ("grobid_refs", {"source": "", "source_id": "x", "refs_json": []}),
        ("grobid_refs", {"source": "crossref", "source_id": "", "refs_json": []}),
        ("ingest_file_result", {"ingest_type": "", "base_url": "https://x", "hit": False}),
        ("ingest_fileset_platform", {**FILESET_ROW, "platform_name": ""}),
        ("ingest_fileset_platform", {**FILESET_ROW, "web_bundle_dt": "2021"}),
        ("ingest_fileset_platform", {**FILESET_ROW, "archiveorg_item_name": ""}),
        ("ingest_fileset_platform", {**FILESET_ROW, "platform_id": None}),
    ],
)
def test_check_constraints(engine, table: str, row: dict) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(IntegrityError), engine.begin() as conn:
        conn.execute(metadata.tables[table].insert(), row)


def ts(s: str) -> datetime:
    return datetime.fromisoformat(s).astimezone(UTC)


def test_upsert_is_idempotent_and_newer_wins(engine) -> None:  # type: ignore[no-untyped-def]
    def put(indexed: str, title: str, refs: list) -> None:
        with engine.begin() as conn:
            write_tables(conn, [Rows((
                CrossrefRow(doi="10.1/a", indexed=indexed,
                            record=RawJSON(f'{{"title": "{title}"}}')),
                GrobidRefsRow(source="crossref", source_id="10.1/a",
                              source_ts=datetime.fromisoformat(indexed), refs_json=refs),
            ))])

    put("2021-01-01T00:00:00Z", "first", [{"id": "k1"}])
    put("2021-01-01T00:00:00Z", "first", [{"id": "k1"}])  # replay: no change, no error
    put("2022-01-01T00:00:00Z", "second", [{"id": "k2"}])  # newer: replaces
    put("2020-01-01T00:00:00Z", "stale", [{"id": "k0"}])  # older: ignored
    with engine.connect() as conn:
        (doi, indexed, record), = conn.execute(
            select(crossref.c.doi, crossref.c.indexed, crossref.c.record)).all()
        assert (doi, indexed, record) == ("10.1/a", ts("2022-01-01T00:00:00Z"), {"title": "second"})
        ((_, _, source_ts, updated, refs),) = conn.execute(select(grobid_refs)).all()
        assert (source_ts, refs) == (ts("2022-01-01T00:00:00Z"), [{"id": "k2"}])
        assert updated.tzinfo is not None
        view = conn.execute(text(
            "SELECT doi, refs_json FROM crossref_with_refs")).all()
        assert len(view) == 1 and view[0][0] == "10.1/a"


def test_duplicate_keys_in_one_batch(engine) -> None:  # type: ignore[no-untyped-def]
    rows = [Rows((GrobidRefsRow(source="crossref", source_id="10.1/dup",
                                refs_json=[{"n": n}]),)) for n in range(3)]
    with engine.begin() as conn:
        write_tables(conn, rows)
    with engine.connect() as conn:
        assert conn.execute(select(grobid_refs.c.refs_json)).scalars().all() == [[{"n": 2}]]


def test_view_left_join(engine) -> None:  # type: ignore[no-untyped-def]
    with engine.begin() as conn:
        write_tables(conn, [
            Rows((CrossrefRow(doi="10.1/norefs", indexed="2021-01-01T00:00:00Z",
                              record=RawJSON('{"a": 1}')),)),
            Rows((GrobidRefsRow(source="other", source_id="10.1/norefs",
                                refs_json=[{"a": 1}]),)),
        ])
    with engine.connect() as conn:
        assert conn.execute(text("SELECT doi, refs_json FROM crossref_with_refs")).all() == [
            ("10.1/norefs", None)]


def test_ensure_schema_auto_inits_sqlite_only(tmp_path, pg_cluster) -> None:  # type: ignore[no-untyped-def]
    from sandcrawler.core.errors import ConfigError

    lite = make_engine(f"sqlite:///{tmp_path / 'auto.sqlite3'}")
    migrate.ensure_schema(lite)
    assert migrate.current_revision(lite) == migrate.head_revision()
    pg = make_engine(pg_cluster.url_for("postgres"))
    with pytest.raises(ConfigError, match="sandcrawler db init"):
        migrate.ensure_schema(pg)


def test_the_schema_check_without_alembic_agrees_with_alembic(tmp_path: Path) -> None:
    """``db/revision.py`` reads the head from the migration files' names and the
    database's revision with one query; it must say what alembic says."""
    from sandcrawler.db import revision

    assert revision.head() == migrate.head_revision()
    lite = make_engine(f"sqlite:///{tmp_path / 'rev.sqlite3'}")
    assert not revision.at_head(lite)  # no alembic_version table yet
    migrate.upgrade(lite, "0001")
    assert not revision.at_head(lite)
    migrate.upgrade(lite)
    assert revision.at_head(lite)
    lite.dispose()


def test_a_current_database_is_checked_without_importing_alembic(tmp_path: Path) -> None:
    """A command's start-up on a current database does not import alembic (half
    a second of every command and worker process); a new one is still created."""
    env = {**os.environ, "SANDCRAWLER_DATA_DIR": str(tmp_path / "data")}
    script = ("import sys\n"
              "from sandcrawler.app.services import Services\n"
              "from sandcrawler.app.settings import load_settings\n"
              "with Services.for_process(load_settings()) as s:\n"
              "    s.check_schema()\n"
              "print('alembic' in sys.modules)\n")
    runs = [subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                           text=True, timeout=120) for _ in range(2)]
    assert [(r.returncode, r.stdout.strip()) for r in runs] == [(0, "True"), (0, "False")], \
        [r.stderr for r in runs]


@pytest.mark.slow  # waits out timeouts, retries or stalls
def test_first_use_by_several_commands_at_once(tmp_path: Path) -> None:
    """Issue 14 B2: commands started together on a new data directory all bring up
    (or find) the same schema; none fails with `table ... already exists` or
    `database is locked`."""
    env = {**os.environ, "SANDCRAWLER_DATA_DIR": str(tmp_path / "fresh")}
    for trial in range(3):
        env["SANDCRAWLER_DATA_DIR"] = str(tmp_path / f"fresh{trial}")
        procs = [subprocess.Popen([sys.executable, "-m", "sandcrawler", "catalogue", "export"],
                                  env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                 for _ in range(6)]
        errors = [(p.wait(timeout=120), p.stderr.read().decode()) for p in procs]  # type: ignore[union-attr]
        assert all(code == 0 for code, _ in errors), errors


def test_upgrade_to_an_unknown_revision_is_one_line(isolated_env: Path) -> None:
    """Issue 14 C2: `db upgrade --to nonsense` printed alembic's traceback."""
    result = run_cli(["db", "upgrade", "--to", "nonsense"])
    err = result.stderr.decode()
    assert result.returncode == 1
    assert err.startswith("Error: cannot upgrade to 'nonsense'") and "known: head, 0001" in err
    assert "Traceback" not in err and len(err.splitlines()) == 1


def test_status_aligns_long_table_names(isolated_env: Path) -> None:
    """Issue 14 C5: names longer than 16 characters pushed their counts out of line."""
    assert run_cli(["db", "init"]).returncode == 0
    out = run_cli(["db", "status"]).stdout.decode()
    rows = [line for line in out.splitlines() if line.endswith(" rows")]
    assert any(len(line.split()[0]) > 16 for line in rows)
    assert len({line.index(" rows") for line in rows}) == 1


@pytest.fixture(params=["sqlite", "postgresql"])
def empty_db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'old.sqlite3'}"
    url: str = request.getfixturevalue("pg_url")
    return url


def test_0010_stores_the_small_pdf_table_columns_plain(empty_db_url: str) -> None:
    """Cells written before 0010 deflated every grobid0 and pdf0 value; 0010 stores
    the small ones plain (the original system's views read them in SQL) and keeps
    the large ones deflated; going down deflates them again."""
    import zlib

    from sandcrawler.db.schema import pdftable_cells, pdftables
    from sandcrawler.storage.pdftable import PdfTable

    engine = make_engine(empty_db_url)
    try:
        migrate.upgrade(engine, "0009")
        key = bytes(range(20))
        old = {("grobid0", "status"): b'{"status":"success"}',
               ("grobid0", "status_code"): (200).to_bytes(8, "big"),
               ("grobid0", "tei_xml"): b"<TEI/>",
               ("pdf0", "pdf_meta"): b'{"page_count":3}', ("pdf0", "text"): b"Heart"}
        with engine.begin() as conn:
            conn.execute(pdftables.insert().values(id=1, name="wbgrp-journal-extract-0-dev"))
            conn.execute(pdftable_cells.insert(), [
                {"table_id": 1, "row_key": key, "family": f, "qualifier": q,
                 "value": zlib.compress(v)} for (f, q), v in old.items()])

        def raw() -> dict[tuple[str, str], bytes]:
            c = pdftable_cells.c
            with engine.connect() as conn:
                return {(f, q): bytes(v) for f, q, v in conn.execute(
                    select(c.family, c.qualifier, c.value))}

        migrate.upgrade(engine)
        plain = {("grobid0", "status"), ("grobid0", "status_code"), ("pdf0", "pdf_meta")}
        assert raw() == {k: v if k in plain else zlib.compress(v) for k, v in old.items()}
        row = PdfTable(engine, "wbgrp-journal-extract-0-dev").get(key)
        assert row is not None and row.cells == {
            "grobid0": {"status": {"status": "success"}, "status_code": 200,
                        "tei_xml": "<TEI/>"},
            "pdf0": {"pdf_meta": {"page_count": 3}, "text": "Heart"}}
        migrate.upgrade(engine)  # again: nothing to do, nothing inflated twice
        assert row == PdfTable(engine, "wbgrp-journal-extract-0-dev").get(key)
        from alembic import command

        cfg = migrate._alembic_config()
        with engine.begin() as conn:
            cfg.attributes["connection"] = conn
            command.downgrade(cfg, "0009")
        assert {k: zlib.decompress(v) for k, v in raw().items()} == old
    finally:
        engine.dispose()
