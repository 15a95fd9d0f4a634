"""``serve``'s /cdx: the wayback CDX server API over ``web_cdx``, on both
databases, through the real application (Starlette's test client): the
original crawler's exact queries (its ``CdxApiClient.fetch`` and
``lookup_best``), every parameter, bad queries as one-line 400s, the token."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import insert
from starlette.testclient import TestClient

from sandcrawler.app.services import Services
from sandcrawler.app.settings import load_settings
from sandcrawler.db.engine import begin
from sandcrawler.db.schema import web_cdx
from sandcrawler.records.capture import CdxRecord
from sandcrawler.site.app import create_app
from sandcrawler.web.archive.cdx import surt
from sandcrawler.web.archive.cdx_server import FIELDS
from sandcrawler_testkit.http_files import FileServer
from tests.helpers.isolation import isolated

# SQL: on SQLite and PostgreSQL
pytestmark = pytest.mark.both_backends

BASE = "http://127.0.0.1"
PAPER = "https://example.org/paper.pdf"
SHA1 = "a" * 40
#: (url, timestamp, status, mime, location): captures with times of our choosing
ROWS = [
    (PAPER, "20190101000000", 200, "application/pdf", None),
    (PAPER, "20190115000000", 200, "warc/revisit", None),
    (PAPER, "20200301000000", 302, "text/html", "https://example.org/paper2.pdf"),
    (PAPER, "20210601120000", 404, "text/html", None),
    (PAPER, "20210601130000", 200, "application/pdf", None),
    ("https://example.org/other/page.html", "20200101000000", 200, "text/html", None),
    ("https://sub.example.org/x", "20200102000000", 200, "text/html", None),
    ("https://example.com/", "20200103000000", 200, "text/html", None),
]


@pytest.fixture(scope="module")
def cdx(module_db_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The captures of ROWS and one of a real crawl, once per module and backend (the
    tests only query them), and a client of the application on them."""
    home = tmp_path_factory.mktemp("cdx")
    with isolated(home):
        services = Services(load_settings({"database.url": module_db_url}))
    with begin(services.engine) as conn:
        conn.execute(insert(web_cdx), [CdxRecord(
            surt=surt(url), datetime=ts, url=url, status_code=status, mimetype=mime,
            location=location, sha1hex=SHA1, warc_path=f"warcs/2020/01/01/W-{i}.warc.gz",
            warc_offset=100 * i, warc_csize=50 + i).to_row() for i, (url, ts, status, mime,
                                                                      location) in enumerate(ROWS)])
    # and one capture made by a real crawl
    www = home / "www"
    www.mkdir()
    (www / "a.html").write_bytes(b"<html><body>A page</body></html>")
    with FileServer(www) as server:
        services.settings.http.routes["https://crawled.example"] = server.url
        with services.web_archive.session() as session:
            session.capture("https://crawled.example/a.html", max_bytes=10**6).close()
            session.commit()
    with TestClient(create_app(services), base_url=BASE) as client:
        yield {"client": client, "services": services}
    services.close()


def query(cdx: dict[str, Any], status: int = 200, **params: Any) -> Any:
    answer = cdx["client"].get("/cdx", params=params)
    assert answer.status_code == status, answer.text
    return answer.json() if params.get("output") == "json" and status == 200 else answer.text


def rows_of(answer: list[list[str]]) -> list[list[str]]:
    """The original crawler's reading of a JSON answer (``CdxApiClient._query_api``):
    nothing, or a header row then rows of exactly 11 fields."""
    if len(answer) <= 1:
        return []
    assert answer[0] == list(FIELDS)
    assert all(len(raw) == 11 for raw in answer[1:])
    return answer[1:]


# --- the original crawler's own queries -----------------------------------------------


@pytest.mark.parametrize("limit", ["1", "-1"])  # its newer and its older fetch()
def test_fetch_one_capture_by_url_and_time(cdx: dict[str, Any], limit: str) -> None:
    crawled = cdx["services"].web_archive.latest("https://crawled.example/a.html")
    params = {"url": crawled.url, "from": crawled.datetime, "to": crawled.datetime,
              "matchType": "exact", "limit": limit, "output": "json"}
    for extra in ({}, {"filter": "statuscode:200"}):
        (raw,) = rows_of(query(cdx, **params, **extra))
        assert raw[1] == crawled.datetime and raw[2] == crawled.url and raw[4] == "200"
        assert (int(raw[8]), int(raw[9]), raw[10]) == (
            crawled.warc_csize, crawled.warc_offset, crawled.warc_path)
        assert "/" in raw[10]  # a WARC path, not a temporary liveweb name
    assert rows_of(query(cdx, **{**params, "from": "20000101000000", "to": "20000101000000"})) \
        == []
    assert rows_of(query(cdx, **params, filter="statuscode:404")) == []


def test_lookup_best_queries(cdx: dict[str, Any]) -> None:
    base = {"url": PAPER, "matchType": "exact", "limit": "-25", "output": "json"}
    assert [r[1] for r in rows_of(query(cdx, **base))] == [r[1] for r in ROWS[:5]]
    # max_age_days: from a date
    assert [r[1] for r in rows_of(query(cdx, **base, **{"from": "20200101"}))] == [
        "20200301000000", "20210601120000", "20210601130000"]
    # closest (and sort=closest): nearest first
    got = rows_of(query(cdx, **base, closest="20200215", sort="closest"))
    assert [r[1] for r in got][:2] == ["20200301000000", "20190115000000"]
    # its older form: collapsed by month, revisits filtered out
    got = rows_of(query(cdx, **base, collapse="timestamp:6", filter="!mimetype:warc/revisit"))
    assert [r[1] for r in got] == ["20190101000000", "20200301000000", "20210601120000"]


