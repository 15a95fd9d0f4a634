"""PDF extraction (PDFium): the real papers, and broken files made here."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from sandcrawler.core.pdf_bytes import read_xmp
from sandcrawler.pdf.info import LISTING_WIDTH, extract_pdf
from sandcrawler.process.sandbox import Sandbox
from sandcrawler_testkit.pdfs import FILE_ID, make_pdf
from tests.helpers.paths import FIXTURES, SHARED_DATA

PDFS = sorted((SHARED_DATA / "pdfs").glob("*.pdf")) if SHARED_DATA.is_dir() else []
STATUSES = {"success", "not-pdf", "bad-pdf", "encrypted", "empty-pdf", "empty-page0",
            "parse-error", "text-too-large"}


def image(data: bytes) -> Image.Image:
    img = Image.open(io.BytesIO(data))
    img.load()
    return img


@pytest.mark.skipif(not PDFS, reason="../shared/data/pdfs not present")
def test_real_papers() -> None:
    for pdf in PDFS:
        out = extract_pdf(pdf.read_bytes())
        assert out.status == "success", (pdf.name, out.error)
        assert out.page_count and out.page_count >= 1
        assert out.pdf_version in {"1.3", "1.4", "1.5", "1.6", "1.7"}
        assert out.page0_width and out.page0_height
        assert out.word_count is not None and out.text is not None
        assert out.text.count("\f") >= out.page_count - 1  # pages separated by form feeds
        assert out.permanent_id and len(out.permanent_id) == 32
        for name, width in (("thumb-small", 120), ("thumb-medium", 250), ("thumb-large", 500)):
            img = image(out.thumbnails[name])
            assert img.format == "PNG" and img.width == width
            ratio = out.page0_height / out.page0_width
            assert abs(img.height - round(width * ratio)) <= 1
        listing = image(out.thumbnails["thumb-listing"])
        assert listing.format == "JPEG" and listing.width == LISTING_WIDTH


@pytest.mark.skipif(not PDFS, reason="../shared/data/pdfs not present")
def test_known_paper_fields() -> None:
    out = extract_pdf((SHARED_DATA / "pdfs" / "0807.3577.pdf").read_bytes())
    assert out.page_count == 15
    assert out.xmp["title"] == "Apparent and average accelerations of the Universe"
    assert out.xmp["creator_tool"] == "LaTeX with hyperref package"
    assert "Universe" in (out.text or "") and out.word_count > 5000  # type: ignore[operator]
    # PDF string syntax written into XMP by a buggy producer is decoded
    odd = extract_pdf((SHARED_DATA / "pdfs" / "submission_363.pdf").read_bytes())
    assert odd.xmp["title"] == "OECS12_Matthiesen-Atature"
    assert "description" not in odd.xmp  # "()" is an empty string, not a value


def test_made_pdf() -> None:
    out = extract_pdf(make_pdf(["Hello world\nsecond line", "Page two (words) here"],
                               title="A (title)"))
    assert out.status == "success"
    assert (out.page_count, out.page0_width, out.page0_height) == (2, 612, 792)
    assert out.info == {"title": "A (title)"}
    assert out.permanent_id == FILE_ID.hex() == out.update_id
    assert out.word_count == 8
    assert out.text is not None and "second line" in out.text and "(words)" in out.text


def test_thumbnail_sizes_are_configurable() -> None:
    out = extract_pdf(make_pdf(["x"]), thumbnails={"thumb-small": 60}, listing_width=None)
    assert set(out.thumbnails) == {"thumb-small"}
    assert image(out.thumbnails["thumb-small"]).size == (60, round(60 * 792 / 612))


@pytest.mark.parametrize(("data", "status"), [
    (b"<!DOCTYPE html><html><body>Not found</body></html>", "not-pdf"),
    (os.urandom(4096).replace(b"%PDF", b"%PDX"), "not-pdf"),
    (b"", "not-pdf"),
    (b"%PDF-1.4\n" + os.urandom(4096), "bad-pdf"),
    (make_pdf([]), "empty-pdf"),
    (make_pdf([None, "text on page two"]), "empty-page0"),
    (make_pdf(["secret"], user_password="secret"), "encrypted"),
], ids=["html", "noise", "nothing", "noise-after-a-header", "no-text", "empty-page0",
        "encrypted"])  # ids, not the bytes: parallel workers must collect the same tests
def test_bad_files(data: bytes, status: str) -> None:
    out = extract_pdf(data)
    assert out.status == status, out.error
    assert out.status == "success" or out.error


def test_truncated_real_pdf() -> None:
    data = (FIXTURES / "dummy.pdf").read_bytes() if FIXTURES.is_dir() else make_pdf(["x"] * 5)
    for cut in (100, len(data) // 3, len(data) - 40):
        out = extract_pdf(data[:cut])
        assert out.status in {"bad-pdf", "parse-error", "success"}, out.status
        assert out.status != "success" or out.page_count


def test_empty_page0_still_reports_the_document() -> None:
    out = extract_pdf(make_pdf([None, "text on page two"]))
    assert out.page_count == 2 and out.thumbnails  # the blank thumbnail is still made
    assert out.text is not None and "page two" in out.text


def test_text_too_large_keeps_the_metadata() -> None:
    out = extract_pdf(make_pdf(["many words\n" * 40] * 10, title="Big"), max_text_chars=1000)
    assert out.status == "text-too-large" and out.text is None
    assert out.page_count == 10 and out.info == {"title": "Big"}


def test_two_thousand_pages() -> None:
    out = extract_pdf(make_pdf([f"page {i} has five words" for i in range(2000)]))
    assert out.status == "success" and out.page_count == 2000
    assert out.word_count == 2000 * 5


def test_deep_page_tree_does_not_take_the_process_down(tmp_path: Path) -> None:
    """A 20,000-level page tree: PDFium's native code must answer with a status. Run
    in a child process, so a crash would fail this test instead of the suite."""
    path = tmp_path / "deep.pdf"
    path.write_bytes(make_pdf(["deep"], tree_depth=20_000))
    code = ("import sys; from sandcrawler.pdf.info import extract_pdf; "
            "print(extract_pdf(open(sys.argv[1], 'rb').read()).status)")
    proc = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() in STATUSES


def packet(title: str) -> bytes:
    return (b'<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF '
            b'xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">'
            b'<rdf:Description xmlns:dc="http://purl.org/dc/elements/1.1/" '
            b'xmlns:pdf="http://ns.adobe.com/pdf/1.3/" pdf:Producer="P">'
            b"<dc:title><rdf:Alt><rdf:li>" + title.encode() + b"</rdf:li></rdf:Alt></dc:title>"
            b"</rdf:Description></rdf:RDF></x:xmpmeta>")


def test_read_xmp_takes_the_last_packet() -> None:
    data = b"%PDF-1.4 ... " + packet("old") + b" ... incremental update ... " + packet("new")
    assert read_xmp(data) == {"title": "new", "producer": "P"}
    assert read_xmp(b"%PDF-1.4 <x:xmpmeta>not xml</x:xmpmeta>") == {}
    assert read_xmp(b"%PDF-1.4 nothing") == {}


@pytest.mark.parametrize("chunk", [37, 64, 500, 1 << 20])
def test_read_xmp_scans_a_file_in_windows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          chunk: int) -> None:
    """The file is read in overlapping windows (flat memory): packets that straddle a
    window edge are found, and a packet cut short at the end falls back to the one
    before."""
    import sandcrawler.core.pdf_bytes as pdf_bytes

    monkeypatch.setattr(pdf_bytes, "SCAN_CHUNK", chunk)
    monkeypatch.setattr(pdf_bytes, "SCAN_OVERLAP", 16)
    path = tmp_path / "x.pdf"
    path.write_bytes(b"%PDF-1.4 " + b"." * 301 + packet("old") + b"." * 77 + packet("new")
                     + b"." * 5 + packet("cut")[:60])
    assert read_xmp(path) == {"title": "new", "producer": "P"}
    path.write_bytes(b"%PDF-1.4 " + b"." * 1000)
    assert read_xmp(path) == {}


def test_statuses_do_not_depend_on_the_previous_file() -> None:
    """PDFium's error code is per-thread state; each status must come from its own file."""
    locked = make_pdf(["secret"], user_password="pw")
    empty = make_pdf([])
    noise = b"%PDF-1.4\n" + os.urandom(2048)
    for before in (locked, empty, noise):
        extract_pdf(before)
        assert extract_pdf(empty).status == "empty-pdf"
        assert extract_pdf(locked).status == "encrypted"
        assert extract_pdf(noise).status == "bad-pdf"


