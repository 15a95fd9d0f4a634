"""The PDFium layout reader (docparse/layout_pdfium.py, docparse/layout_geometry.py):
on PDFs written here with known text, fonts and places, and on real papers."""

from __future__ import annotations

import difflib
from collections import Counter
from pathlib import Path

import pytest

from sandcrawler.docparse.layout import pdfium as layout_pdfium
from sandcrawler.docparse.layout.alto import find_pdfalto, read_layout_alto
from sandcrawler.docparse.layout.elements import Layout, LayoutError, Line, Page, Token
from sandcrawler.docparse.layout.pdfium import read_layout_pdfium
from sandcrawler.process.sandbox import Sandbox
from sandcrawler.records.statuses import LayoutStatus
from sandcrawler_testkit.layout_pdf import Run, column, make_layout_pdf
from sandcrawler_testkit.pdfs import make_pdf
from tests.helpers.paths import SHARED_DATA
from tests.helpers.skips import unavailable

# two columns of a letter-size page, 240 points wide each
LEFT = ["Proteins fold into the shapes that their amino", "acid sequences encode, and those",
        "shapes decide what the proteins do."]
RIGHT = ["Misfolded proteins gather into clumps that the", "cells must clear away before the",
         "clumps do harm."]


def texts(line: Line) -> list[str]:
    return [t.text for t in line.tokens]


def tokens(layout: Layout) -> list[Token]:
    return [t for line in layout.lines() for t in line.tokens]


def article() -> bytes:
    """A title across the page, authors with raised affiliation marks, and two
    columns written line across line (left, right, left, ...), as some
    producers write them."""
    runs = [Run("Folding and Misfolding", 72, 720, "Helvetica-Bold", 18),
            Run("Ada Lovelace", 72, 690, "Times-Roman", 11),
            Run("1", 132.5, 694, "Times-Roman", 7),
            Run("and Alan Turing", 140, 690, "Times-Roman", 11),
            Run("2", 214, 694, "Times-Roman", 7)]
    for left, right in zip(column(LEFT, 72, 640), column(RIGHT, 320, 640), strict=True):
        runs += [left, right]
    runs.append(Run("Results", 72, 580, "Times-Italic", 10))
    return make_layout_pdf([runs])


def test_words_lines_blocks_and_fonts() -> None:
    layout = read_layout_pdfium(article())
    assert layout.reader == "pdfium"
    [page] = layout.pages
    assert (page.number, page.width, page.height) == (0, 612.0, 792.0)
    blocks = [[texts(line) for line in block.lines] for block in page.blocks]
    assert blocks == [
        [["Folding", "and", "Misfolding"]],
        [["Ada", "Lovelace", "1", "and", "Alan", "Turing", "2"]],
        [["Proteins", "fold", "into", "the", "shapes", "that", "their", "amino"],
         ["acid", "sequences", "encode", ",", "and", "those"],
         ["shapes", "decide", "what", "the", "proteins", "do", "."]],
        [["Results"]],
        [["Misfolded", "proteins", "gather", "into", "clumps", "that", "the"],
         ["cells", "must", "clear", "away", "before", "the"], ["clumps", "do", "harm", "."]],
    ]
    title = page.blocks[0].lines[0].tokens
    assert {(t.font, t.size, t.bold, t.italic) for t in title} == {
        ("Helvetica-Bold", 18.0, True, False)}
    body = page.blocks[2].lines[0].tokens[0]
    assert (body.font, body.size, body.bold, body.italic) == ("Times-Roman", 10.0, False, False)
    assert page.blocks[3].lines[0].tokens[0].italic
    # positions: points from the top left; the box holds the baseline (640 points
    # from the bottom) and is about as tall as the font is large
    assert body.x == pytest.approx(72, abs=0.5)
    assert body.y < 792 - 640 < body.y + body.height
    assert 0.8 * body.size < body.height < 1.3 * body.size


