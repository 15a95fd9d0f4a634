"""The pages of ``sandcrawler serve`` in a real headless browser (Debian's Chromium
driven by Playwright; no browser download), on a database filled by the real
commands: the offline demo's ingests (processed PDFs with thumbnails, JATS, HTML,
references; in the demo's own SQLite database), Crossref records with parsed
references, and a stored document without thumbnails whose metadata is hostile.
The same pages on PostgreSQL are tested in-process (test_site.py).

Every page is saved as a screenshot in ``$SANDCRAWLER_TEST_ARTIFACTS`` (default
``test-artifacts/`` in the repository). Without Chromium the tests skip, saying
why; in CI (``SANDCRAWLER_TEST_REQUIRE_BROWSER=1``) they fail instead.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import orjson
import pytest
import uvicorn

from sandcrawler.app.services import Services
from sandcrawler.app.settings import load_settings
from sandcrawler.core.identifiers import sha1_base32
from sandcrawler.site.app import create_app
from tests.helpers.cli import invoke
from tests.helpers.demo import demo_copy
from tests.helpers.paths import REPO
from tests.helpers.skips import unavailable

# seconds per test: real processes
pytestmark = pytest.mark.slow

CHROMIUM = os.environ.get("SANDCRAWLER_TEST_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = Path(os.environ.get("SANDCRAWLER_TEST_ARTIFACTS", REPO / "test-artifacts"))
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
#: read when the module loads (the isolated environment of each test drops SANDCRAWLER_*)
UPDATE_DOC_IMAGES = os.environ.get("SANDCRAWLER_UPDATE_DOC_IMAGES") == "1"
HOSTILE_TITLE = ("<script>document.title='pwned'</script><img src=x onerror=alert(1)> "
                 "שלום עולם مرحبا " + "a very long title that goes on " * 60)


def _unavailable(reason: str) -> None:
    unavailable(reason, "BROWSER")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("Playwright's Python package is not installed (pip install playwright)")
    if not Path(CHROMIUM).exists():
        _unavailable(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


class Server:
    """``create_app`` served by uvicorn on a loopback port, in a thread."""

    def __init__(self, services: Services) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(create_app(services), host="127.0.0.1", port=self.port,
                                log_level="warning", access_log=False)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> Server:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)


def _fill(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The demo's data directory (its own SQLite database and store: the demo never
    writes elsewhere), then the real commands on it; what it holds."""
    demo_dir = demo_copy(tmp_path / "demo")
    monkeypatch.delenv("SANDCRAWLER_DATABASE_URL", raising=False)
    monkeypatch.setenv("SANDCRAWLER_DATA_DIR", str(demo_dir))
    refs = invoke(["persist", "crossref", "--parse-refs",
                   str(REPO / "examples" / "crossref-works.jsonl")])
    assert refs.exit_code == 0, refs.stderr
    (tmp_path / "doc.html").write_bytes(b"<!doctype html><html><body><p>x</p></body></html>")
    (tmp_path / "meta.json").write_bytes(orjson.dumps({
        "title": [HOSTILE_TITLE], "pmcid": "PMC7654321",
        "author": [{"given": "<i>Mallory</i>", "family": "\u202eevil"}],
        "abstract": "<script>alert('abstract')</script>"}))
    added = invoke(["store", "add", str(tmp_path / "doc.html"), "--kind", "html",
                    "--metadata", str(tmp_path / "meta.json")])
    assert added.exit_code == 0, added.stderr
    return {"hostile": orjson.loads(added.stdout)}


def _shot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def _check_links(page: Any, base: str, seen: set[str]) -> None:
    """Every same-site link on the page answers below 400."""
    # getAttribute: an SVG link's href is not a string (the dashboard's status bars)
    hrefs = "els => els.map(e => new URL(e.getAttribute('href'), document.baseURI).href)"
    for href in page.eval_on_selector_all("a[href]", hrefs):
        parts = urlsplit(href)
        if f"{parts.scheme}://{parts.netloc}" != base or href in seen:
            continue
        seen.add(href)
        answer = page.request.get(href)
        assert answer.status < 400, f"{href} answered {answer.status} on {page.url}"


