"""The citation table on the read side (issue 25): served by the real PostgREST to
the read-only role (a work's resolved references, "cited by" with a count), every
write refused, and the two readers answering its lookups identically, page by
page, on PostgreSQL and SQLite."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import orjson
import pytest
import urllib3
from sqlalchemy import Engine, func, insert, select, text

from sandcrawler.db import migrate
from sandcrawler.db.engine import begin, make_engine
from sandcrawler.db.schema import citation
from sandcrawler.readers.base import Reader
from sandcrawler.readers.sql import SqlReader
from sandcrawler_testkit.postgrest import PostgrestServer
from tests.helpers.api_data import (
    CITATIONS,
    DOI,
    DOI_NO_REFS,
    TS,
    UUID,
    assert_write_refused,
    both_readers,
    index_plan,
    seed,
)

# SQL: on SQLite and PostgreSQL
pytestmark = pytest.mark.both_backends

HTTP = urllib3.PoolManager(timeout=10, retries=False)
#: a DOI cited by many works, more than one page of them
POPULAR = "10.5555/popular.1"


def q(value: str) -> str:
    return quote(value, safe="")


def get(server: PostgrestServer, path: str,
        headers: dict[str, str] | None = None) -> tuple[int, Any, urllib3.BaseHTTPResponse]:
    resp = HTTP.request("GET", server.url + path, headers=headers)
    return resp.status, orjson.loads(resp.data) if resp.data else None, resp


def _popular(engine: Engine, n: int = 123) -> None:
    """``n`` references to POPULAR from works whose citing keys sort in odd orders
    (digits, DOIs of different lengths, documents), some works citing it twice."""
    rows = []
    for i in range(n):
        citing = (f"doi:10.{1000 + i % 7}/w{i * 37 % 101}" if i % 3 else
                  f"uuid:00000000-0000-4000-8000-{i:012d}")
        rows.append({"citing": citing, "ref_index": i, "ref_key": f"r{i}",
                     "cited_doi": POPULAR, "status": "strong" if i % 2 else "exact",
                     "score": 0.9 + (i % 10) / 100, "reasons": ["title:same"],
                     "updated": TS})
    with begin(engine) as conn:
        conn.execute(insert(citation), rows)


@pytest.fixture(scope="module")
def api(postgrest: PostgrestServer) -> PostgrestServer:
    """The module's PostgREST, its database seeded once (the tests only read it)."""
    engine = make_engine(postgrest.database_url)
    seed(engine)
    _popular(engine)
    engine.dispose()
    return postgrest


# --- PostgREST ------------------------------------------------------------------------------


def test_references_of_a_citing_work(api: PostgrestServer) -> None:
    status, rows, _ = get(api, f"/citation?citing=eq.{q('doi:' + DOI)}&order=ref_index")
    assert status == 200
    assert [(r["ref_index"], r["ref_key"], r["cited_doi"], r["status"]) for r in rows] == [
        (0, "b0", DOI_NO_REFS, "exact"), (1, "b1", None, "no-match")]
    assert rows[0]["reasons"] == ["doi:same", "title:same"]  # JSON, not text
    assert rows[0]["score"] == 1.0 and rows[1]["score"] == 0.31
    assert datetime.fromisoformat(rows[0]["updated"]) == TS
    status, rows, _ = get(api, f"/citation?citing=eq.{q('uuid:' + UUID)}&order=ref_index")
    assert [(r["status"], r["reasons"], r["score"]) for r in rows] == [
        ("strong", ["title:same", "year:same"], 0.93), ("too-little", None, None)]


def test_cited_by_with_a_count(api: PostgrestServer) -> None:
    status, rows, _ = get(api, f"/citation?cited_doi=eq.{q(DOI_NO_REFS)}&order=citing,ref_index"
                               "&select=citing,ref_index,status")
    assert status == 200
    assert rows == [{"citing": f"doi:{DOI}", "ref_index": 0, "status": "exact"},
                    {"citing": f"uuid:{UUID}", "ref_index": 0, "status": "strong"}]
    # a page and the total in one request
    status, rows, resp = get(api, f"/citation?cited_doi=eq.{q(POPULAR)}&order=citing,ref_index"
                                  "&offset=50&limit=50", {"Prefer": "count=exact"})
    assert status == 206 and len(rows) == 50
    assert resp.headers["Content-Range"] == "50-99/123"
    assert get(api, "/citation?cited_doi=eq.10.1%2Fnone")[:2] == (200, [])


