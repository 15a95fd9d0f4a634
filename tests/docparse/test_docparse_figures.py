"""The figure and table models: their rows (a figure's tokens' fulltext rows,
features/figure.py) on a PDF written here and, against GROBID's own feature
files, on the PDFs of GROBID's figure corpus that we have; figures and tables
built from labelled tokens (assembly/figures.py); the shipped models on real
captions."""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest

from sandcrawler.docparse.assembly.figures import (
    build_figure,
    figure_boxes,
    read_figure,
    table_rows,
)
from sandcrawler.docparse.crf.columns import ColumnModel
from sandcrawler.docparse.features.figure import FIGURE_COLUMNS, figure_rows
from sandcrawler.docparse.features.fulltext import Callouts, fulltext_rows
from sandcrawler.docparse.layout.alto import find_pdfalto, read_layout_alto
from sandcrawler.docparse.layout.elements import Layout, Line, Token
from sandcrawler.docparse.layout.pdfium import read_layout_pdfium
from sandcrawler.docparse.training.grobid_corpus import read_figure_rows
from sandcrawler_testkit.layout_pdf import Run, column, make_layout_pdf
from tests.helpers.paths import PDFS, REPO
from tests.helpers.skips import unavailable

GROBID = Path(os.environ.get("SANDCRAWLER_TEST_GROBID_DIR", REPO.parent / "grobid"))
CAPTION = "The residual Hubble diagram for models 1-4. The black dashed line"


def col(row: list[str], name: str) -> str:
    return row[FIGURE_COLUMNS.index(name)]


@pytest.fixture(scope="module")
def page() -> Layout:
    """A body paragraph, a two-line figure caption in a smaller font (its
    "Figure 1." bold), more body text; read by PDFium."""
    runs = column(["The expansion of the universe is measured by the Hubble diagram of",
                   "distant supernovae, as discussed in the previous section of this paper."],
                  72, 700)
    runs += [Run("Figure 1.", 72, 400, "Times-Bold", 9), Run(CAPTION, 110, 400, size=9),
             Run("presents the deviation for the standard model.", 72, 389, size=9)]
    runs += column(["More body text follows the figure here and goes on for a while."], 72, 300)
    return read_layout_pdfium(make_layout_pdf([runs]))


def caption_lines(layout: Layout) -> list[Line]:
    return layout.pages[0].blocks[1].lines


def caption_tokens(layout: Layout) -> list[Token]:
    return [t for line in caption_lines(layout) for t in line.tokens]


# -- the rows ---------------------------------------------------------------------


def test_figure_rows_are_the_captions_fulltext_rows(page: Layout) -> None:
    tokens = caption_tokens(page)
    found = figure_rows(page, tokens)
    assert found.tokens == tokens
    assert {len(row) for row in found.rows} == {len(FIGURE_COLUMNS)} == {27}
    first = found.rows[0]
    assert first[:21] == ["Figure", "figure", "F", "Fi", "Fig", "Figu", "e", "re", "ure", "gure",
                          "BLOCKSTART", "LINESTART", "ALIGNEDLEFT", "NEWFONT", "LOWERFONT", "1",
                          "0", "INITCAP", "NODIGIT", "0", "NOPUNCT"]
    assert first[22:] == ["5", "0", "UNKNOWN", "0", "0"]
    number = found.rows[1]
    assert [col(number, c) for c in ("token", "bold", "capitals", "digits", "single_char")] == [
        "1", "1", "NOCAPS", "ALLDIGIT", "1"]
    assert [col(found.rows[3], c) for c in ("token", "font", "bold")] == ["The", "NEWFONT", "0"]
    texts = [t.text for t in found.tokens]
    line_end = texts.index("line")
    assert [col(found.rows[line_end], "line"), col(found.rows[line_end + 1], "line")] == [
        "LINEEND", "LINESTART"]
    assert [col(found.rows[-1], c) for c in ("token", "block", "line")] == [
        ".", "BLOCKEND", "LINEEND"]
    # the document's fulltext rows for these tokens, as GROBID hands them on
    whole = fulltext_rows(page, page.lines())
    at = whole.tokens.index(tokens[0])
    assert found.rows == whole.rows[at:at + len(tokens)]


def test_figure_rows_follow_the_body_and_the_references(page: Layout) -> None:
    tokens = caption_tokens(page)
    alone = figure_rows(page, tokens, body=caption_lines(page))
    # the caption as the whole body: nothing before its first token
    assert [col(alone.rows[0], c) for c in ("font", "font_size", "document_position")] == [
        "NEWFONT", "HIGHERFONT", "0"]
    cited = figure_rows(page, tokens, callouts=Callouts("NUMBER", frozenset({"1"})))
    assert {col(row, "callout_type") for row in cited.rows} == {"NUMBER"}
    assert [t.text for t, row in zip(cited.tokens, cited.rows, strict=True)
            if col(row, "callout_known") == "1"] == ["1", "1"]
    # a token outside the body has no row
    body_token = page.pages[0].blocks[0].lines[0].tokens[0]
    assert figure_rows(page, [body_token, *tokens], body=caption_lines(page)).tokens == tokens