# --- the API's parameters -----------------------------------------------------------------


@pytest.mark.parametrize(("params", "urls"), [
    ({"url": "example.org/other/", "matchType": "prefix"}, {"https://example.org/other/page.html"}),
    ({"url": "example.org/*"}, {PAPER, "https://example.org/other/page.html"}),
    ({"url": "example.org", "matchType": "host"}, {PAPER, "https://example.org/other/page.html"}),
    ({"url": "example.org", "matchType": "domain"},
     {PAPER, "https://example.org/other/page.html", "https://sub.example.org/x"}),
    ({"url": "*.example.org"},
     {PAPER, "https://example.org/other/page.html", "https://sub.example.org/x"}),
    ({"url": "http://example.org/paper.pdf"}, {PAPER}),  # the key, not the scheme
])
def test_match_types(cdx: dict[str, Any], params: dict[str, str], urls: set[str]) -> None:
    assert {r[2] for r in rows_of(query(cdx, output="json", **params))} == urls


def test_time_range_limits_order_and_fields(cdx: dict[str, Any]) -> None:
    times = [r[1] for r in ROWS[:5]]

    def ts(**params: str) -> list[str]:
        return [r[0] for r in query(cdx, url=PAPER, output="json", fl="timestamp",
                                    **params)[1:]]

    assert ts(**{"from": "2020", "to": "2020"}) == ["20200301000000"]
    assert ts(to="2019") == times[:2]
    assert ts(limit="2") == times[:2]
    assert ts(limit="-2") == times[-2:]
    assert ts(limit="2", offset="1") == times[1:3]
    assert ts(sort="reverse", limit="2") == times[::-1][:2]
    assert ts(collapse="timestamp:4") == ["20190101000000", "20200301000000", "20210601120000"]
    assert ts(filter="statuscode:[23]..") == [t for t, r in zip(times, ROWS, strict=False)
                                              if r[2] != 404]
    assert ts(filter=["mimetype:application/.*", "!statuscode:404"]) == [times[0], times[4]]
    assert ts(filter="=mimetype:text/html") == [times[2], times[3]]
    assert ts(filter="~redirect:paper2") == [times[2]]
    answer = query(cdx, url=PAPER, output="json", fl="statuscode,redirect", limit="3")
    assert answer == [["statuscode", "redirect"], ["200", "-"], ["200", "-"],
                      ["302", "https://example.org/paper2.pdf"]]


def test_text_output_and_nothing_found(cdx: dict[str, Any]) -> None:
    text = query(cdx, url=PAPER, limit="1")
    (line,) = text.splitlines()
    assert line.split(" ") == [surt(PAPER), "20190101000000", PAPER, "application/pdf", "200",
                               CdxRecord(surt="x", datetime="20190101000000", url="x",
                                         sha1hex=SHA1, warc_path="x", warc_offset=0,
                                         warc_csize=0).sha1b32, "-", "-", "50", "0",
                               "warcs/2020/01/01/W-0.warc.gz"]
    assert query(cdx, url="https://nothing.example/") == ""
    assert query(cdx, url="https://nothing.example/", output="json") == []


@pytest.mark.parametrize(("params", "message"), [
    ({}, "url is required"),
    ({"url": "example.org", "matchType": "everything"}, "matchType 'everything': one of"),
    ({"url": "example.org", "limit": "ten"}, "limit 'ten' is not a whole number"),
    ({"url": "example.org", "from": "2019-01"}, "from '2019-01': 1 to 14 digits"),
    ({"url": "example.org", "filter": "size:1"}, "filter: no field 'size'"),
    ({"url": "example.org", "filter": "statuscode:("}, "not a regular expression"),
    ({"url": "example.org", "filter": "statuscode"}, "is not [!]field:regex"),
    ({"url": "example.org", "fl": "urlkey,nope"}, "fl: no field 'nope'"),
    ({"url": "example.org", "output": "xml"}, "output 'xml': json or text"),
    ({"url": "example.org", "sort": "closest"}, "sort=closest needs closest"),
    ({"url": "example.org", "page": "2"}, "pagination is not offered"),
    ({"url": "http:///nohost"}, "has no host"),
])
def test_bad_queries_are_one_line_400s(cdx: dict[str, Any], params: dict[str, str],
                                       message: str) -> None:
    text = query(cdx, 400, **params)
    assert text.startswith("400 Bad Request: ") and message in text
    assert text.count("\n") == 1


def test_the_token_guards_cdx_too(migrated_db_url: str) -> None:
    token = "0123456789abcdefghijKLMN"
    services = Services(load_settings({"database.url": migrated_db_url, "serve.token": token}))
    try:
        with TestClient(create_app(services), base_url=BASE) as client:
            assert client.get("/cdx", params={"url": PAPER}).status_code == 401
            answer = client.get("/cdx", params={"url": PAPER, "output": "json"},
                                headers={"authorization": f"Bearer {token}"})
            assert answer.status_code == 200 and answer.json() == []
    finally:
        services.close()