def test_pages_in_a_browser(browser: Any, tmp_path: Path,
                            monkeypatch: pytest.MonkeyPatch) -> None:
    backend = "sqlite"  # the demo's own database
    held = _fill(tmp_path, monkeypatch)
    errors: list[str] = []
    with Services(load_settings()) as services, Server(services) as server:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("dialog", lambda d: errors.append(f"dialog: {d.message}"))
        seen: set[str] = set()

        def visit(path: str, name: str, status: int = 200) -> Any:
            answer = page.goto(server.url + path)
            assert answer.status == status, f"{path}: {answer.status}"
            _shot(page, f"{backend}-{name}")
            return answer

        # the dashboard: every table counted, charts drawn
        visit("/", "dashboard")
        tables = page.locator("table.numbers").inner_text()
        assert "file ingest results" in tables and "documents in the catalogue" in tables
        assert page.locator("svg.chart").count() >= 3
        _check_links(page, server.url, seen)

        # every document the catalogue holds
        entries = list(services.catalogue.entries())
        assert len(entries) >= 6
        for entry in entries:
            visit(f"/document/{entry.uuid}", f"document-{entry.uuid[:8]}")
            assert entry.uuid in page.locator("table.kv").first.inner_text()
            if "thumb-medium" in entry.resources:
                img = page.locator(".thumbs img")
                assert img.evaluate("i => i.complete && i.naturalWidth > 0")
            else:
                assert "No thumbnails." in page.content()
            _check_links(page, server.url, seen)
        pdf = next(e for e in entries if "pdf" in e.resources and "thumb-medium" in e.resources)
        visit(f"/document/{pdf.uuid}", "document-pdf")
        assert page.locator("h3", has_text="pdf0").count() == 1
        assert page.locator("text=Hops of the latest crawl").count() == 1
        jats = next(e for e in entries if "nxml" in e.resources)
        visit(f"/document/{jats.uuid}", "document-jats")
        assert page.locator("table.refs tbody tr").count() == 12

        # the hostile document: shown as text, nothing run, the page still laid out
        hostile = held["hostile"]
        visit(f"/document/{hostile['id']}", "document-hostile")
        assert page.title() != "pwned"
        assert "<script>document.title" in page.locator("h1").inner_text()
        assert page.locator("main script, main img[src='x']").count() == 0
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 1280 + 20, "a long title must wrap, not widen the page"

        # search: every identifier form finds its document
        forms = {
            "doi": pdf.doi, "doi-url": f"https://doi.org/{pdf.doi}", "sha1": pdf.sha1,
            "sha1-base32": sha1_base32(pdf.sha1 or ""), "uuid": pdf.uuid,
            "pmcid": "PMC7654321", "title": "worked example",
        }
        for name, query in forms.items():
            visit("/search?" + urlencode({"q": query}), f"search-{name}")
            expect = "10.5555/example.2024.001" if name == "title" else (
                hostile["id"] if name == "pmcid" else pdf.uuid)
            assert expect in page.locator("main").inner_text(), name
            _check_links(page, server.url, seen)
        visit("/search?" + urlencode({"q": "pmid:99999999"}), "search-nothing")
        assert "Nothing found." in page.content()

        # ingest results, their hops and captures
        with services.engine.connect() as conn:
            result = conn.exec_driver_sql(
                "SELECT ingest_type, base_url FROM ingest_file_result WHERE status = 'success' "
                "AND ingest_type = 'pdf' ORDER BY base_url LIMIT 1").first()
        visit("/ingest/pdf?" + urlencode({"url": result[1]}), "ingest-result")
        assert page.locator("text=Hops").count() >= 1
        assert page.locator("table").nth(1).locator("tbody tr").count() >= 2
        _check_links(page, server.url, seen)
        capture_href = page.locator("a[href^='/capture?']").last.get_attribute("href")
        visit(capture_href, "capture")
        assert "WARC-Target-URI" in page.locator("table.headers").first.inner_text()
        payload = page.locator("a", has_text="download").get_attribute("href")
        download = page.request.get(server.url + payload)
        assert download.status == 200 and download.body()[:5] == b"%PDF-"
        _check_links(page, server.url, seen)

        # Crossref references, deposited and parsed side by side
        visit("/crossref/10.5555/example.2024.001", "crossref")
        assert page.locator("table.sidebyside tbody tr").count() == 4
        _check_links(page, server.url, seen)

        # bad input: a clear page with a 4xx, never a 500
        for path, status, name in [
            ("/document/00000000-0000-4000-8000-000000000000", 404, "unknown-document"),
            ("/document/not-a-uuid", 400, "malformed-document"),
            (f"/document/{pdf.uuid}/resource/%2e%2e%2fetc%2fpasswd", 404, "traversal"),
            ("/search?q=x&page=999999999999", 400, "huge-page"),
            ("/capture?warc=..%2F..%2Fetc%2Fpasswd&offset=0", 400, "capture-traversal"),
            ("/nowhere", 404, "not-found"),
        ]:
            visit(path, f"error-{name}", status)
            assert page.locator("h1").inner_text().startswith(str(status))
        page.close()
    assert errors == []
    if backend == "sqlite" and UPDATE_DOC_IMAGES:
        img = REPO / "docs" / "img"
        img.mkdir(exist_ok=True)
        for name in ("dashboard", "document-pdf", "search-title", "ingest-result", "capture",
                     "crossref", "document-hostile"):
            shutil.copy(ARTIFACTS / f"sqlite-{name}.png", img / f"serve-{name}.png")


