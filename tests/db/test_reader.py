"""One reader interface, two implementations: SQL and the real PostgREST over
HTTP give identical answers (JSON columns, timestamps, CDX records)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sandcrawler.app.services import Services
from sandcrawler.app.settings import load_settings
from sandcrawler.core.errors import ConfigError, DatabaseUnavailable
from sandcrawler.db import migrate
from sandcrawler.db.engine import make_engine
from sandcrawler.readers.base import Reader
from sandcrawler.readers.postgrest import PostgrestReader, in_list
from sandcrawler.readers.sql import SqlReader
from sandcrawler.records.capture import CdxRecord
from sandcrawler.web.http.fetch import HttpFetcher
from sandcrawler_testkit.postgres import free_port
from sandcrawler_testkit.postgrest import PostgrestServer
from tests.helpers.api_data import (
    DATASET,
    DOI,
    DOI_NO_REFS,
    LANDING,
    REFS,
    SHA1,
    TS,
    URL,
    UUID,
    both_readers,
    seed,
)

# SQL: on SQLite and PostgreSQL
pytestmark = pytest.mark.both_backends

#: (method, arguments): every lookup, found and not found
CALLS = [
    ("ingest_hits", ([("pdf", URL), ("pdf", LANDING), ("html", URL), ("xml", URL),
                      ("pdf", "https://nowhere.example/")],)),
    ("ingest_hits", ([],)),
    ("ingest_file_result", ("pdf", URL)),
    ("ingest_file_result", ("pdf", LANDING)),
    ("ingest_file_result", ("dataset", DATASET)),
    ("capture", (URL,)),
    ("capture", (LANDING,)),
    ("capture", ("https://example.org/never",)),
    ("document_by_sha1", (SHA1,)),
    ("document_by_sha1", (SHA1.upper(),)),
    ("document_by_sha1", ("f" * 40,)),
    ("document_by_doi", (DOI.upper(),)),
    ("document_by_doi", (DOI_NO_REFS,)),
    ("grobid_refs", ("crossref", DOI.upper())),
    ("grobid_refs", ("crossref", DOI_NO_REFS)),
    ("crossref_with_refs", (DOI,)),
    ("crossref_with_refs", (DOI_NO_REFS,)),
    ("crossref_with_refs", ("10.1/none",)),
    ("citations", (f"doi:{DOI.upper()}",)),
    ("citations", (f"uuid:{UUID}",)),
    ("citations", ("doi:10.1/none",)),
    ("cited_by", (DOI_NO_REFS.upper(),)),
    ("cited_by", (DOI,)),
]


@pytest.fixture(scope="module")
def seeded(postgrest: PostgrestServer) -> PostgrestServer:
    """The module's PostgREST, its database seeded once. The tests read it; the one
    that adds rows adds its own, which no other test looks up."""
    engine = make_engine(postgrest.database_url)
    seed(engine)
    engine.dispose()
    return postgrest


@pytest.fixture(scope="module")
def readers(seeded: PostgrestServer) -> Iterator[dict[str, Reader]]:
    """Both readers on the module's database, for every test of the module."""
    with both_readers(seeded.database_url, seeded.url) as readers:
        yield readers


@pytest.mark.parametrize(("method", "args"), CALLS, ids=[f"{m}-{i}" for i, (m, _) in
                                                         enumerate(CALLS)])
def test_identical_answers(readers: dict[str, Reader], method: str, args: tuple) -> None:
    sql = getattr(readers["sql"], method)(*args)
    api = getattr(readers["postgrest"], method)(*args)
    assert api == sql
    assert type(api) is type(sql)


def test_answers(readers: dict[str, Reader]) -> None:
    for reader in readers.values():
        hits = reader.ingest_hits([("pdf", URL), ("pdf", LANDING), ("html", URL)])
        assert sorted(hits) == [("html", URL), ("pdf", URL)]
        assert hits[("pdf", URL)]["updated"] == TS and hits[("pdf", URL)]["hit"] is True
        capture = reader.capture(URL)
        assert isinstance(capture, CdxRecord)
        assert (capture.datetime, capture.sha1hex, capture.warc_offset) == (
            "20210510220845", SHA1, 1000)
        refs = reader.grobid_refs("crossref", DOI)
        assert refs is not None and refs["refs_json"] == REFS and refs["source_ts"] == TS
        with_refs = reader.crossref_with_refs(DOI.upper())
        assert with_refs is not None and with_refs["indexed"] == TS
        assert with_refs["refs_json"] == REFS and with_refs["record"]["score"] == 1.5
        [doc] = reader.document_by_doi(DOI)
        assert doc["uuid"] == UUID and doc["resources"] == {"pdf": {"sha1": SHA1, "size": 4242}}