def test_superscripts_and_spaces() -> None:
    layout = read_layout_pdfium(article())
    authors = layout.pages[0].blocks[1].lines[0].tokens
    assert [(t.text, t.superscript, t.size) for t in authors] == [
        ("Ada", False, 11.0), ("Lovelace", False, 11.0), ("1", True, 7.0), ("and", False, 11.0),
        ("Alan", False, 11.0), ("Turing", False, 11.0), ("2", True, 7.0)]
    assert not any(t.subscript for t in authors)
    # GROBID's rule: a space after every word of a line but its last, punctuation
    # cut from its word without one
    line = layout.pages[0].blocks[2].lines[1].tokens
    assert [(t.text, t.space_after) for t in line] == [
        ("acid", True), ("sequences", True), ("encode", False), (",", True), ("and", True),
        ("those", False)]


def test_subscript() -> None:
    pdf = make_layout_pdf([[Run("water is H", 72, 700, size=12), Run("2", 124.6, 697, size=8),
                            Run("O here", 128.6, 700, size=12)]])
    [line] = read_layout_pdfium(pdf).lines()
    assert [(t.text, t.subscript, t.superscript) for t in line.tokens] == [
        ("water", False, False), ("is", False, False), ("H", False, False), ("2", True, False),
        ("O", False, False), ("here", False, False)]


def test_columns_written_across_come_out_column_by_column() -> None:
    words = [t.text for t in tokens(read_layout_pdfium(article()))]
    assert words.index("proteins") < words.index("Results") < words.index("Misfolded")
    assert words[-4:] == ["clumps", "do", "harm", "."]


def test_a_table_written_row_by_row_is_read_so() -> None:
    # narrow columns are a table's, not text columns: the page's order stays
    rows = [("Gene", "Count"), ("CTCF", "412"), ("NRF1", "37"), ("YY1", "9")]
    runs = [Run(cell, x, 700 - 14 * i) for i, row in enumerate(rows)
            for cell, x in zip(row, (72, 200), strict=True)]
    words = [t.text for t in tokens(read_layout_pdfium(make_layout_pdf([runs])))]
    assert words == ["Gene", "Count", "CTCF", "412", "NRF1", "37", "YY1", "9"]


def test_size_from_the_text_matrix() -> None:
    pdf = make_layout_pdf([[Run("Scaled by its matrix", 72, 700, size=14, size_in_matrix=True)]])
    assert {t.size for t in tokens(read_layout_pdfium(pdf))} == {14.0}


def test_accent_drawn_over_its_letter() -> None:
    # TeX draws an accent as a glyph of its own over the letter
    # (Times-Roman at 10 points: r 3.33 wide, e 4.44, "sum" 16.67, the accent 3.33)
    pdf = make_layout_pdf([[Run("r", 72, 700), Run("e", 75.33, 700), Run("\u00b4", 75.89, 700),
                            Run("sum", 79.77, 700), Run("e", 96.44, 700),
                            Run("\u00b4", 97.0, 700)]])
    assert [t.text for t in tokens(read_layout_pdfium(pdf))] == ["r\u00e9sum\u00e9"]


def test_turned_text_and_a_turned_page() -> None:
    # a margin stamp is a block of its own, in its place in the page's text
    margin = make_layout_pdf([[Run("Body text here", 72, 700),
                               Run("arXiv:0000.0000", 30, 300, size=9, angle=90),
                               Run("more body", 72, 688)]])
    blocks = read_layout_pdfium(margin).pages[0].blocks
    assert [[texts(line) for line in b.lines] for b in blocks] == [
        [["Body", "text", "here"], ["more", "body"]], [["arXiv", ":", "0000", ".", "0000"]]]
    stamp = blocks[1].lines[0].tokens  # drawn upwards from (30, 300): tall and narrow
    assert min(t.x for t in stamp) < 30 < max(t.x + t.width for t in stamp)
    assert min(t.y for t in stamp) < 792 - 300 == pytest.approx(max(t.y + t.height
                                                                   for t in stamp), abs=1)
    assert stamp[0].height > 50
    # /Rotate 90 turns the page clockwise: text drawn turned a quarter the
    # other way reads left to right, and the page is as wide as it was tall
    turned = make_layout_pdf([[Run("First line", 100, 100, angle=90),
                               Run("Second line", 114, 100, angle=90)]], rotate=90)
    layout = read_layout_pdfium(turned)
    page = layout.pages[0]
    assert (page.width, page.height) == (792.0, 612.0)
    first, second = layout.lines()
    assert texts(first) == ["First", "line"] and texts(second) == ["Second", "line"]
    assert first.tokens[0].x == pytest.approx(100, abs=0.5)
    assert first.tokens[0].y < second.tokens[0].y
    assert first.tokens[1].x > first.tokens[0].x