# --- pages worth reading (issue 23) ---------------------------------------------------------

#: a title as an ISO-8859-1 page or XML holding cp1252 gives it: byte 0x92 as U+0092
C1_TITLE = "Yby Yau y Azote\x92y: a community\x92s health"
AUTHORS = [{"name": "Ann Lee"}, {"given": "Jane", "family": "Doe"},
           {"literal": "The Consortium"}, "Raw String", {"name": "Bo Chen"}]
SCRIPTED = (b"<!doctype html><html><head><title>captured</title>"
            b"<script>document.title='pwned'</script></head><body>x</body></html>")


def _fill_readable(tmp_path: Path, services: Services) -> dict[str, Any]:
    """Beside the demo: a document whose metadata has names of every CSL shape and
    a title with a C1 control, and a captured HTML page with a script."""
    (tmp_path / "named.html").write_bytes(b"<!doctype html><p>named</p>")
    (tmp_path / "named.json").write_bytes(orjson.dumps({
        "title": [C1_TITLE], "author": AUTHORS, "DOI": "10.5555/named.1",
        "container-title": ["Journal of Names"], "issued": {"date-parts": [[2019, 4, 22]]}}))
    added = invoke(["store", "add", str(tmp_path / "named.html"), "--kind", "html",
                    "--metadata", str(tmp_path / "named.json")])
    assert added.exit_code == 0, added.stderr
    www = tmp_path / "www"
    www.mkdir()
    (www / "scripted.html").write_bytes(SCRIPTED)
    from sandcrawler_testkit.http_files import FileServer

    with FileServer(www) as origin:
        capturing = Services(load_settings({"http.routes": {"https://example.org": origin.url},
                                            "http.allow_networks": ["127.0.0.0/8"]}))
        with capturing, capturing.web_archive.session() as session:
            session.capture("https://example.org/scripted.html", max_bytes=10**6).close()
            session.commit()
    scripted = services.web_archive.latest("https://example.org/scripted.html")
    assert scripted is not None
    return {"named": orjson.loads(added.stdout), "scripted": scripted}