# -- building figures and tables ------------------------------------------------------


def words(text: str, x: float, y: float, *, size: float = 10.0, page: int = 0) -> list[Token]:
    """Tokens of one line: words, and punctuation apart as GROBID's tokens."""
    out: list[Token] = []
    for word in text.split(" "):
        parts = [word[:-1], word[-1]] if len(word) > 1 and word[-1] in ".:," else [word]
        for i, part in enumerate(parts):
            width = 0.5 * size * len(part)
            out.append(Token(part, "Times", size, False, False, x, y, width, size, page,
                             space_after=i == len(parts) - 1))
            x += width
        x += 0.25 * size
    out[-1].space_after = False
    return out


def test_a_figure_from_hand_labelled_tokens() -> None:
    tokens = words("Figure 3. The growth of cats,", 72, 500) + words("over time.", 72, 512)
    labels = ["I-<figure_head>", "I-<label>", "I-<figure_head>", "I-<figDesc>",
              *["<figDesc>"] * 7]
    figure = build_figure(tokens, labels, kind="figure", id="fig_2")
    assert (figure.id, figure.kind, figure.label, figure.head) == ("fig_2", "figure", "3",
                                                                    "Figure 3")
    assert figure.description == "The growth of cats, over time."
    assert (figure.rows, figure.note) == ([], None)
    right = max(t.x + t.width for t in tokens)
    assert figure.boxes == [(1, 72.0, 500.0, round(right - 72.0, 2), 22.0)]
    assert figure.to_json() == {"id": "fig_2", "type": "figure", "label": "3",
                                "head": "Figure 3", "description": figure.description}
    with pytest.raises(ValueError, match="11 tokens but 2 labels"):
        build_figure(tokens, labels[:2], kind="figure", id="fig_2")


def test_a_table_of_three_rows_and_two_columns() -> None:
    head = words("Table 1:", 72, 100) + words("Weights of cats", 110, 100)
    cells = [("Cat breed", "Mean weight (kg)"), ("Siamese", "4.1"), ("Maine Coon", "8.2")]
    # the content column by column, as some PDFs order it: the places decide
    content = [t for c in (0, 1) for r, row in enumerate(cells)
               for t in words(row[c], 72 + 120 * c, 120 + 12 * r)]
    note = words("a Weighed in 2020.", 72, 160, size=8)
    tokens = head + content + note
    labels = ["I-<figure_head>", "I-<label>", "I-<figure_head>", "I-<figDesc>", "<figDesc>",
              "<figDesc>", "I-<content>", *["<content>"] * (len(content) - 1), "I-<note>",
              *["<note>"] * (len(note) - 1)]
    table = build_figure(tokens, labels, kind="table", id="tab_0")
    assert (table.label, table.head, table.description) == ("1", "Table 1", "Weights of cats")
    assert table.rows == [["Cat breed", "Mean weight (kg)"], ["Siamese", "4.1"],
                          ["Maine Coon", "8.2"]]
    assert table.note == "a Weighed in 2020."
    assert table.to_json()["rows"] == table.rows
    # a figure keeps no rows: its content is the text inside the drawing
    assert build_figure(tokens, labels, kind="figure", id="fig_0").rows == []


def test_table_rows_by_baseline_and_gap() -> None:
    row = words("x", 72, 100) + words("y", 200, 100)
    # a superscript mark rides a little above its baseline: the same row
    mark = Token("a", "Times", 6.0, False, False, 78, 98, 3.0, 6.0, 0, superscript=True)
    assert table_rows([*row, mark]) == [["xa", "y"]]
    assert table_rows([*words("one", 72, 100), *words("two", 72, 100, page=1)]) == [
        ["one"], ["two"]]
    assert table_rows([]) == []


def test_boxes_one_per_page() -> None:
    tokens = words("Figure 1.", 72, 700) + words("continued", 80, 50, page=1)
    assert [b[0] for b in figure_boxes(tokens)] == [1, 2]
    assert figure_boxes(tokens)[1] == (2, 80.0, 50.0, 45.0, 10.0)


# -- the shipped models -------------------------------------------------------------------