@pytest.mark.parametrize(("method", "path", "body"), [
    ("POST", "/citation", {"citing": "doi:10.1/x", "ref_index": 0, "status": "exact"}),
    ("PATCH", f"/citation?citing=eq.{q('doi:' + DOI)}", {"cited_doi": "10.1/forged"}),
    ("PUT", f"/citation?citing=eq.{q('doi:' + DOI)}&ref_index=eq.0",
     {"citing": f"doi:{DOI}", "ref_index": 0, "status": "no-match"}),
    ("DELETE", f"/citation?cited_doi=eq.{q(DOI_NO_REFS)}", None),
])
def test_writes_are_refused(api: PostgrestServer, method: str, path: str,
                            body: dict[str, Any] | None) -> None:
    assert_write_refused(api.url, method, path, body)
    engine = make_engine(api.database_url)
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(citation)).scalar() == 4 + 123
        assert conn.execute(select(citation.c.cited_doi, citation.c.status).where(
            citation.c.citing == f"doi:{DOI}", citation.c.ref_index == 0)).one() == (
            DOI_NO_REFS, "exact")
    engine.dispose()


def test_the_role_may_read_but_not_write_the_table(api: PostgrestServer) -> None:
    """Below the guard: the anonymous role itself holds SELECT and nothing else."""
    engine = make_engine(api.database_url)
    with engine.connect() as conn:
        grants = conn.execute(text(
            "SELECT privilege_type FROM information_schema.role_table_grants "
            "WHERE grantee = 'web_anon' AND table_name = 'citation'")).scalars().all()
        assert grants == ["SELECT"]
        conn.execute(text("SET ROLE web_anon"))
        assert conn.execute(text("SELECT count(*) FROM citation")).scalar() == 127
        with pytest.raises(Exception, match="permission denied"):
            conn.execute(text("UPDATE citation SET cited_doi = NULL"))
    engine.dispose()


def test_cited_by_uses_the_cited_doi_index(api: PostgrestServer) -> None:
    plan = index_plan(api.database_url, f"SELECT * FROM citation WHERE cited_doi = '{POPULAR}'")
    assert "citation_cited_doi_idx" in plan, plan


# --- the readers ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def readers(api: PostgrestServer) -> Iterator[dict[str, Reader]]:
    """Both readers on the module's database, for every test of the module."""
    with both_readers(api.database_url, api.url) as readers:
        yield readers


def test_readers_answer_the_citations(readers: dict[str, Reader]) -> None:
    for name, reader in readers.items():
        rows = reader.citations(f"DOI:{DOI.upper()}")
        assert rows == [{**c, "citing": f"doi:{DOI}"} for c in CITATIONS[:2]], name
        assert isinstance(rows[0]["score"], float) and rows[0]["updated"] == TS
        assert [r["status"] for r in reader.citations(f"uuid:{UUID.upper()}")] == [
            "strong", "too-little"]
        assert reader.citations("doi:10.1/none") == []
        total, cited = reader.cited_by(DOI_NO_REFS.upper())
        assert total == 2 and [(r["citing"], r["ref_index"]) for r in cited] == [
            (f"doi:{DOI}", 0), (f"uuid:{UUID}", 0)]
        assert reader.cited_by("10.1/none") == (0, [])


@pytest.mark.parametrize(("offset", "limit"), [(0, 50), (50, 50), (100, 50), (120, 10),
                                               (123, 10), (500, 10), (0, 1)])
def test_readers_page_cited_by_alike(readers: dict[str, Reader], offset: int,
                                     limit: int) -> None:
    sql = readers["sql"].cited_by(POPULAR, offset=offset, limit=limit)
    api = readers["postgrest"].cited_by(POPULAR, offset=offset, limit=limit)
    assert api == sql
    total, rows = sql
    assert total == 123 and len(rows) == max(0, min(limit, 123 - offset))
    assert all(isinstance(r["score"], float) for r in api[1])


def test_pages_cover_every_citation_once(readers: dict[str, Reader]) -> None:
    for reader in readers.values():
        seen = []
        for offset in range(0, 130, 25):
            seen += [(r["citing"], r["ref_index"]) for r in
                     reader.cited_by(POPULAR, offset=offset, limit=25)[1]]
        assert len(seen) == len(set(seen)) == 123
        assert seen == sorted(seen)


def test_sqlite_reader_answers_the_same(readers: dict[str, Reader], tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'c.sqlite3'}")
    migrate.upgrade(engine)
    seed(engine)
    _popular(engine)
    lite = SqlReader(engine)
    pg = readers["sql"]
    for citing in (f"doi:{DOI}", f"uuid:{UUID}", "doi:10.1/none"):
        assert lite.citations(citing) == pg.citations(citing)
    for doi, offset in ((DOI_NO_REFS, 0), (POPULAR, 0), (POPULAR, 100), (POPULAR, 200)):
        assert lite.cited_by(doi, offset=offset) == pg.cited_by(doi, offset=offset)
    engine.dispose()