def test_page_range_and_limits() -> None:
    pdf = make_pdf(["first page words", "second page", "third page"])
    assert [p.number for p in read_layout_pdfium(pdf, max_pages=2).pages] == [0, 1]
    assert [p.number for p in read_layout_pdfium(pdf, first_page=1, last_page=1).pages] == [1]
    assert [p.number for p in read_layout_pdfium(pdf, first_page=2).pages] == [2]
    assert read_layout_pdfium(pdf, first_page=5).pages == []
    cut = read_layout_pdfium(pdf, max_tokens=4)
    assert [[texts(line) for line in b.lines] for p in cut.pages for b in p.blocks] == [
        [["first", "page", "words"]], [["second"]]]
    assert not tokens(cut)[-1].space_after


def test_path_and_bytes_read_alike(tmp_path: Path) -> None:
    path = tmp_path / "a.pdf"
    path.write_bytes(article())
    assert read_layout_pdfium(path) == read_layout_pdfium(str(path)) \
        == read_layout_pdfium(article())


def test_empty_page_and_images() -> None:
    layout = read_layout_pdfium(make_pdf([None, "words"], page0_image=(16, 9)))
    blank, text = layout.pages
    assert blank.blocks == [] and [texts(line) for line in text.blocks[0].lines] == [["words"]]
    assert blank.bitmaps == 1 and blank.graphics == 0
    bitmap = [g for g in blank.graphic_boxes if not g.vector]
    assert [(g.x, g.y, g.width, g.height) for g in bitmap] == [(0.0, 0.0, 612.0, 792.0)]
    # one drawings box per page, of no size without drawings (pdfalto's way)
    assert [(g.width, g.height) for g in blank.graphic_boxes if g.vector] == [(0.0, 0.0)]
    # an image of 8 pixels or fewer across or down is not one (pdfalto's rule)
    tiny = read_layout_pdfium(make_pdf(["words"], page0_image=(100, 8))).pages[0]
    assert tiny.bitmaps == 0 and not [g for g in tiny.graphic_boxes if not g.vector]


