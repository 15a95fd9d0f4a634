"""pywb, the replay tool of web archives, replays what our crawler archived.

A landing page and its PDF are crawled by the file ingester from a loopback
site at its own URLs (``http.routes``), and so is the offline demo (its PLOS
ONE article replayed too); ``sandcrawler web cdxj`` exports the
index; the real pywb from PyPI (its own virtual environment, made by the test
kit: it is GPL-3.0 and pins old dependencies, so it is never imported) serves
our WARC files from the blob store by that index, on loopback. It replays the
page rewritten for replay, the PDF byte for byte, and the robots.txt the crawl
fetched; and pywb's own indexer, run over our WARC files, finds every record
where our index says it is.
"""

from __future__ import annotations

import re
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from sandcrawler.app.demo import run_demo
from sandcrawler.app.services import Services
from sandcrawler.app.settings import load_settings
from sandcrawler.demo import PLOS, PLOS_PDF, DemoSite
from sandcrawler.records.ingest import IngestRequest
from sandcrawler.storage.local import LocalBlobStore
from sandcrawler_testkit.pdfs import make_pdf
from sandcrawler_testkit.publishers import Answer, WebSite, page
from sandcrawler_testkit.pywb import PywbServer
from tests.helpers.cli import invoke

LANDING_URL = "https://journal.example/article/7"
PDF_URL = "https://journal.example/article/7.pdf"
TITLE = "Replayable findings on archived articles"
LANDING = f"""<!doctype html><html><head><title>{TITLE}</title>
<meta name="citation_title" content="{TITLE}">
<meta name="citation_pdf_url" content="{PDF_URL}"></head>
<body><h1>{TITLE}</h1><p>The abstract.</p>
<a href="/article/7.pdf">Download the PDF</a></body></html>"""
ROBOTS = b"User-agent: *\nDisallow: /private/\n"


def fetch(url: str) -> tuple[int, bytes, dict[str, str]]:
    try:
        with urllib.request.urlopen(url, timeout=30) as resp:
            return resp.status, resp.read(), dict(resp.headers)
    except urllib.error.HTTPError as e:
        return e.code, e.read(), dict(e.headers)


@pytest.fixture
def crawled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict]:
    """The landing page and its PDF, crawled and archived by the file ingester;
    the CDXJ export of the index; where the WARC files are."""
    pdf = make_pdf(["Replayable findings: the full text."], title=TITLE)
    with WebSite() as web:
        web.add(LANDING_URL, page(LANDING))
        web.add(PDF_URL, Answer(200, pdf, content_type="application/pdf"))
        web.robots("journal.example", ROBOTS)
        monkeypatch.setenv("SANDCRAWLER_HTTP_ROUTES", orjson.dumps(web.routes()).decode())
        monkeypatch.setenv("SANDCRAWLER_CRAWL_CONTACT", "mailto:archive@example.org")
        services = Services(load_settings({}))
        ingester = services.file_ingester()
        try:
            result = ingester.ingest(IngestRequest(ingest_type="pdf", base_url=LANDING_URL))
        finally:
            ingester.close()
        store = services.blobs
        services.close()
    assert result.status == "success", result
    assert isinstance(store, LocalBlobStore)
    cdxj = tmp_path / "index.cdxj"
    done = invoke(["web", "cdxj", "-o", str(cdxj)])
    assert done.exit_code == 0, done.stderr
    lines = cdxj.read_text().splitlines()
    assert "3 captures written" in done.stderr  # robots.txt, the page, the PDF
    yield {"pdf": pdf, "store": store.root, "cdxj": cdxj, "lines": lines, "result": result}


def captures(lines: list[str]) -> dict[str, tuple[str, dict[str, str]]]:
    """url -> (timestamp, fields) of each CDXJ line."""
    out = {}
    for line in lines:
        _key, timestamp, fields = line.split(" ", 2)
        data = orjson.loads(fields)
        out[data["url"]] = (timestamp, data)
    return out


