"""``sandcrawler extract``: real PDFs in, one JSON line each with the header and
the references, every bad file a status, limits honoured; and the same cascade
stored by ``process`` (``extract0``, the catalogue, grobid_refs, the TEI)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import grobid_tei_xml
import orjson
import pytest

from sandcrawler_testkit.article_pdf import Article, render_pdf
from sandcrawler_testkit.pdfs import make_pdf
from tests.helpers.cli import invoke, run_cli
from tests.helpers.paths import SHARED_DATA
from tests.helpers.skips import unavailable

CHROMIUM = os.environ.get("SANDCRAWLER_TEST_CHROMIUM", "/usr/bin/chromium")


def _soft(text: str | None) -> str:
    return "".join(ch for ch in (text or "").lower() if ch.isalnum())


@pytest.fixture(scope="module")
def article(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Article]:
    if not shutil.which(CHROMIUM):
        unavailable(f"no Chromium at {CHROMIUM} to typeset the test article", "BROWSER")
    truth = Article()
    out = tmp_path_factory.mktemp("article") / "article.pdf"
    return render_pdf(truth.html(), out, CHROMIUM), truth


def _lines(stdout: str | bytes) -> list[dict]:  # type: ignore[type-arg]
    return [orjson.loads(line) for line in
            (stdout.decode() if isinstance(stdout, bytes) else stdout).splitlines() if line]


def test_extract_a_typeset_article(article: tuple[Path, Article]) -> None:
    path, truth = article
    result = invoke(["extract", str(path)])
    assert result.exit_code == 0, result.stderr
    [line] = _lines(result.stdout)
    assert line["path"] == str(path)
    assert line["status"] == "success"
    header = line["header"]
    assert _soft(header["title"]) == _soft(truth.title)
    names = [a["full_name"] for a in header["authors"]]
    assert _soft(names[0]) == _soft(truth.authors[0][0])
    assert len(names) == len(truth.authors)
    assert header.get("doi") == truth.doi
    assert line["abstract"] and "unoccupied recognition sequences" in line["abstract"]
    refs = line["references"]
    assert len(refs) == len(truth.references)
    for got, want in zip(refs, truth.references, strict=True):
        assert _soft(want) in _soft(got["unstructured"]) or \
            _soft(got["unstructured"]) in _soft(want)
    assert refs[0]["journal"] == "Nature" and refs[0]["date"] == "2000"
    assert line["pages"] == line["pages_read"] >= 1
    assert line["reader"] == "pdfalto"
    assert set(line["models"]) == {"segmentation", "header", "reference-segmenter",
                                   "name-header", "affiliation-address", "citation"}


def test_the_pdfium_reader_gives_the_same_header(article: tuple[Path, Article]) -> None:
    path, truth = article
    result = invoke(["extract", "--reader", "pdfium", str(path)])
    assert result.exit_code == 0, result.stderr
    [line] = _lines(result.stdout)
    assert line["reader"] == "pdfium" and line["status"] == "success"
    assert _soft(line["header"]["title"]) == _soft(truth.title)


def test_every_file_gets_a_line_and_a_status(tmp_path: Path,
                                             article: tuple[Path, Article]) -> None:
    files = tmp_path / "in"
    files.mkdir()
    shutil.copy(article[0], files / "a-article.pdf")
    (files / "b-notes.txt").write_text("not a PDF at all\n")
    (files / "c-truncated.pdf").write_bytes(article[0].read_bytes()[:900])
    (files / "d-scan.pdf").write_bytes(make_pdf([None, None], page0_image=(200, 300)))
    (files / "e-locked.pdf").write_bytes(make_pdf(["secret words"], user_password="pw"))
    (files / "f-empty.pdf").write_bytes(b"")
    result = run_cli(["extract", "-j", "2", str(files)])
    assert result.returncode == 0, result.stderr
    lines = _lines(result.stdout)
    got = {Path(line["path"]).name: line["status"] for line in lines}
    assert got == {"a-article.pdf": "success", "b-notes.txt": "not-pdf",
                   "c-truncated.pdf": "bad-pdf", "d-scan.pdf": "no-text",
                   "e-locked.pdf": "encrypted", "f-empty.pdf": "not-pdf"}
    assert [Path(line["path"]).name for line in lines] == sorted(got)  # input order
    for line in lines:
        assert set(line) >= {"path", "status", "header", "abstract", "references"}
    assert b"Traceback" not in result.stderr


def test_a_time_limit_kills_the_file_not_the_run(tmp_path: Path,
                                                 article: tuple[Path, Article]) -> None:
    result = run_cli(["extract", "--timeout", "0.1", str(article[0])])
    assert result.returncode == 0, result.stderr
    [line] = _lines(result.stdout)
    assert line["status"] == "timeout"
    assert "0.1 s" in line["error"]


def test_a_long_pdf_is_read_at_its_start_and_end(tmp_path: Path) -> None:
    pages = [f"Page {n} of a long report about nothing in particular." for n in range(300)]
    path = tmp_path / "long.pdf"
    path.write_bytes(make_pdf(pages))
    result = run_cli(["extract", str(path)], env={"SANDCRAWLER_EXTRACT_MAX_PAGES": "20"})
    assert result.returncode == 0, result.stderr
    [line] = _lines(result.stdout)
    assert line["status"] == "partial"
    assert (line["pages"], line["pages_read"]) == (300, 20)
    assert "20 of 300 pages" in line["error"]


def test_missing_path_is_a_usage_error(tmp_path: Path) -> None:
    result = invoke(["extract", str(tmp_path / "nope.pdf")])
    assert result.exit_code == 2
    assert "does not exist" in result.stderr


@pytest.mark.parametrize("name", ["0807.3577.pdf", "MullenJSSv18i03.pdf"])
def test_real_papers_have_a_header_and_references(name: str) -> None:
    path = SHARED_DATA / "pdfs" / name
    if not path.exists():
        unavailable(f"{path} is not here", "SHARED_DATA")
    result = invoke(["extract", str(path)])
    assert result.exit_code == 0, result.stderr
    [line] = _lines(result.stdout)
    assert line["status"] == "success"
    assert line["header"]["title"]
    assert line["header"]["authors"]
    assert len(line["references"]) >= 10


def test_process_stores_the_extraction_beside_what_it_had(
        monkeypatch: pytest.MonkeyPatch, article: tuple[Path, Article]) -> None:
    monkeypatch.setenv("SANDCRAWLER_EXTRACT_ENABLED", "1")  # the suite turns it off
    path, truth = article
    result = invoke(["process", str(path)])
    assert result.exit_code == 0, result.stderr
    [line] = _lines(result.stdout)
    assert line["status"] == "success"
    uuid, sha1 = line["uuid"], line["sha1hex"]
    row = orjson.loads(invoke(["pdftable", "get", sha1, "-c", "extract0"]).stdout)
    cells = row["extract0"]
    assert cells["xstatus"] == "success"
    assert _soft(cells["xheader"]["title"]) == _soft(truth.title)
    assert len(cells["xrefs"]) == len(truth.references)
    assert cells["xinfo"]["reader"] == "pdfalto"
    entry = orjson.loads(invoke(["catalogue", "get", uuid]).stdout)
    assert _soft(entry["metadata"]["title"][0]) == _soft(truth.title)
    assert "extract-tei" in entry["resources"]
    tei = invoke(["store", "cat", uuid, "extract-tei"]).stdout_bytes
    doc = grobid_tei_xml.parse_document_xml(tei.decode())
    assert _soft(doc.header.title) == _soft(truth.title)
    assert len(doc.citations or []) == len(truth.references)


def test_process_without_the_cascade_writes_no_extract0(article: tuple[Path, Article]) -> None:
    result = invoke(["process", str(article[0])])  # extract.enabled is off in the suite
    assert result.exit_code == 0, result.stderr
    [line] = _lines(result.stdout)
    row = orjson.loads(invoke(["pdftable", "get", line["sha1hex"]]).stdout)
    assert "pdf0" in row and "extract0" not in row


DEMO_PDFS = Path(__file__).resolve().parents[2] / "src" / "sandcrawler" / "demo" / "site"


@pytest.mark.parametrize("name", ["plos.pdf", "peerj.pdf", "elife.pdf"])
def test_full_gives_sections_and_callouts_linked_to_their_references(name: str) -> None:
    # the demo's renderings have a body of three numbered sections whose second
    # cites the first, second and last references by number
    result = invoke(["extract", "--full", str(DEMO_PDFS / name)])
    assert result.exit_code == 0, result.stderr
    [line] = _lines(result.stdout)
    assert line["status"] == "success"
    body = line["body"]
    assert [(s["number"], s["head"]) for s in body["sections"]] == [
        ("1", "About this document"), ("2", "How this rendering cites"),
        ("3", "What the demonstration shows")]
    cites = [c for p in body["sections"][1]["paragraphs"] for c in p["citations"]]
    last = len([r for r in line["references"] if r.get("id")])
    assert [(c["type"], c["text"], c["target"]) for c in cites] == [
        ("bibr", "[1]", "b0"), ("bibr", "[2]", "b1"), ("bibr", f"[{last}]", f"b{last - 1}")]
    for c in cites:  # each target is the reference printed with that number
        assert line["references"][int(c["target"][1:])]["id"] == c["text"].strip("[]")
        para = body["sections"][1]["paragraphs"][0]["text"]
        assert para[c["start"]:c["end"]] == c["text"]


def test_header_only_reads_the_first_pages_and_no_references() -> None:
    result = invoke(["extract", "--header-only", str(DEMO_PDFS / "peerj.pdf")])
    assert result.exit_code == 0, result.stderr
    [line] = _lines(result.stdout)
    assert line["status"] == "success"
    assert line["header"]["title"].startswith("The state of OA")
    assert line["references"] == [] and "body" not in line
    assert line["pages_read"] == 2 < line["pages"]
    both = invoke(["extract", "--header-only", "--full", str(DEMO_PDFS / "peerj.pdf")])
    assert both.exit_code == 2 and "give one" in both.stderr