@pytest.mark.parametrize(("data", "message"), [
    (b"", "empty"),
    (b"plain text, no PDF at all", "not a PDF"),
    (b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer\n%%EOF", "cannot open"),
    (make_pdf(["secret"], user_password="pw"), "password"),
])
def test_unreadable_files(data: bytes, message: str) -> None:
    with pytest.raises(LayoutError, match=message) as caught:
        read_layout_pdfium(data)
    assert caught.value.status == LayoutStatus.LAYOUT_FAILED


def test_hostile_files() -> None:
    # a page tree nested too deep for PDFium: no page loads
    with pytest.raises(LayoutError, match="none of the pages"):
        read_layout_pdfium(make_pdf(["a", "b"], tree_depth=3000))
    # a 36 MB image from 36 kB: nothing decodes it, its size is read from its header
    [page] = read_layout_pdfium(make_pdf(["over an image"], page0_image=(6000, 6000))).pages
    assert page.bitmaps == 1 and [t.text for b in page.blocks for line in b.lines
                                  for t in line.tokens] == ["over", "an", "image"]
    # a page two billion points tall
    [page] = read_layout_pdfium(make_pdf(["tall"], media_box=(612, 2**31 - 1))).pages
    assert page.height > 2e9 and page.blocks


def test_in_the_sandbox() -> None:
    """As its callers run it: in a child process with limits; what comes back
    is the same layout."""
    pdf = article()
    with Sandbox(memory_limit=512 * 2**20) as box:
        assert box.call(read_layout_pdfium, pdf, timeout=60) == read_layout_pdfium(pdf)


def test_reopening_the_document_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    # PDFium keeps what each page parsed until the document closes: past a
    # growth of memory the reader opens it afresh, here before every page
    pdf = make_pdf(["page one words", None, "page three"])
    once = read_layout_pdfium(pdf)
    monkeypatch.setattr(layout_pdfium, "REOPEN_GROWTH", -1)
    assert read_layout_pdfium(pdf) == once


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(LayoutError, match="cannot read"):
        read_layout_pdfium(tmp_path / "absent.pdf")


# --- real papers -------------------------------------------------------------------


#: a physics paper (TeX, one column), a two-column one (TeX, accents), a Word one
AGREEMENT_PAPERS = ("0807.3577.pdf", "1001._0908.0054.pdf", "Wang-paperAVE2008.pdf")


def real_pdfs() -> list[Path]:
    found = sorted((SHARED_DATA / "pdfs").glob("*.pdf"))
    if not found:
        unavailable(f"no real papers in {SHARED_DATA / 'pdfs'}", "SHARED_DATA")
    return found


def test_real_paper_first_page() -> None:
    path = next((p for p in real_pdfs() if p.name == "0807.3577.pdf"), None)
    if path is None:
        unavailable("0807.3577.pdf is not among the real papers", "SHARED_DATA")
    layout = read_layout_pdfium(path)
    assert [p.number for p in layout.pages] == list(range(15))
    lines = [line for line in layout.lines() if line.tokens[0].page == 0]
    title = [line for line in lines if line.text.startswith("Apparent and average")]
    assert title and all(t.bold and t.size > 20 for t in title[0].tokens)
    authors = next(line for line in lines if line.text.startswith("Krzysztof Bolejko"))
    assert [t.text for t in authors.tokens if t.superscript] == ["1", ",", "2", "3", ",", "4"]
    # an accent TeX drew apart is on its letter, a ligature's halves are one word
    words = {t.text for line in lines for t in line.tokens}
    assert {"M\u00fchlenberg", "findings"} <= words
    # the journal's stamp in the margin, turned, is one line
    assert [line.text.replace(" ", "") for line in lines].count("JCAP10(2008)003") == 1


def test_real_papers_agree_with_pdfalto() -> None:
    """The measurement of docs/extraction.md (bench/eval/layout_compare.py), as a floor
    on three of the real papers (the bench reads them all): the two readers'
    tokens agree, page by page, at least this much, as multisets and in order."""
    if find_pdfalto() is None:
        unavailable("pdfalto is not installed", "PDFALTO")
    papers = [p for p in real_pdfs() if p.name in AGREEMENT_PAPERS]
    if not papers:
        unavailable("none of the papers compared is among the real papers", "SHARED_DATA")
    for path in papers:
        alto, pdfium = read_layout_alto(path, timeout=120), read_layout_pdfium(path)
        assert [p.number for p in alto.pages] == [p.number for p in pdfium.pages]
        total = bag = in_order = 0
        for page_a, page_b in zip(alto.pages, pdfium.pages, strict=True):
            a = [t.text for b in page_a.blocks for line in b.lines for t in line.tokens]
            b = [t.text for b in page_b.blocks for line in b.lines for t in line.tokens]
            total += len(a) + len(b)
            bag += 2 * sum((Counter(a) & Counter(b)).values())
            matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
            in_order += 2 * sum(m.size for m in matcher.get_matching_blocks())
        assert bag / total > 0.97, path.name
        assert in_order / total > 0.9, path.name


def test_real_paper_images_inside_forms_where_pdfalto_puts_them() -> None:
    """A page whose figure is a form XObject holding images: each image placed
    through the form's matrix, as pdfalto places it."""
    if find_pdfalto() is None:
        unavailable("pdfalto is not installed", "PDFALTO")
    path = next((p for p in real_pdfs() if p.name == "compressed.tracemonkey-pldi-09.pdf"), None)
    if path is None:
        unavailable("compressed.tracemonkey-pldi-09.pdf is not among the real papers",
                    "SHARED_DATA")
    ours = read_layout_pdfium(path, first_page=1, last_page=1).pages[0]
    theirs = read_layout_alto(path, timeout=60, first_page=1, last_page=1).pages[0]

    def boxes(page: Page) -> list[tuple[int, int, int, int]]:
        return sorted((round(g.x), round(g.y), round(g.width), round(g.height))
                      for g in page.graphic_boxes if not g.vector)

    assert ours.bitmaps == theirs.bitmaps == 10
    for mine, pdfalto in zip(boxes(ours), boxes(theirs), strict=True):
        assert mine == pytest.approx(pdfalto, abs=1)