def test_pywb_replays_the_page_and_the_pdf_we_crawled(
        pywb_venv: Path, crawled: dict, tmp_path: Path) -> None:
    index = captures(crawled["lines"])
    assert set(index) == {LANDING_URL, PDF_URL, "https://journal.example/robots.txt"}
    landing_ts, _ = index[LANDING_URL]
    pdf_ts, pdf_fields = index[PDF_URL]
    assert pdf_fields["mime"] == "application/pdf" and pdf_fields["status"] == "200"
    with PywbServer(pywb_venv, tmp_path / "pywb", archive_dir=crawled["store"]) as pywb:
        pywb.add_index(crawled["cdxj"])
        status, html, _ = fetch(pywb.replay_url(landing_ts, LANDING_URL))
        assert status == 200, pywb.log.read_text(errors="replace")[-3000:]
        text = html.decode("utf-8")
        assert f"<h1>{TITLE}</h1>" in text
        # pywb's rewriting: its client-side script inserted, links into the archive
        assert "wombat" in text
        assert f"/{pywb.collection}/{landing_ts}/{PDF_URL}" in text
        # the PDF, rewritten mode and as recorded: the very bytes crawled
        for as_recorded in (False, True):
            status, body, headers = fetch(pywb.replay_url(pdf_ts, PDF_URL,
                                                          as_recorded=as_recorded))
            assert status == 200
            assert body == crawled["pdf"]
            assert headers["Content-Type"] == "application/pdf"
        robots_ts, _ = index["https://journal.example/robots.txt"]
        status, body, _ = fetch(pywb.replay_url(robots_ts, "https://journal.example/robots.txt",
                                                as_recorded=True))
        assert (status, body) == (200, ROBOTS)
        # a URL never captured is pywb's 404, not a page from elsewhere
        status, _, _ = fetch(pywb.replay_url(landing_ts, "https://journal.example/never"))
        assert status == 404


def test_pywb_replays_the_demo(pywb_venv: Path, tmp_path: Path,
                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The offline demo (``run_demo`` over ``DemoSite``, real publishers' URLs):
    its PLOS ONE landing page and the PDF behind it, replayed from its WARCs."""
    with DemoSite() as demo:
        monkeypatch.setenv("SANDCRAWLER_HTTP_ROUTES", orjson.dumps(demo.routes()).decode())
        services = Services(load_settings({}))
        try:
            report = run_demo(services)
            store = services.blobs
        finally:
            services.close()
        pdf = demo.content(PLOS_PDF)
        landing = demo.content(PLOS).decode("utf-8")
    assert report.statuses["success"] >= 3, report.statuses
    assert isinstance(store, LocalBlobStore)
    cdxj = tmp_path / "demo.cdxj"
    done = invoke(["web", "cdxj", "-o", str(cdxj)])
    assert done.exit_code == 0, done.stderr
    index = captures(cdxj.read_text().splitlines())
    with PywbServer(pywb_venv, tmp_path / "pywb", archive_dir=store.root) as pywb:
        pywb.add_index(cdxj)
        status, html, _ = fetch(pywb.replay_url(index[PLOS][0], PLOS))
        assert status == 200, pywb.log.read_text(errors="replace")[-3000:]
        title = re.search(r"<title>(.*?)</title>", landing, re.S)
        assert title is not None and title.group(1).strip() in html.decode("utf-8")
        assert "wombat" in html.decode("utf-8")
        status, body, _ = fetch(pywb.replay_url(index[PLOS_PDF][0], PLOS_PDF, as_recorded=True))
        assert status == 200 and body == pdf


def test_pywb_finds_each_record_where_our_index_says(pywb_venv: Path, crawled: dict) -> None:
    """pywb's own indexer over our WARC files: each capture of our CDXJ is a record
    at the same offset and length, with the same key, time, status and digest."""
    ours = {}
    for line in crawled["lines"]:
        key, timestamp, fields = line.split(" ", 2)
        data = orjson.loads(fields)
        ours[(data["filename"], data["offset"])] = (key, timestamp, data["url"], data["length"],
                                                    data["status"], data["digest"])
    warcs = sorted({name for name, _ in ours})
    out = subprocess.run([str(pywb_venv / "bin" / "cdx-indexer"), "--cdxj",
                          *[str(crawled["store"] / w) for w in warcs]],
                         capture_output=True, text=True, timeout=120, check=True)
    theirs = {}
    for line in out.stdout.splitlines():
        if not line or line.startswith(" CDX"):
            continue
        key, timestamp, fields = line.split(" ", 2)
        data = orjson.loads(fields)
        name = next(w for w in warcs if w.endswith(data["filename"]))
        theirs[(name, data["offset"])] = (key, timestamp, data["url"], data["length"],
                                          data.get("status"), data.get("digest"))
    assert ours.items() <= theirs.items()
