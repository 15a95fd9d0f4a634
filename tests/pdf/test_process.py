"""`sandcrawler process`: files into the resource store, the PDF table and the catalogue."""

from __future__ import annotations

import hashlib
from pathlib import Path

import orjson
import pytest

from sandcrawler.app.services import Services
from sandcrawler.app.settings import load_settings
from sandcrawler.records.pdf import ProcessResult
from sandcrawler.storage.docid import document_uuid
from sandcrawler_testkit.pdfs import make_pdf
from tests.helpers.cli import invoke
from tests.helpers.paths import FIXTURES, SHARED_DATA

PDFS = sorted((SHARED_DATA / "pdfs").glob("*.pdf")) if SHARED_DATA.is_dir() else []


def results(stdout: str) -> dict[str, dict]:
    return {r["path"]: r for r in map(orjson.loads, stdout.splitlines())}


def assert_result_lines(stdout: str) -> None:
    """Every line is a ProcessResult, and reads back to the same bytes."""
    for line in stdout.splitlines():
        assert orjson.dumps(ProcessResult.model_validate_json(line).to_json()).decode() == line


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    made = {
        "good.pdf": make_pdf(["A small paper about sandcrawling", "page two"], title="Small"),
        "blank0.pdf": make_pdf([None, "text after a blank first page"]),
        "empty.pdf": make_pdf([]),
        "locked.pdf": make_pdf(["secret"], user_password="pw"),
        "html.pdf": b"<!DOCTYPE html><html><body>Access denied</body></html>",
        "noise.pdf": b"%PDF-1.4\n" + hashlib.sha512(b"x").digest() * 64,
    }
    root = tmp_path / "in"
    (root / "sub").mkdir(parents=True)
    out = {}
    for i, (name, data) in enumerate(sorted(made.items())):
        path = (root / "sub" if i % 2 else root) / name
        path.write_bytes(data)
        out[name] = path
    (root / ".hidden.pdf").write_bytes(made["good.pdf"])
    return out


def test_process_a_tree(engine, files: dict[str, Path]) -> None:  # type: ignore[no-untyped-def]
    result = invoke(["process", str(files["good.pdf"].parent)])
    assert result.exit_code == 0, result.stderr
    assert_result_lines(result.stdout)
    got = {Path(p).name: r for p, r in results(result.stdout).items()}
    assert set(got) == set(files)  # the hidden file is not walked
    assert {n: r["status"] for n, r in got.items()} == {
        "good.pdf": "success", "blank0.pdf": "empty-page0", "empty.pdf": "empty-pdf",
        "locked.pdf": "encrypted", "html.pdf": "not-pdf", "noise.pdf": "bad-pdf"}
    assert "process: 6 records" in result.stderr

    settings = load_settings()
    table, cat = Services(settings).pdftable, Services(settings).catalogue
    for name, path in files.items():
        data = path.read_bytes()
        sha1 = hashlib.sha1(data).hexdigest()
        r = got[name]
        assert (r["sha1hex"], r["size"], r["md5hex"]) == (
            sha1, len(data), hashlib.md5(data).hexdigest())
        row = table.get(sha1)
        assert row is not None and row.cells["pdf0"]["pdf_status"] == r["status"]
        assert row.cells["file"]["size"] == len(data)
        assert row.cells["file"]["mime"] == ("text/html" if name == "html.pdf"
                                             else "application/pdf")
    # stored and catalogued: the usable documents only
    good = got["good.pdf"]
    doc = document_uuid(sha1=good["sha1hex"])
    assert good["uuid"] == doc and good["page_count"] == 2 and good["word_count"] == 7
    assert good["resources"] == ["metadata", "pdf", "thumb-large", "thumb-listing",
                                 "thumb-medium", "thumb-small"]
    assert cat.resources.get(doc, "pdf") == files["good.pdf"].read_bytes()
    assert cat.resources.get(doc, "thumb-small").startswith(b"\x89PNG")
    assert cat.resources.get(doc, "thumb-listing").startswith(b"\xff\xd8\xff")
    meta = cat.metadata(doc)
    assert meta["id"] == doc and meta["title"] == ["Small"] and meta["sha1"] == good["sha1hex"]
    row = table.get(good["sha1hex"], ["pdf0"])
    assert "sandcrawling" in row.cells["pdf0"]["text"]  # type: ignore[union-attr]
    assert row.cells["pdf0"]["pdf_meta"]["page_count"] == 2  # type: ignore[union-attr]
    assert sorted(e.uuid for e in cat.entries()) == sorted(
        r["uuid"] for r in got.values() if "uuid" in r)
    # a blank first page is a status, but the document is still stored and catalogued
    assert got["blank0.pdf"]["uuid"] == document_uuid(sha1=got["blank0.pdf"]["sha1hex"])
    for name in ("empty.pdf", "locked.pdf", "html.pdf", "noise.pdf"):
        assert "uuid" not in got[name]


