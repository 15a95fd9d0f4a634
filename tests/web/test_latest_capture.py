""""The latest capture of a URL" has one definition (``db.queries.CAPTURE_ORDER``):
for two captures in the same second, the page, both readers (SQL and the real
PostgREST) and the web archive's replay pick the same one."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

import pytest
from sqlalchemy import insert
from starlette.testclient import TestClient

from sandcrawler.app.services import Services
from sandcrawler.app.settings import load_settings
from sandcrawler.db.engine import begin, make_engine
from sandcrawler.db.schema import ingest_file_result, web_cdx
from sandcrawler.readers.postgrest import PostgrestReader
from sandcrawler.readers.sql import SqlReader
from sandcrawler.site.app import create_app
from sandcrawler.web.http.fetch import HttpFetcher
from sandcrawler_testkit.postgrest import PostgrestServer

# SQL: on SQLite and PostgreSQL
pytestmark = pytest.mark.both_backends

SECOND = "20240102030405"
EARLY = datetime(2024, 1, 2, 3, 4, 6, tzinfo=UTC)
LATE = datetime(2024, 1, 2, 3, 4, 7, tzinfo=UTC)
#: url -> its two captures in the same second (warc_path, warc_offset, row_created), and
#: the one every reader must call the latest
CASES: dict[str, tuple[list[tuple[str, int, datetime]], tuple[str, int]]] = {
    # indexed together: the place in the WARC files decides (a larger offset in the
    # earlier-named file must not win, as it did on the page)
    "https://example.org/same-time.pdf": (
        [("warcs/a.warc.gz", 9000, EARLY), ("warcs/b.warc.gz", 10, EARLY)],
        ("warcs/b.warc.gz", 10)),
    # indexed one after the other: the one indexed last
    "https://example.org/indexed-later.pdf": (
        [("warcs/d.warc.gz", 500, EARLY), ("warcs/c.warc.gz", 20, LATE)],
        ("warcs/c.warc.gz", 20)),
}


def _row(url: str, path: str, offset: int, created: datetime) -> dict[str, Any]:
    return {"url": url, "surt": "org,example)/x", "datetime": SECOND, "mimetype":
            "application/pdf", "status_code": 200, "sha1hex": f"{offset:040x}",
            "warc_csize": 100, "warc_offset": offset, "warc_path": path,
            "row_created": created}


@pytest.fixture(scope="module")
def captured(postgrest: PostgrestServer) -> PostgrestServer:
    """The module's PostgREST, the captures of CASES written once (the tests read them)."""
    engine = make_engine(postgrest.database_url)
    with begin(engine) as conn:
        for url, (captures, _) in CASES.items():
            conn.execute(insert(web_cdx), [_row(url, *c) for c in captures])
            conn.execute(insert(ingest_file_result), [{
                "ingest_type": "pdf", "base_url": url, "hit": True, "status": "success",
                "terminal_url": url, "terminal_dt": SECOND, "terminal_status_code": 200}])
    engine.dispose()
    return postgrest


@pytest.fixture
def archive(captured: PostgrestServer) -> Iterator[dict[str, Any]]:
    engine = make_engine(captured.database_url)
    fetcher = HttpFetcher(timeout=10, addresses=None)  # our own PostgREST on loopback
    services = Services(load_settings({"database.url": captured.database_url}))
    with TestClient(create_app(services), base_url="http://127.0.0.1") as client:
        yield {"sql": SqlReader(engine), "postgrest": PostgrestReader(captured.url, fetcher),
               "services": services, "client": client}
    services.close()
    fetcher.close()
    engine.dispose()


@pytest.mark.parametrize("url", sorted(CASES))
def test_every_reader_picks_the_same_capture(archive: dict[str, Any], url: str) -> None:
    expected = CASES[url][1]
    picked: dict[str, tuple[str, int]] = {}
    for name in ("sql", "postgrest"):
        row = archive[name].capture(url)
        assert row is not None
        picked[name] = (row.warc_path, row.warc_offset)
    replayed = archive["services"].web_archive.lookup(url)
    assert replayed is not None
    picked["archive"] = (replayed[-1].warc_path, replayed[-1].warc_offset)
    page = archive["client"].get("/ingest/pdf?" + urlencode({"url": url, "format": "json"}))
    assert page.status_code == 200, page.text
    data = page.json()
    picked["page: hops"] = (data["hops"][0]["warc_path"], data["hops"][0]["warc_offset"])
    picked["page: terminal"] = (data["terminal_capture"]["warc_path"],
                                data["terminal_capture"]["warc_offset"])
    assert picked == dict.fromkeys(picked, expected)
