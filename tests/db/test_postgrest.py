"""The real PostgREST (12.0.2, from npm) serving the suite's PostgreSQL, set up by
``sandcrawler db api``: the original system's query shapes answer, writes and
unexposed tables are refused."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any
from urllib.parse import quote

import orjson
import pytest
import urllib3
from sqlalchemy import text

from sandcrawler.db.api import EXPOSED
from sandcrawler.db.engine import make_engine
from sandcrawler_testkit.postgrest import PostgrestServer
from tests.helpers.api_data import (
    DATASET,
    DOI,
    DOI_NO_REFS,
    SHA1,
    SHA1_ODD_DATE,
    URL,
    UUID,
    assert_write_refused,
    index_plan,
    seed,
)
from tests.helpers.cli import invoke

HTTP = urllib3.PoolManager(timeout=10, retries=False)


def get(server: PostgrestServer, path: str) -> tuple[int, Any]:
    resp = HTTP.request("GET", server.url + path)
    return resp.status, orjson.loads(resp.data) if resp.data else None


def q(value: str) -> str:
    return quote(value, safe="")


@pytest.fixture(scope="module")
def api(postgrest: PostgrestServer) -> PostgrestServer:
    """The module's PostgREST, its database seeded once (the tests only read it)."""
    engine = make_engine(postgrest.database_url)
    seed(engine)
    engine.dispose()
    return postgrest


#: (path, the keys that identify each row answered, in order)
QUERIES = [
    (f"/grobid_refs?source=eq.crossref&source_id=eq.{q(DOI)}", [("crossref", DOI)]),
    (f"/crossref_with_refs?doi=eq.{q(DOI)}", [(DOI,)]),
    (f"/crossref_with_refs?doi=eq.{q(DOI_NO_REFS)}", [(DOI_NO_REFS,)]),
    (f"/crossref?doi=eq.{q(DOI)}", [(DOI,)]),
    (f"/ingest_file_result?ingest_type=eq.pdf&base_url=eq.{q(URL)}", [("pdf", URL)]),
    (f"/ingest_file_result?terminal_sha1hex=eq.{SHA1}&order=ingest_type",
     [("html", URL), ("pdf", URL)]),
    (f"/ingest_fileset_platform?ingest_type=eq.dataset&base_url=eq.{q(DATASET)}",
     [("dataset", DATASET)]),
    (f"/ingest_request?base_url=eq.{q(URL)}&ingest_type=eq.pdf", [("doi", DOI)]),
    (f"/web_cdx?url=eq.{q(URL)}&order=datetime.desc&limit=1", [(URL, "20210510220845")]),
    (f"/web_cdx?sha1hex=eq.{SHA1}", [(URL, "20210510220845")]),
    (f"/catalogue?sha1=eq.{SHA1}", [(UUID,)]),
    (f"/catalogue?doi=eq.{q(DOI)}", [(UUID,)]),
    (f"/pdftable_files?sha1hex=eq.{SHA1}", [("wbgrp-journal-extract-0-dev", SHA1)]),
    # the original system's relations (db/original_views.py)
    (f"/cdx?url=eq.{q(URL)}", [(URL, "20210510220845")]),
    (f"/file_meta?sha1hex=eq.{SHA1}", [(SHA1, "5a" * 32, 4242)]),
    (f"/grobid?sha1hex=eq.{SHA1}", [(SHA1, 200, "success", "0.8.1")]),
    (f"/pdf_meta?sha1hex=eq.{SHA1}", [(SHA1, "success", 3, "1.7")]),
    (f"/html_meta?sha1hex=eq.{SHA1}", [(SHA1, "success", "article-fulltext", 12)]),
    (f"/pdftrio?sha1hex=eq.{SHA1}", []),
    (f"/citation?citing=eq.{q('doi:' + DOI)}&order=ref_index",
     [(f"doi:{DOI}", 0), (f"doi:{DOI}", 1)]),
    (f"/citation?cited_doi=eq.{q(DOI_NO_REFS)}&order=citing,ref_index",
     [(f"doi:{DOI}", 0), (f"uuid:{UUID}", 0)]),
]
KEYS = {"grobid_refs": ("source", "source_id"), "crossref_with_refs": ("doi",),
        "crossref": ("doi",), "ingest_file_result": ("ingest_type", "base_url"),
        "ingest_fileset_platform": ("ingest_type", "base_url"),
        "ingest_request": ("link_source", "link_source_id"), "web_cdx": ("url", "datetime"),
        "catalogue": ("uuid",), "pdftable_files": ("table_name", "sha1hex"),
        "citation": ("citing", "ref_index"), "cdx": ("url", "datetime"),
        "file_meta": ("sha1hex", "sha256hex", "size_bytes"),
        "grobid": ("sha1hex", "status_code", "status", "grobid_version"),
        "pdf_meta": ("sha1hex", "status", "page_count", "pdf_version"),
        "html_meta": ("sha1hex", "status", "scope", "word_count"), "pdftrio": ("sha1hex",)}