def test_reprocessing_is_idempotent(engine, files: dict[str, Path]) -> None:  # type: ignore[no-untyped-def]
    target = str(files["good.pdf"])
    first = results(invoke(["process", target]).stdout)[target]
    again = invoke(["process", target])
    assert_result_lines(again.stdout)
    assert results(again.stdout)[target]["status"] == "exists"
    assert results(again.stdout)[target]["pdf_status"] == "success"
    forced = invoke(["process", "--force", target])
    redo = results(forced.stdout)[target]
    assert redo["status"] == "success" and redo["uuid"] == first["uuid"]
    settings = load_settings()
    assert Services(settings).catalogue.count() == 1
    assert Services(settings).pdftable.count_rows() == 1


def test_paths_from_stdin(engine, files: dict[str, Path]) -> None:  # type: ignore[no-untyped-def]
    lines = f'{files["good.pdf"]}\n{{"path": "{files["html.pdf"]}"}}\n{{"nopath": 1}}\n'
    result = invoke(["process", "-"], input=lines)
    assert result.exit_code == 0, result.stderr
    assert_result_lines(result.stdout)
    statuses = [r["status"] for r in results(result.stdout).values()]
    assert statuses == ["success", "not-pdf", "missing-path"]
    # a record too malformed to name itself is named by where it is
    assert results(result.stdout)["line 3"]["error"] == "record has none of path, url, sha1, " \
        "warc_path"
    assert "missing-path" in result.stderr


