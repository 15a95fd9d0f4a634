"""What our WARC files say of themselves and what a crawl puts in them: the
warcinfo record (software, hostname, operator, format, conformsTo, robots
policy), the robots.txt a crawl fetched (archived as Heritrix does: once per
origin per process, revisits for the same bytes, cut ones marked), and the
CDXJ export (every capture, sorted bytewise, as pywb needs)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from sqlalchemy import insert, select
from warcio.archiveiterator import ArchiveIterator

from sandcrawler.app.services import Services
from sandcrawler.app.settings import load_settings
from sandcrawler.db.engine import begin, make_engine
from sandcrawler.db.schema import web_cdx
from sandcrawler.records.capture import CdxRecord
from sandcrawler.records.ingest import IngestRequest
from sandcrawler.version import __version__
from sandcrawler.web.archive.captures import WARC_FORMAT, WARC_SPEC, WarcInfo
from sandcrawler.web.archive.cdxj import cdxj_line, write_cdxj
from sandcrawler.web.http.fetch import HttpFetcher
from sandcrawler.web.robots import MAX_BYTES, RobotsRules
from sandcrawler_testkit.publishers import Answer, WebSite, page
from tests.helpers.cli import invoke

PAGE = "https://pub.example/a/1"
PDF = b"%PDF-1.4\n" + b"x" * 2000 + b"\n%%EOF\n"
ROBOTS = b"User-agent: *\nDisallow: /private/\n"


class Crawl:
    """The file ingester on services of its own (one process's)."""

    def __init__(self, web: WebSite, **settings: Any) -> None:
        self.services = Services(load_settings({"http.routes": web.routes(), **settings}))

    def __call__(self, url: str) -> dict[str, Any]:
        ingester = self.services.file_ingester()
        try:
            return ingester.ingest(IngestRequest(ingest_type="pdf", base_url=url))
        finally:
            ingester.close()

    def rows(self) -> list[CdxRecord]:
        with begin(self.services.engine) as conn:
            return [CdxRecord.from_row(r._mapping) for r in conn.execute(
                select(web_cdx).order_by(web_cdx.c.row_created, web_cdx.c.warc_offset))]

    def records(self, warc_path: str) -> list[Any]:
        with self.services.blobs.open_read(warc_path) as f:
            return [(r.rec_type, r.rec_headers, r.content_stream().read())
                    for r in ArchiveIterator(f)]

    def close(self) -> None:
        self.services.close()


@pytest.fixture
def web() -> Iterator[WebSite]:
    with WebSite() as site:
        site.add(PAGE, Answer(200, PDF, content_type="application/pdf"))
        site.add("https://pub.example/a/2", Answer(200, PDF + b"2", content_type="application/pdf"))
        site.add("https://pub.example/private/3", page("<html>secret</html>"))
        site.robots("pub.example", ROBOTS)
        yield site


# --- warcinfo --------------------------------------------------------------------------


def test_warcinfo_says_who_crawled_with_what_and_how(web: WebSite) -> None:
    crawl = Crawl(web, **{"crawl.contact": "mailto:ops@example.org",
                          "crawl.operator": "Example Library"})
    try:
        assert crawl(PAGE).status == "success"
        (warc,) = {r.warc_path for r in crawl.rows()}
        rec_type, headers, block = crawl.records(warc)[0]
    finally:
        crawl.close()
    assert rec_type == "warcinfo"
    assert headers.get_header("WARC-Filename") == warc.rsplit("/", 1)[-1]
    fields = dict(line.split(": ", 1) for line in block.decode().splitlines() if line)
    assert fields == {
        "software": f"sandcrawler/{__version__}", "hostname": socket.gethostname(),
        "http-header-user-agent": f"sandcrawler/{__version__} (+mailto:ops@example.org)",
        "operator": "Example Library", "robots": "obey", "format": WARC_FORMAT,
        "conformsTo": WARC_SPEC}
    assert WARC_FORMAT == "WARC File Format 1.1"  # the version our records carry
    assert headers.protocol == "WARC/1.1"


def test_warcinfo_operator_defaults_to_the_contact_and_robots_off_is_said(
        web: WebSite) -> None:
    crawl = Crawl(web, **{"crawl.contact": "mailto:ops@example.org", "crawl.robots": False})
    try:
        fields = crawl.services.web_archive.info.fields()
    finally:
        crawl.close()
    assert fields["operator"] == "mailto:ops@example.org" and fields["robots"] == "ignore"
    assert "operator" not in WarcInfo("sandcrawler/1").fields()


# --- robots.txt archived ------------------------------------------------------------------


def test_the_robots_txt_a_crawl_fetched_is_in_its_warc_and_index(web: WebSite) -> None:
    crawl = Crawl(web)
    try:
        assert crawl(PAGE).status == "success"
        assert crawl("https://pub.example/private/3").status == "robots-disallowed"
        assert crawl("https://pub.example/a/2").status == "success"
        rows = crawl.rows()
        robots = [r for r in rows if r.url == "https://pub.example/robots.txt"]
        # fetched once for the three crawls of the process, in the first one's file
        assert len(robots) == 1 and robots[0].status_code == 200
        assert robots[0].warc_path == next(r.warc_path for r in rows if r.url == PAGE)
        assert robots[0].mimetype == "text/plain" and robots[0].size == len(ROBOTS)
        responses = [(h.get_header("WARC-Target-URI"), body)
                     for t, h, body in crawl.records(robots[0].warc_path) if t == "response"]
        assert ("https://pub.example/robots.txt", ROBOTS) in responses
    finally:
        crawl.close()
    assert web.requests.count("pub.example/robots.txt") == 1
    # another process fetches it again: the same bytes are a revisit, not a copy
    again = Crawl(web)
    try:
        assert again(PAGE).status == "success-existing"  # a hit: nothing fetched
        assert again("https://pub.example/private/3").status == "robots-disallowed"
        robots = [r for r in again.rows() if r.url == "https://pub.example/robots.txt"]
        assert [r.is_revisit for r in robots] == [False, True]
    finally:
        again.close()
    assert web.requests.count("pub.example/robots.txt") == 2


def test_a_missing_robots_txt_is_archived_as_its_404(web: WebSite) -> None:
    web.add("https://other.example/f.pdf", Answer(200, PDF, content_type="application/pdf"))
    crawl = Crawl(web)
    try:
        assert crawl("https://other.example/f.pdf").status == "success"
        (robots,) = [r for r in crawl.rows() if r.url == "https://other.example/robots.txt"]
    finally:
        crawl.close()
    assert robots.status_code == 404


def test_a_robots_txt_over_the_limit_is_archived_cut_and_marked(tmp_path: Path,
                                                                 web: WebSite) -> None:
    big = b"User-agent: *\nDisallow: /private/\n" + b"# padding\n" * (MAX_BYTES // 10 + 100)
    web.robots("big.example", big)
    web.add("https://big.example/private/x", page("<html>x</html>"))  # routed
    crawl = Crawl(web)
    try:
        archive = crawl.services.web_archive
        rules = RobotsRules(archive.fetcher)
        with archive.session() as session:
            assert rules.refusal("https://big.example/private/x", session) is not None
            (row,) = session.commit()
        ((_, headers, body),) = [rec for rec in crawl.records(row.warc_path)
                                 if rec[0] == "response"]
    finally:
        crawl.close()
    assert headers.get_header("WARC-Truncated") == "length"
    assert body == big[:MAX_BYTES] and row.size == MAX_BYTES


def test_robots_rules_without_a_session_archive_nothing(tmp_path: Path, web: WebSite) -> None:
    fetcher = HttpFetcher(routes=web.routes(), retries=0)
    try:
        assert RobotsRules(fetcher).refusal("https://pub.example/private/x") is not None
    finally:
        fetcher.close()


# --- CDXJ -----------------------------------------------------------------------------------


def _row(url: str, ts: str, offset: int, **kw: Any) -> CdxRecord:
    from sandcrawler.web.archive.cdx import surt
    return CdxRecord(surt=surt(url), datetime=ts, url=url, warc_path="warcs/w.warc.gz",
                     warc_offset=offset, warc_csize=10, **kw)


def test_cdxj_line_fields() -> None:
    line = cdxj_line(_row("https://a.example/x", "20200101000000", 7, status_code=302,
                          mimetype="text/html", sha1hex="a" * 40,
                          location="https://a.example/y"))
    key, ts, data = line.split(" ", 2)
    assert (key, ts) == ("example,a)/x", "20200101000000")
    assert orjson.loads(data) == {
        "url": "https://a.example/x", "mime": "text/html", "status": "302",
        "digest": "VKVKVKVKVKVKVKVKVKVKVKVKVKVKVKVK", "redirect": "https://a.example/y",
        "length": "10", "offset": "7", "filename": "warcs/w.warc.gz"}


def test_cdxj_export_is_sorted_bytewise(migrated_db_url: str, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Keys that a locale would order otherwise (case, punctuation, a prefix of
    another), and captures of one key and second: the output is `LC_ALL=C sort`'s."""
    engine = make_engine(migrated_db_url)
    urls = ["https://b.example/Z", "https://b.example/a", "https://b.example/a-b",
            "https://b.example/a/b", "https://b.example/a_b", "https://b.example/é",
            "https://a.example/", "https://b.example/a?x=1"]
    rows = [_row(u, f"2020010100000{i % 3}", i, status_code=200) for i, u in enumerate(urls)]
    rows += [_row(urls[1], "20200101000000", 100 + i, status_code=200) for i in range(3)]
    with begin(engine) as conn:
        conn.execute(insert(web_cdx), [r.to_row() for r in rows])
    lines: list[str] = []
    assert write_cdxj(engine, lines.append) == len(rows)
    engine.dispose()
    assert [ln.encode() for ln in lines] == sorted(ln.encode() for ln in lines)
    assert all(ln.endswith("\n") for ln in lines)
    # the command: the same lines, a file written whole
    monkeypatch.setenv("SANDCRAWLER_DATABASE_URL", migrated_db_url)
    out = tmp_path / "index.cdxj"
    done = invoke(["web", "cdxj", "--output", str(out), "--progress"])
    assert done.exit_code == 0, done.stderr
    assert out.read_text() == "".join(lines)
    assert f"{len(rows)} captures written" in done.stderr
    assert not list(tmp_path.glob("*.part"))
    bad = invoke(["web", "cdxj", "--output", str(tmp_path / "no" / "such" / "dir.cdxj")])
    assert bad.exit_code == 1 and bad.stderr.startswith("Error: cannot write")