def test_every_exposed_relation_is_queried() -> None:
    assert {path[1:].partition("?")[0] for path, _ in QUERIES} == set(EXPOSED)


@pytest.mark.parametrize(("path", "keys"), QUERIES, ids=[p for p, _ in QUERIES])
def test_query_shapes(api: PostgrestServer, path: str, keys: list[tuple[str, ...]]) -> None:
    status, rows = get(api, path)
    assert status == 200, rows
    names = KEYS[path[1:].partition("?")[0]]
    assert [tuple(row[n] for n in names) for row in rows] == keys


def test_values_as_stored(api: PostgrestServer) -> None:
    _, [row] = get(api, f"/crossref_with_refs?doi=eq.{q(DOI)}")
    assert row["refs_json"][0]["authors"] == [{"name": "A. Ñandú"}]
    assert row["record"]["score"] == 1.5
    _, [none] = get(api, f"/crossref_with_refs?doi=eq.{q(DOI_NO_REFS)}")
    assert none["refs_json"] is None and none["source_ts"] is None
    _, [pdf] = get(api, f"/pdftable_files?sha1hex=eq.{SHA1}")
    assert pdf == {
        "table_name": "wbgrp-journal-extract-0-dev", "sha1hex": SHA1,
        "families": ["file", "grobid0", "html0", "match0", "pdf0"], "size": 4242,
        "mime": "application/pdf",
        "cdx": {"surt": "org,example)/paper.pdf", "url": URL, "dt": "20210510220845",
                "warc": "a.warc.gz", "offset": "1000", "c_size": "321"},
        "dedupe": None, "mstatus": "matched", "match_doi": DOI, "minfo": {"score": 0.9},
        "updated": pdf["updated"]}
    # the original system's rows, decoded from the PDF table's cells
    _, [grobid] = get(api, f"/grobid?sha1hex=eq.{SHA1}")
    assert grobid["metadata"] == {"biblio": {"title": "Heart", "authors": [{"name": "A. Ñandú"}],
                                             "doi": DOI}, "language_code": "en"}
    assert grobid["fatcat_release"] is None
    _, [meta] = get(api, f"/pdf_meta?sha1hex=eq.{SHA1}")
    assert meta["pdf_created"] == "2021-05-10T22:08:45+00:00"
    assert meta["metadata"] == {"title": "Heart"} and meta["has_page0_thumbnail"] is False
    # a malformed date is null, not an error of the lookup
    assert get(api, f"/pdf_meta?sha1hex=eq.{SHA1_ODD_DATE}&select=status,pdf_created") \
        == (200, [{"status": "success", "pdf_created": None}])
    _, [html] = get(api, f"/html_meta?sha1hex=eq.{SHA1}")
    assert (html["has_teixml"], html["biblio"], html["resources"]) == (False, None, None)
    _, [fm] = get(api, f"/file_meta?sha1hex=eq.{SHA1}")
    assert fm == {"sha1hex": SHA1, "sha256hex": "5a" * 32, "md5hex": "d5" * 16,
                  "size_bytes": 4242, "mimetype": "application/pdf"}
    # a documented lookup of a large JSON column's table finds nothing as fast as something
    assert get(api, "/grobid_refs?source=eq.crossref&source_id=eq.10.1/none") == (200, [])