def test_missing_file_is_a_record_error(engine, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    gone = tmp_path / "gone.pdf"
    result = invoke(["process", str(gone)])
    assert result.exit_code == 0
    assert "unreadable" in result.stderr
    # the record still has its result line: its status and why
    assert_result_lines(result.stdout)
    [line] = results(result.stdout).values()
    assert (line["path"], line["status"]) == (str(gone), "unreadable")
    assert "gone.pdf" in line["error"] and "size" not in line


@pytest.mark.skipif(not PDFS, reason="../shared/data/pdfs not present")
def test_real_papers(engine) -> None:  # type: ignore[no-untyped-def]
    result = invoke(["process", "-j", "2", *map(str, PDFS)])
    assert result.exit_code == 0, result.stderr
    got = results(result.stdout)
    assert [Path(p).name for p in got] == [p.name for p in PDFS]  # input order kept
    assert {r["status"] for r in got.values()} == {"success"}
    assert Services(load_settings()).catalogue.count() == len(PDFS)


@pytest.mark.skipif(not FIXTURES.is_dir(), reason="../shared/data not present")
def test_html_fixture_is_not_a_pdf(engine) -> None:  # type: ignore[no-untyped-def]
    path = str(FIXTURES / "plos_one_article.html")
    assert results(invoke(["process", path]).stdout)[path]["status"] == "not-pdf"


def test_zip_archive(engine, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import zipfile

    archive = tmp_path / "batch.zip"
    one, two = make_pdf(["first paper in a zip"]), make_pdf(["second paper in a zip"])
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_STORED) as zf:
        zf.writestr("papers/", "")
        zf.writestr("papers/one.pdf", one)
        zf.writestr("notes.txt", "not a paper")
        zf.writestr("two.pdf", two)
    result = invoke(["process", "--zip", str(archive)])
    assert result.exit_code == 0, result.stderr
    got = results(result.stdout)
    assert {n.split("!")[1]: r["status"] for n, r in got.items()} == {
        "papers/one.pdf": "success", "notes.txt": "not-pdf", "two.pdf": "success"}
    assert got[f"{archive}!two.pdf"]["sha1hex"] == hashlib.sha1(two).hexdigest()
    cat = Services(load_settings()).catalogue
    assert cat.resources.get(got[f"{archive}!papers/one.pdf"]["uuid"], "pdf") == one

    # a damaged member is that member's error; the others are processed
    data = bytearray(archive.read_bytes())
    start = data.index(b"first paper in a zip")
    data[start:start + 5] = b"XXXXX"  # the stored bytes no longer match the CRC
    damaged = tmp_path / "damaged.zip"
    damaged.write_bytes(bytes(data))
    result = invoke(["process", "--force", "--zip", str(damaged)])
    assert result.exit_code == 0, result.stderr
    assert "bad-zip-member" in result.stderr and "papers/one.pdf" in result.stderr
    statuses = {n.split("!")[1]: r["status"] for n, r in results(result.stdout).items()}
    assert statuses == {"notes.txt": "not-pdf", "two.pdf": "success"}


def test_zip_usage_errors(engine, tmp_path: Path, files: dict[str, Path]) -> None:  # type: ignore[no-untyped-def]
    not_zip = tmp_path / "not.zip"
    not_zip.write_bytes(b"plain text")
    result = invoke(["process", "--zip", str(not_zip)])
    assert result.exit_code == 1 and "cannot read zip archive" in result.stderr
    assert invoke(["process"]).exit_code == 2
    assert invoke(["process", "--zip", str(not_zip), str(files["good.pdf"])]).exit_code == 2


def test_a_slow_file_times_out_and_the_run_goes_on(engine, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    heavy = tmp_path / "heavy.pdf"  # 50,000 pages: well over a second to extract
    heavy.write_bytes(make_pdf([f"page {i}" for i in range(50_000)]))
    small = tmp_path / "small.pdf"
    small.write_bytes(make_pdf(["a small paper after a slow one"]))
    result = invoke(["process", "--timeout", "0.3", str(heavy), str(small)])
    assert result.exit_code == 0, result.stderr
    got = results(result.stdout)
    assert got[str(heavy)]["status"] == "timeout"
    assert "0.3" in got[str(heavy)]["error"]
    assert got[str(small)]["status"] == "success"  # a fresh child took over
    table = Services(load_settings()).pdftable
    row = table.get(got[str(heavy)]["sha1hex"])
    assert row is not None and row.cells["pdf0"]["pdf_status"] == "timeout"


def test_pdf_settings_reach_the_extraction(engine, tmp_path: Path,  # type: ignore[no-untyped-def]
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 14 C5: the docs said max_text_chars and the thumbnail sizes could be
    configured, but they were not settings."""
    pdf = tmp_path / "words.pdf"
    pdf.write_bytes(make_pdf(["more than ten characters of text"]))
    monkeypatch.setenv("SANDCRAWLER_PDF_MAX_TEXT_CHARS", "10")
    monkeypatch.setenv("SANDCRAWLER_PDF_THUMBNAILS", '{"thumb-small": 64}')
    result = invoke(["process", str(pdf)])
    assert result.exit_code == 0, result.stderr
    out = results(result.stdout)[str(pdf)]
    assert out["status"] == "text-too-large"
    assert "thumb-small" in out["resources"] and "thumb-large" not in out["resources"]