def test_pages_read_well(browser: Any, tmp_path: Path,
                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 23: fields, not JSON; names, dates, sizes and hashes shown; no empty
    sections; references from 1; each search result once; the dashboard's titles,
    dates and status lists; a PDF viewed inline in a sandbox, captured HTML never
    rendered; a timeline per URL; the replay link; no 404 or CSP error on the way."""
    backend = "sqlite"  # the demo's own database
    _fill(tmp_path, monkeypatch)
    replay = "http://localhost:8080/sandcrawler"
    with Services(load_settings({"serve.replay_url": replay})) as services:
        held = _fill_readable(tmp_path, services)
        server = Server(services)
        with server:
            page = browser.new_page(viewport={"width": 1280, "height": 900},
                                    accept_downloads=True)
            problems: list[str] = []
            page.on("pageerror", lambda e: problems.append(f"error: {e}"))
            page.on("console", lambda m: problems.append(f"console: {m.text}")
                    if m.type == "error" else None)
            page.on("response", lambda r: problems.append(f"{r.status} {r.url}")
                    if r.status >= 400 else None)

            def visit(path: str, name: str) -> Any:
                answer = page.goto(server.url + path)
                assert answer.status == 200, f"{path}: {answer.status}"
                _shot(page, f"{backend}-readable-{name}")
                return answer

            # the dashboard: no internal names, human dates, titles, status lists
            visit("/", "dashboard")
            main = page.locator("main").inner_text()
            assert "wbgrp" not in main and "pdftable_cells" not in main
            assert not re.search(r"\b\d{14}\b", main), "a CDX timestamp shown as digits"
            assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", main)
            docs = page.locator("table.recent-documents a")
            titles = [docs.nth(i).inner_text() for i in range(docs.count())]
            assert "Yby Yau y Azote\u2019y: a community\u2019s health" in titles
            assert not any(re.fullmatch(r"[0-9a-f-]{36}", t) for t in titles)
            bar = page.locator("svg.chart a.bar[data-label='no-pdf-link']")
            assert bar.count() == 1
            bar.locator("rect").click()
            page.wait_for_url("**/ingest?*status=no-pdf-link*")
            _shot(page, f"{backend}-readable-status-list")
            statuses = page.locator("table.results tbody tr td:nth-child(4)").all_inner_texts()
            assert statuses and set(statuses) == {"no-pdf-link"}
            page.locator("a.sort", has_text="oldest first").click()
            assert "sort=date" in page.url
            assert page.locator("table.results tbody tr").count() == len(statuses)

            # a document whose metadata has names of every shape and a cp1252 title
            named = held["named"]
            visit(f"/document/{named['id']}", "document-named")
            assert page.locator("h1").inner_text() == (
                "Yby Yau y Azote\u2019y: a community\u2019s health")
            assert page.locator("p.authors").inner_text() == (
                "Ann Lee, Jane Doe, The Consortium, Raw String, Bo Chen")
            metadata = page.locator("table.metadata").inner_text()
            assert "journal\tJournal of Names" in metadata
            assert "published\t2019-04-22" in metadata
            assert "{" not in metadata and ", ," not in page.content()
            # an HTML document has no PDF table, not even an empty one
            assert page.locator("h2", has_text="PDF table").count() == 0

            # a processed PDF: its PDF table as fields, its sources, viewed inline
            pdf = next(e for e in services.catalogue.entries()
                       if "pdf" in e.resources and "thumb-medium" in e.resources and e.doi)
            visit(f"/document/{pdf.uuid}", "document-pdf")
            tables = page.locator("table.pdftable").all_inner_texts()
            assert tables and not any("{" in t for t in tables)
            assert "pages\t" in "\n".join(tables)
            assert page.locator("h3", has_text="Where each field came from").count() == 1
            first_ref = page.locator("table.refs tbody tr td").first
            if first_ref.count():
                assert first_ref.inner_text() == "1"
            answer = page.request.get(f"{server.url}/document/{pdf.uuid}/resource/pdf")
            assert answer.headers["content-disposition"].startswith("inline")
            assert answer.headers["content-security-policy"].startswith("sandbox;")
            assert answer.headers["content-type"] == "application/pdf"
            downloads: list[Any] = []
            page.on("download", lambda d: downloads.append(d))
            page.goto(f"{server.url}/document/{pdf.uuid}/resource/pdf")
            page.wait_for_timeout(1000)  # not an assert on time: the viewer loads its frame
            _shot(page, f"{backend}-readable-pdf-inline")
            assert downloads == [], "the PDF should be shown, not downloaded"
            assert any(f.url.startswith("chrome-extension://") for f in page.frames), (
                "Chromium's PDF viewer did not open the PDF")
            # a thumbnail on its own: Chromium's image viewer styles it, no CSP error
            visit(f"/document/{pdf.uuid}/resource/thumb-medium", "thumbnail")

            # captured HTML with a script: a download, never a page of ours
            scripted = held["scripted"]
            visit(f"/capture?warc={scripted.warc_path}&offset={scripted.warc_offset}",
                  "capture-html")
            href = page.locator("a", has_text="download").get_attribute("href")
            with page.expect_download() as got:
                try:
                    page.goto(server.url + href)
                except Exception as e:  # Chromium reports the navigation as aborted
                    assert "net::ERR_ABORTED" in str(e) or "Download" in str(e), e
            assert got.value.suggested_filename == "scripted.html"
            assert page.title() != "pwned"

            # a capture of a PDF: size and the hashes the index holds; timeline; replay
            with services.engine.connect() as conn:
                row = conn.exec_driver_sql(
                    "SELECT url, datetime, warc_path, warc_offset, size, sha256hex, md5hex "
                    "FROM web_cdx WHERE mimetype = 'application/pdf' AND size > 0 "
                    "ORDER BY url LIMIT 1").first()
            visit("/capture?" + urlencode({"warc": row[2], "offset": row[3]}), "capture-pdf")
            assert page.locator("td.payload").inner_text().startswith(f"{row[4]:,} bytes")
            assert page.locator("td.sha256").inner_text() == row[5]
            assert page.locator("td.md5").inner_text() == row[6]
            assert page.locator("a.replay").get_attribute("href") == f"{replay}/{row[1]}/{row[0]}"
            page.locator("a", has_text="capture").filter(has_text="of this URL").click()
            page.wait_for_url("**/timeline?*")
            _shot(page, f"{backend}-readable-timeline")
            with services.engine.connect() as conn:
                n = conn.exec_driver_sql("SELECT count(*) FROM web_cdx WHERE url = ?",
                                         (row[0],)).scalar()
            assert page.locator("ol.timeline li").count() == n
            page.locator("ol.timeline li a").first.click()
            page.wait_for_url("**/capture?*")

            # a URL search lists each capture once (two ingests of one URL in the same
            # second recorded it twice: one row, "recorded 2 times")
            with services.engine.connect() as conn:
                urls = [r[0] for r in conn.exec_driver_sql(
                    "SELECT url FROM web_cdx WHERE url NOT LIKE 'https://doi.org/%' "
                    "GROUP BY url ORDER BY count(*) DESC, url LIMIT 3")]
            for i, url in enumerate(urls):
                visit("/search?" + urlencode({"q": url}), f"search-url-{i}")
                rows = page.locator("table.captures tbody tr").all_inner_texts()
                keys = [r.split("\t")[1:3] for r in rows]
                assert len(keys) == len({tuple(k) for k in keys}), rows
            page.close()
    assert problems == []
    if UPDATE_DOC_IMAGES:
        img = REPO / "docs" / "img"
        for name in ("status-list", "timeline"):
            shutil.copy(ARTIFACTS / f"sqlite-readable-{name}.png", img / f"serve-{name}.png")