@pytest.mark.parametrize(("method", "path", "body"), [
    ("POST", "/grobid_refs", {"source": "x", "source_id": "y", "refs_json": []}),
    ("PATCH", f"/ingest_file_result?base_url=eq.{q(URL)}", {"hit": False}),
    ("DELETE", f"/catalogue?uuid=eq.{UUID}", None),
    ("POST", "/crossref_with_refs", {"doi": "10.1/x"}),
    ("PUT", f"/crossref?doi=eq.{q(DOI)}", {"doi": DOI, "indexed": "2021-01-01", "record": {}}),
])
def test_writes_are_refused(api: PostgrestServer, method: str, path: str,
                            body: dict[str, Any] | None) -> None:
    assert_write_refused(api.url, method, path, body)
    assert get(api, f"/ingest_file_result?base_url=eq.{q(URL)}&ingest_type=eq.pdf")[1][0]["hit"]
    assert len(get(api, f"/catalogue?uuid=eq.{UUID}")[1]) == 1
    assert get(api, "/grobid_refs?source=eq.x")[1] == []


@pytest.mark.parametrize("path", ["/pdftable_cells", "/pdftables", "/alembic_version"])
def test_unexposed_tables_are_refused(api: PostgrestServer, path: str) -> None:
    status, body = get(api, path)
    assert status in (401, 403, 404), body


def test_the_anonymous_role_holds_exactly_the_grants(postgrest: PostgrestServer) -> None:
    engine = make_engine(postgrest.database_url)
    with engine.connect() as conn:
        grants = conn.execute(text(
            "SELECT table_name, privilege_type FROM information_schema.role_table_grants "
            "WHERE grantee = 'web_anon' ORDER BY 1")).all()
    engine.dispose()
    assert grants == [(name, "SELECT") for name in sorted(EXPOSED)]


def test_db_api_is_idempotent_and_writes_a_private_config(
        postgrest: PostgrestServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SANDCRAWLER_DATABASE_URL", postgrest.database_url)
    out = tmp_path / "again.conf"
    result = invoke(["db", "api", "-o", str(out), "--port", "3999", "--max-rows", "50"])
    assert result.exit_code == 0, result.stderr
    assert f"web_anon may read {len(EXPOSED)} relations" in result.stderr
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    lines = out.read_text().splitlines()
    assert 'db-anon-role = "web_anon"' in lines and "server-port = 3999" in lines
    assert "db-max-rows = 50" in lines
    assert any(line.startswith('db-uri = "postgresql://') for line in lines)
    assert get(postgrest, "/crossref?limit=1")[0] == 200


def test_db_api_authenticator(pg_migrated_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SANDCRAWLER_DATABASE_URL", pg_migrated_url)
    result = invoke(["db", "api", "--authenticator", "authenticator", "--anon-role", "reader",
                     "-o", "-"])
    assert result.exit_code == 0, result.stderr
    assert 'db-uri = "postgresql://authenticator@127.0.0.1:' in result.stdout
    assert 'db-anon-role = "reader"' in result.stdout


@pytest.mark.parametrize(("args", "message"), [
    ([], "Error: PostgREST needs PostgreSQL; the database is sqlite:///"),
])
def test_db_api_on_sqlite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str],
                          message: str) -> None:
    monkeypatch.setenv("SANDCRAWLER_DATABASE_URL", f"sqlite:///{tmp_path / 'x.sqlite3'}")
    result = invoke(["db", "api", *args])
    assert result.exit_code == 1
    assert result.stderr.startswith(message) and result.stderr.count("\n") == 1


def test_db_api_bad_role(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SANDCRAWLER_DATABASE_URL", pg_url)
    result = invoke(["db", "api", "--anon-role", "Robert'); DROP", "-o", "-"])
    assert result.exit_code == 1
    assert result.stderr == ("Error: anonymous role \"Robert'); DROP\" is not a plain role name "
                             "(lower-case letters, digits and _)\n")


def test_pdftable_files_lookup_uses_the_sha1hex_index(api: PostgrestServer) -> None:
    """The view's sha1hex filter reaches the cells' expression index (no scan of
    every cell of every file)."""
    plan = index_plan(api.database_url, f"SELECT * FROM pdftable_files WHERE sha1hex = '{SHA1}'")
    assert "pdftable_cells_sha1hex_idx" in plan, plan


def test_db_api_help_names_every_exposed_relation() -> None:
    help_text = " ".join(invoke(["db", "api", "--help"]).stdout.split())
    assert [name for name in EXPOSED if name not in help_text] == []