def test_many_hits_in_chunks(seeded: PostgrestServer, readers: dict[str, Reader]) -> None:
    """More URLs than one request line holds; odd characters in them."""
    from sqlalchemy import insert

    from sandcrawler.db.engine import begin
    from sandcrawler.db.schema import ingest_file_result

    urls = [f"https://example.org/p/{i}?q=a,b&c=\"(x)\"\\{'é' * (i % 3)}" for i in range(700)]
    engine = make_engine(seeded.database_url)
    with begin(engine) as conn:
        conn.execute(insert(ingest_file_result), [
            {"ingest_type": "pdf", "base_url": u, "hit": i % 2 == 0, "status": "success"}
            for i, u in enumerate(urls)])
    engine.dispose()
    keys = [("pdf", u) for u in urls]
    sql = readers["sql"].ingest_hits(keys)
    assert len(sql) == 350
    assert readers["postgrest"].ingest_hits(keys) == sql


def test_sqlite_reader_answers_the_same(readers: dict[str, Reader], tmp_path) -> None:  # type: ignore[no-untyped-def]
    engine = make_engine(f"sqlite:///{tmp_path / 'r.sqlite3'}")
    migrate.upgrade(engine)
    seed(engine)
    lite = SqlReader(engine)
    for method, args in CALLS:
        assert getattr(lite, method)(*args) == getattr(readers["sql"], method)(*args), method
    engine.dispose()


def test_services_pick_the_reader(seeded: PostgrestServer,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SANDCRAWLER_DATABASE_URL", seeded.database_url)
    with Services(load_settings()) as services:
        assert isinstance(services.reader, SqlReader)
    monkeypatch.setenv("SANDCRAWLER_API_READER", "postgrest")
    monkeypatch.setenv("SANDCRAWLER_API_POSTGREST_URL", seeded.url + "/")
    with Services(load_settings()) as services:
        assert isinstance(services.reader, PostgrestReader)
        assert sorted(services.ingest_history.hits([("pdf", URL), ("pdf", LANDING)])) == [
            ("pdf", URL)]


def test_postgrest_reader_without_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SANDCRAWLER_API_READER", "postgrest")
    with Services(load_settings()) as services, pytest.raises(ConfigError,
                                                              match="SANDCRAWLER_API_POSTGREST_URL"):
        services.reader  # noqa: B018


def test_bad_reader_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SANDCRAWLER_API_READER", "http")
    with pytest.raises(ConfigError, match=r"api\.reader"):
        load_settings()


def test_postgrest_down_is_database_unavailable() -> None:
    fetcher = HttpFetcher(timeout=2, retries=0, addresses=None)
    reader = PostgrestReader(f"http://127.0.0.1:{free_port()}", fetcher)
    with pytest.raises(DatabaseUnavailable, match=r"PostgREST at http://127\.0\.0\.1:"):
        reader.ingest_file_result("pdf", URL)
    fetcher.close()


def test_unexposed_relation_is_a_config_error(readers: dict[str, Reader]) -> None:
    reader = readers["postgrest"]
    assert isinstance(reader, PostgrestReader)
    with pytest.raises(ConfigError, match="HTTP 401 to /pdftable_cells"):
        reader._get("pdftable_cells", "limit=1")


@pytest.mark.parametrize(("values", "expected"), [
    (["a"], 'in.%28%22a%22%29'),
    (['a,b', 'c"d', "e\\f"], 'in.%28%22a%2Cb%22%2C%22c%5C%22d%22%2C%22e%5C%5Cf%22%29'),
])
def test_in_list(values: list[str], expected: str) -> None:
    assert in_list(values) == expected