def test_shipped_figure_model_reads_a_caption(page: Layout) -> None:
    model = ColumnModel.load("figure")
    tokens = caption_tokens(page)
    found = figure_rows(page, tokens)
    labels = model.tag(found.rows)
    assert labels[:2] == ["I-<figure_head>", "I-<label>"]
    assert labels[2].endswith("<figure_head>")  # the "." after the number
    assert set(labels[3:]) == {"I-<figDesc>", "<figDesc>"}
    figure = read_figure(tokens, page, model, kind="figure", id="fig_0")
    assert (figure.label, figure.head) == ("1", "Figure 1")
    assert figure.description == (f"{CAPTION} presents the deviation for the standard model.")
    # rows the caller has are the ones tagged
    assert read_figure(tokens, page, model, kind="figure", id="fig_0",
                       rows=found.rows) == figure
    with pytest.raises(ValueError, match="rows"):
        read_figure(tokens, page, model, kind="figure", id="fig_0", rows=found.rows[:3])
    # no token with a row: an empty figure, still placed
    outside = read_figure(tokens, page, model, kind="figure", id="fig_1",
                          body=page.pages[0].blocks[0].lines)
    assert (outside.label, outside.description, len(outside.boxes)) == (None, None, 1)


def test_shipped_table_model_reads_a_table() -> None:
    runs = column(["The results of the three runs are given in the table below, with their",
                   "precision and recall on the test set of the shared task."], 72, 700)
    runs += [Run("Table 2:", 72, 600, "Times-Bold", 9),
             Run("Results of the three runs on the test set", 110, 600, size=9)]
    for i, cells in enumerate([("Run", "Precision", "Recall"), ("run1", "0.62", "0.37"),
                               ("run2", "0.71", "0.44")]):
        runs += [Run(text, 72 + 84 * c, 580 - 12 * i, size=9) for c, text in enumerate(cells)]
    runs += column(["More body text follows the table here and goes on for a while."], 72, 400)
    layout = read_layout_pdfium(make_layout_pdf([runs]))
    tokens = [t for b in layout.pages[0].blocks[1:3] for line in b.lines for t in line.tokens]
    table = read_figure(tokens, layout, ColumnModel.load("table"), kind="table", id="tab_1")
    assert (table.label, table.head) == ("2", "Table 2")
    assert table.description == "Results of the three runs on the test set"
    assert table.rows == [["Run", "Precision", "Recall"], ["run1", "0.62", "0.37"],
                          ["run2", "0.71", "0.44"]]


def shared_pdf(name: str) -> Path:
    path = PDFS / name
    if not path.is_file():
        unavailable(f"{path} not found (shared test data)", "SHARED_DATA")
    return path


def test_shipped_figure_model_on_a_real_caption() -> None:
    # 0807.3577 is in GROBID's figure corpus; its caption "Figure 1. The residual..."
    layout = read_layout_pdfium(shared_pdf("0807.3577.pdf"))
    lines = layout.lines()
    at = next(i for i, line in enumerate(lines) if line.text.startswith("Figure 1."))
    tokens = [t for line in lines[at:at + 2] for t in line.tokens]
    labels = ColumnModel.load("figure").tag(figure_rows(layout, tokens).rows)
    assert labels[:2] == ["I-<figure_head>", "I-<label>"]
    figure = read_figure(tokens, layout, ColumnModel.load("figure"), kind="figure", id="fig_0")
    assert (figure.label, figure.head) == ("1", "Figure 1")
    assert figure.description is not None
    assert figure.description.startswith("The residual Hubble diagram for models 1-4.")


# -- parity with GROBID's figure and table files ------------------------------------------------

#: the columns compared: not the document position (GROBID's counts the body
#: only, ours here the whole document), the bitmap flag, the reference callouts
#: (from the references) and the superscript flag (older files lack it); the
#: font columns of a figure's first token compare it with the token before it
#: in the body, which differs for the same reason
LAYOUT_COLUMNS = [*range(21), 22]


@pytest.mark.parametrize(("model", "stem"), [
    ("figure", "0807.3577"), ("figure", "1001._0908.0054"), ("figure", "Wang-paperAVE2008"),
    ("table", "Wang-paperAVE2008"),
])
def test_parity_with_grobids_figure_files(model: str, stem: str) -> None:
    raw_path = (GROBID / "grobid-trainer" / "resources" / "dataset" / model / "corpus" / "raw"
                / f"{stem}.training.{model}")
    if not raw_path.is_file():
        unavailable(f"GROBID's training data not found at {GROBID}", "GROBID")
    if find_pdfalto() is None:
        unavailable("pdfalto is not installed (pip install pdfalto)", "PDFALTO")
    layout = read_layout_alto(shared_pdf(f"{stem}.pdf"), timeout=120)
    raw = read_figure_rows(raw_path, 27)
    ours = figure_rows(layout, [t for line in layout.lines() for t in line.tokens]).rows
    matcher = difflib.SequenceMatcher(None, [r[0] for r in raw], [r[0] for r in ours],
                                      autojunk=False)
    pairs = [(raw[a + k], ours[b + k]) for a, b, n in matcher.get_matching_blocks()
             for k in range(n)]
    assert len(pairs) >= 0.95 * len(raw)
    for c in LAYOUT_COLUMNS:
        equal = sum(theirs[c] == mine[c] for theirs, mine in pairs)
        assert equal >= 0.95 * len(pairs), (FIGURE_COLUMNS[c], equal, len(pairs))