def test_decompression_bomb_image_renders_in_bounded_memory() -> None:
    """A 20000 x 20000 image (400 MB of pixels from ~400 kB of Flate) on page 0:
    PDFium streams and downsamples it while rendering the thumbnails, so it passes
    under a 256 MiB address-space cap instead of being a memory-limit casualty."""
    from sandcrawler.process.sandbox import Sandbox

    bomb = make_pdf(["text on a black page"], page0_image=(20_000, 20_000))
    assert len(bomb) < 1_000_000
    with Sandbox(memory_limit=256 * 2**20) as sandbox:
        out = sandbox.call(extract_pdf, bomb, timeout=60)
    assert out.status == "empty-page0"  # black text on a black image: one flat colour
    assert image(out.thumbnails["thumb-small"]).convert("L").getextrema() == (0, 0)
    assert out.page_count == 1 and "black page" in (out.text or "")


def test_text_is_the_same_when_the_document_is_reopened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past REOPEN_GROWTH of retained page memory the text loop reopens the document;
    with a limit of -1 byte it reopens before every page, and nothing changes."""
    import sandcrawler.pdf.info as extract

    path = tmp_path / "many.pdf"
    path.write_bytes(make_pdf([f"page {i} of the reopened document" for i in range(40)],
                              title="Reopen"))
    normal = extract_pdf(path)
    opened: list[object] = []
    real = extract.pdfium.PdfDocument

    def counting(*args: object, **kwargs: object) -> object:
        opened.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(extract, "REOPEN_GROWTH", -1)
    monkeypatch.setattr(extract.pdfium, "PdfDocument", counting)
    again = extract_pdf(path)
    assert len(opened) == 41  # the first open, then once before each of the 40 pages
    assert again.text == normal.text and again.word_count == normal.word_count == 240
    assert again.to_json() == normal.to_json()


def test_page_taller_than_any_render_keeps_what_was_extracted() -> None:
    """Issue 14 B6: a 700-byte PDF whose MediaBox is 2**31 - 1 points tall hit
    memory-limit rendering its thumbnail and lost its page count, text and
    metadata. Only the top of the page, within a pixel budget, is drawn."""
    pdf = make_pdf(["a very tall page"], title="Tall", media_box=(612, 2**31 - 1))
    with Sandbox(memory_limit=512 * 2**20) as sandbox:
        out = sandbox.call(extract_pdf, pdf, timeout=60)
    assert out.status == "success", out.error
    assert out.page_count == 1 and out.text is not None and "very tall page" in out.text
    assert out.info.get("title") == "Tall"
    assert set(out.thumbnails) == {"thumb-small", "thumb-medium", "thumb-large", "thumb-listing"}


def test_status_is_a_function_of_the_bytes() -> None:
    """Issue 14 B6: PDFium's error code is the thread's last error, so a damaged
    file read after an encrypted one was `encrypted`, and `bad-pdf` in a fresh
    process. The same bytes must give the same status whatever came before."""
    # no pages, and an /Encrypt token in a comment: PDFium's failure sets no code
    damaged = make_pdf([]).replace(b"trailer", b"% /Encrypt 99 0 R\ntrailer")
    assert b"/Encrypt" in damaged
    with Sandbox(memory_limit=512 * 2**20) as fresh:
        alone = fresh.call(extract_pdf, damaged, timeout=60).status
    with Sandbox(memory_limit=512 * 2**20) as used:
        used.call(extract_pdf, make_pdf(["y"], user_password="secret"), timeout=60)
        after = used.call(extract_pdf, damaged, timeout=60).status
        used.call(extract_pdf, b"%PDF-1.4\n%%EOF\n", timeout=60)
        after_bad = used.call(extract_pdf, damaged, timeout=60).status
    assert alone == after == after_bad == "empty-pdf"


@pytest.mark.parametrize(("title", "read"), [
    ("\xfe\xff\xd8\x00", "\ufffd"),  # UTF-16BE with a lone high surrogate
    ("\xfe\xff\x00A\xdc\x00\x00B", "A\ufffdB"),  # a lone low surrogate inside
    ("Plain title", "Plain title"),
])
def test_an_info_title_that_is_not_valid_utf16_is_read_with_a_replacement(
        title: str, read: str) -> None:
    """pypdfium2's own reader raised UnicodeDecodeError here, on every run of the file."""
    result = extract_pdf(make_pdf(["Some text on the page."], title=title))
    assert result.status == "success", result.error
    assert result.info["title"] == read
