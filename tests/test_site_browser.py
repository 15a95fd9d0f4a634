"""The pages of ``sandcrawler serve`` in a real headless browser (Debian's Chromium
driven by Playwright; no browser download), on a database filled by the real
commands: the offline demo's ingests (processed PDFs with thumbnails, JATS, HTML,
references), Crossref records with parsed references, and a stored document
without thumbnails whose metadata is hostile.

Every page is saved as a screenshot in ``$SANDCRAWLER_TEST_ARTIFACTS`` (default
``test-artifacts/`` in the repository). Without Chromium the tests skip, saying
why; in CI (``SANDCRAWLER_TEST_REQUIRE_BROWSER=1``) they fail instead.
"""

from __future__ import annotations

import os
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
from sandcrawler.identifiers import sha1_base32
from sandcrawler.site.app import create_app
from tests.conftest import invoke, unavailable

REPO = Path(__file__).resolve().parents[1]
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


def _fill(tmp_path: Path, shared_data: Path) -> dict[str, Any]:
    """The database filled by the real commands; what it holds."""
    assert invoke(["db", "init"]).exit_code == 0
    demo = invoke(["ingest", "demo", "--data", str(shared_data)])
    assert demo.exit_code == 0, demo.stderr
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
    for href in page.eval_on_selector_all("a[href]", "els => els.map(e => e.href)"):
        parts = urlsplit(href)
        if f"{parts.scheme}://{parts.netloc}" != base or href in seen:
            continue
        seen.add(href)
        answer = page.request.get(href)
        assert answer.status < 400, f"{href} answered {answer.status} on {page.url}"


def test_pages_in_a_browser(browser: Any, db_url: str, shared_data: Path, tmp_path: Path,
                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SANDCRAWLER_DATABASE_URL", db_url)
    backend = "postgresql" if db_url.startswith("postgresql") else "sqlite"
    held = _fill(tmp_path, shared_data)
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
        assert "ingest_file_result" in tables and "catalogue" in tables
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
