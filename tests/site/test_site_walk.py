"""A newcomer's walk (issue 23, "done when"): the offline demo ingested by its
command, our index exported for pywb, then in Chromium: the dashboard, a status
bar into its list of results, a result into its document, the document into the
capture of its PDF, and the capture into its replay by the real pywb, which
serves the very bytes we archived."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sandcrawler.app.services import Services
from sandcrawler.app.settings import load_settings
from sandcrawler.demo import PLOS_PDF, DemoSite
from sandcrawler_testkit.pywb import PywbServer
from tests.helpers.cli import invoke
from tests.helpers.demo import demo_copy
from tests.site.test_site_browser import Server, _shot
from tests.site.test_site_browser import browser as browser  # the fixture, re-exported

# seconds per test: real processes
pytestmark = pytest.mark.slow


@pytest.fixture
def demo_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The demo as `ingest demo` leaves it, the environment pointing at it."""
    directory = demo_copy(tmp_path / "demo")
    monkeypatch.delenv("SANDCRAWLER_DATABASE_URL", raising=False)
    monkeypatch.delenv("SANDCRAWLER_STORE_URL", raising=False)
    monkeypatch.setenv("SANDCRAWLER_DATA_DIR", str(directory))
    yield directory


def test_dashboard_to_status_list_to_document_to_capture_to_replay(
        browser: Any, pywb_venv: Path, demo_dir: Path, tmp_path: Path) -> None:
    cdxj = tmp_path / "index.cdxj"
    exported = invoke(["web", "cdxj", "-o", str(cdxj)])
    assert exported.exit_code == 0, exported.stderr
    with DemoSite() as site:
        pdf = site.content(PLOS_PDF)
    with PywbServer(pywb_venv, tmp_path / "pywb", archive_dir=demo_dir / "store") as pywb:
        pywb.add_index(cdxj)
        replay = f"{pywb.url}/{pywb.collection}"
        with Services(load_settings({"serve.replay_url": replay})) as services, \
                Server(services) as server:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            failed: list[str] = []
            page.on("response", lambda r: failed.append(f"{r.status} {r.url}")
                    if r.status >= 400 and r.url.startswith(server.url) else None)

            page.goto(server.url + "/")
            _shot(page, "walk-1-dashboard")
            # the pdf chart's success bar (each ingest type has its chart)
            page.locator("svg.chart a.bar[data-label='success'][href*='type=pdf'] rect").click()
            page.wait_for_url("**/ingest?*status=success*")
            _shot(page, "walk-2-status-list")
            page.locator("table.results a", has_text="10.1371/journal.pone.0213978").first.click()
            page.wait_for_load_state()
            _shot(page, "walk-3-result")
            page.locator("a[href^='/document/']").first.click()
            page.wait_for_url("**/document/*")
            _shot(page, "walk-4-document")
            title = page.locator("h1").inner_text()
            assert title.startswith("Assessment on reticuloendotheliosis virus")  # PLOS ONE's
            capture = page.locator("table.captures tr", has_text=PLOS_PDF.split("?")[0])
            capture.locator("a[href^='/capture']").first.click()
            page.wait_for_url("**/capture*")
            _shot(page, "walk-5-capture")
            href = page.locator("a.replay").get_attribute("href")
            assert href is not None and href.startswith(replay + "/")
            assert href.endswith(PLOS_PDF)
            # pywb serves what we archived: the PDF as recorded, byte for byte
            as_recorded = href.replace("/" + PLOS_PDF, "id_/" + PLOS_PDF, 1)
            answer = page.request.get(as_recorded)
            assert answer.status == 200, pywb.log.read_text(errors="replace")[-2000:]
            assert hashlib.sha1(answer.body()).hexdigest() == hashlib.sha1(pdf).hexdigest()
            # and the link itself opens the replay in pywb's frame
            page.goto(href)
            _shot(page, "walk-6-replay")
            assert page.url.startswith(replay)
            assert failed == [], failed
