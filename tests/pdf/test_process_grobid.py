"""`sandcrawler process` with GROBID full text: grobid0, the TEI resource, quality."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import orjson
import pytest

from sandcrawler.app.services import Services
from sandcrawler.app.settings import load_settings
from sandcrawler.pdf.fulltext import quality
from sandcrawler_testkit.grobid_server import FakeGrobid
from sandcrawler_testkit.pdfs import make_pdf
from sandcrawler_testkit.postgres import free_port
from tests.helpers.cli import invoke
from tests.helpers.paths import FIXTURES, SHARED_DATA

FULLTEXT = FIXTURES / "grobid-0.4.1-sample2.tei.fulltext.xml"
pytestmark = pytest.mark.skipif(not FULLTEXT.is_file(), reason="../shared/data not present")


@pytest.fixture
def grobid(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGrobid]:
    with FakeGrobid(fulltext_tei=FULLTEXT, slow_seconds=0.1) as server:
        monkeypatch.setenv("SANDCRAWLER_GROBID_URL", server.url)
        yield server


def process(*args: str) -> dict:
    result = invoke(["process", *args])
    assert result.exit_code == 0, result.stderr
    (out,) = [orjson.loads(line) for line in result.stdout.splitlines()]
    return out


def test_fulltext_fills_grobid0_and_the_store(engine, grobid: FakeGrobid, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("SANDCRAWLER_GROBID_CONSOLIDATE_HEADER", "1")
    monkeypatch.setenv("SANDCRAWLER_GROBID_TEI_COORDINATES", "figure, ref")
    pdf = tmp_path / "paper.pdf"
    pdf.write_bytes(make_pdf(["A paper that GROBID will read"], title="PDF's own title"))
    out = process(str(pdf))
    assert (out["status"], out["grobid_status"], out["grobid_quality"]) == (
        "success", "success", "good")
    assert "grobid-tei" in out["resources"]
    sent = grobid.requests[-1]
    assert sent == {"consolidateHeader": ["1"], "includeRawCitations": ["1"],
                    "includeRawAffiliations": ["1"], "segmentSentences": ["0"],
                    "teiCoordinates": ["figure", "ref"]}

    settings = load_settings()
    tei = FULLTEXT.read_text(encoding="utf-8")
    cells = Services(settings).pdftable.get(out["sha1hex"], ["grobid0"]).cells["grobid0"]  # type: ignore[union-attr]
    assert cells["status_code"] == 200 and cells["quality"] == "good"
    assert cells["tei_xml"] == tei
    meta = cells["metadata"]
    assert meta["title"] == ("A Virtual Machine Introspection Based Architecture for "
                             "Intrusion Detection")
    assert [a["surname"] for a in meta["authors"]] == ["Garfinkel", "Rosenblum"]
    assert (meta["references"], meta["language"], meta["grobid_version"]) == (47, "en", "0.4.1")
    assert meta["abstract"] and cells["tei_json"]["header"]["title"].startswith("A Virtual")
    cat = Services(settings).catalogue
    assert cat.resources.get(out["uuid"], "grobid-tei").decode("utf-8") == tei
    doc = cat.metadata(out["uuid"])
    assert doc["metadata_source"] == "grobid" and doc["title"] == [meta["title"]]
    assert [a["family"] for a in doc["author"]] == ["Garfinkel", "Rosenblum"]


def test_without_grobid_the_pdf_metadata_is_used(engine, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    pdf = tmp_path / "paper.pdf"
    pdf.write_bytes(make_pdf(["no GROBID here"], title="PDF's own title"))
    out = process(str(pdf))
    assert out["grobid_status"] == "not-run" and out["grobid_quality"] is None
    settings = load_settings()
    cells = Services(settings).pdftable.get(out["sha1hex"], ["grobid0"]).cells["grobid0"]  # type: ignore[union-attr]
    assert cells == {"status": {"status": "not-run", "reason": "no GROBID URL configured"}}
    doc = Services(settings).catalogue.metadata(out["uuid"])
    assert doc["metadata_source"] == "pdf" and doc["title"] == ["PDF's own title"]


@pytest.mark.parametrize(("marker", "status"), [("GROBID-500", "grobid-error"),
                                                ("GROBID-204", "empty")])
def test_grobid_failures_are_recorded(engine, grobid: FakeGrobid, tmp_path: Path,
                                      marker: str, status: str) -> None:  # type: ignore[no-untyped-def]
    pdf = tmp_path / "paper.pdf"
    pdf.write_bytes(make_pdf([f"this paper makes GROBID fail {marker}"]))
    out = process(str(pdf))
    assert out["status"] == "success"  # the PDF itself is fine and stored
    assert (out["grobid_status"], out["grobid_quality"]) == (status, "bad")
    assert "grobid-tei" not in out["resources"]


def test_grobid_size_limit(engine, grobid: FakeGrobid, tmp_path: Path,
                           monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("SANDCRAWLER_GROBID_MAX_PDF_MB", "1")
    pdf = tmp_path / "big.pdf"
    pdf.write_bytes(make_pdf([f"page {i} " + "filler words " * 40 for i in range(3000)]))
    assert pdf.stat().st_size > 2**20
    before = len(grobid.requests)
    out = process(str(pdf))
    assert out["grobid_status"] == "too-large" and len(grobid.requests) == before


def test_grobid_down_stops_the_run(engine, tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("SANDCRAWLER_GROBID_URL", f"http://127.0.0.1:{free_port()}")
    monkeypatch.setenv("SANDCRAWLER_GROBID_RETRIES", "0")
    pdf = tmp_path / "paper.pdf"
    pdf.write_bytes(make_pdf(["x"]))
    result = invoke(["process", str(pdf)])
    assert result.exit_code == 3 and "not reachable" in result.stderr
    # nothing marked done: a later run will process the file
    assert Services(load_settings()).pdftable.count_rows() == 0


def doc(title: str | None = "T", authors: int = 1, abstract: str | None = "A",
        body: str = "", citations: int = 1) -> SimpleNamespace:
    return SimpleNamespace(header=SimpleNamespace(title=title, authors=[object()] * authors),
                           abstract=abstract, body=body, citations=[object()] * citations)


def test_quality_rule() -> None:
    assert quality(doc()) == "good"
    assert quality(doc(abstract=None, body="x" * 500)) == "good"
    assert quality(doc(abstract=None, body="x" * 499)) == "marginal"
    assert quality(doc(citations=0)) == "marginal"
    assert quality(doc(authors=0)) == "marginal"
    assert quality(doc(title=None)) == "marginal"
    assert quality(doc(title=None, authors=0)) == "bad"


@pytest.mark.skipif(not (SHARED_DATA / "pdfs").is_dir(), reason="no real papers")
def test_real_paper_with_grobid(engine, grobid: FakeGrobid) -> None:  # type: ignore[no-untyped-def]
    out = process(str(SHARED_DATA / "pdfs" / "0807.3577.pdf"))
    assert out["status"] == "success" and out["grobid_quality"] == "good"
