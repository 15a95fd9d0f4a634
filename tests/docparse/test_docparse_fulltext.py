"""The fulltext model: GROBID's fulltext corpus read into labelled sequences
(pieces of three documents in tests/data/grobid-layout/fulltext, SOURCES.md
there), its feature rows (docparse/features/fulltext.py) on small layouts built
here and on a real PDF, the callout columns from a document's references, and
the shipped model tagging a real PDF's body (docs/extraction-models.md, "The
fulltext model"). The real PDF is GROBID's test document 0807.3577 in
../shared/data/pdfs: those tests skip without it."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest
from grobid_tei_xml.types import GrobidAuthor, GrobidBiblio

from sandcrawler.docparse.crf.columns import ColumnModel
from sandcrawler.docparse.features.fulltext import (
    FULLTEXT_COLUMNS,
    NO_CALLOUTS,
    Callouts,
    biblio_callouts,
    fulltext_rows,
    reference_callouts,
)
from sandcrawler.docparse.features.lexicon import Lexicon
from sandcrawler.docparse.features.parity import document_callouts
from sandcrawler.docparse.features.segmentation import segmentation_rows
from sandcrawler.docparse.layout.alto import find_pdfalto, read_layout_alto
from sandcrawler.docparse.layout.elements import Block, Graphic, Layout, Line, Page, Token
from sandcrawler.docparse.layout.tokens import split_spaced
from sandcrawler.docparse.training.grobid_corpus import SkipReason, read_corpus
from sandcrawler.docparse.training.registry import corpus_of, trainable
from sandcrawler.tagging.scoring import fields, plain
from tests.helpers.paths import PDFS, TEST_DATA
from tests.helpers.skips import unavailable

CORPUS = TEST_DATA / "grobid-layout" / "fulltext"
LEX = Lexicon(dictionary=frozenset({"the", "to"}), names=frozenset(), locations=frozenset())
CHAR = 5.0  # a character's width in the layouts built here


# reading GROBID's corpus ---------------------------------------------------------


def pairs_of(doc: str) -> list[tuple[str, str]]:
    read = read_corpus("fulltext", CORPUS)
    seq = next(s for s in read.sequences if s.doc.startswith(doc))
    return [(row[0], label) for row, label in zip(seq.rows, seq.labels, strict=True)]


def test_corpus_pieces_align() -> None:
    read = read_corpus("fulltext", CORPUS)
    assert (len(read.sequences), read.skipped) == (3, [])
    assert (read.rows, read.matched, read.guessed, read.dropped) == (1188, 1188, 0, 0)
    assert {len(row) for s in read.sequences for row in s.rows} == {27}
    pairs = pairs_of("PMC5462700")
    assert pairs[:3] == [("DISCUSSION", "I-<section>"), ("This", "I-<paragraph>"),
                         ("study", "<paragraph>")]
    # a callout inside a paragraph: the text after it is a new paragraph field, as
    # GROBID's trainer writes it ("... subjects <ref>5)</ref> .When ...")
    at = pairs.index(("5", "I-<citation_marker>"))
    assert pairs[at:at + 3] == [("5", "I-<citation_marker>"), (")", "<citation_marker>"),
                                (".", "I-<paragraph>")]
    assert pairs[-1] == ("70", "<table>")  # a <figure type="table">
    marks = [p for p in pairs_of("1001._0908.0054") if p[1].startswith("I-")]
    # an equation's number is its label, the brackets around it the equation's
    assert marks[2:5] == [("ds", "I-<equation>"), ("1", "I-<equation_label>"),
                          (")", "I-<equation>")]
    labels = {label.removeprefix("I-") for s in read.sequences for label in s.labels}
    assert labels == {"<section>", "<paragraph>", "<citation_marker>", "<figure_marker>",
                      "<equation>", "<equation_label>", "<figure>", "<table>"}


def write_pair(directory: Path, name: str, body: str, words: list[str]) -> None:
    (directory / "tei").mkdir(parents=True, exist_ok=True)
    (directory / "raw").mkdir(parents=True, exist_ok=True)
    (directory / "tei" / f"{name}.tei.xml").write_text(
        f'<tei><teiHeader><fileDesc xml:id="x"/></teiHeader><text xml:lang="en">{body}'
        "</text></tei>", encoding="utf-8")
    (directory / "raw" / name).write_text(
        "".join(" ".join([w] * 27) + "\n" for w in words), encoding="utf-8")


def test_tei_elements_become_grobids_labels(tmp_path: Path) -> None:
    body = ('<head>1 Intro<lb/></head>'
            '<p>See [<ref type="biblio">2</ref>] and <ref type="figure">Fig. 1</ref>, '
            '<ref type="table">Table 2</ref> or <ref type="formula">(3)</ref>.<lb/></p>'
            '<formula>x = y <label>(3)</label></formula>'
            '<figure>Figure 1 : a cat<lb/></figure>'
            '<figure type="table">Table 2 rows</figure><table>cells</table>'
            '<list><item>- one</item></list>'
            '<p>before <note>n1</note> after</p><p>so ends the text we read</p>')
    words = ["1", "Intro", "See", "[", "2", "]", "and", "Fig", ".", "1", ",", "Table", "2", "or",
             "(", "3", ")", ".", "x", "=", "y", "(", "3", ")", "Figure", "1", ":", "a", "cat",
             "Table", "2", "rows", "cells", "-", "one", "before", "n1", "after", "so", "ends",
             "the", "text", "we", "read"]
    write_pair(tmp_path, "a.training.fulltext", body, words)
    read = read_corpus("fulltext", tmp_path)
    (seq,) = read.sequences
    assert list(zip(words, seq.labels, strict=True)) == [
        ("1", "I-<section>"), ("Intro", "<section>"),
        ("See", "I-<paragraph>"), ("[", "<paragraph>"), ("2", "I-<citation_marker>"),
        ("]", "I-<paragraph>"), ("and", "<paragraph>"),
        ("Fig", "I-<figure_marker>"), (".", "<figure_marker>"), ("1", "<figure_marker>"),
        (",", "I-<paragraph>"), ("Table", "I-<table_marker>"), ("2", "<table_marker>"),
        ("or", "I-<paragraph>"), ("(", "I-<equation_marker>"), ("3", "<equation_marker>"),
        (")", "<equation_marker>"), (".", "I-<paragraph>"),
        ("x", "I-<equation>"), ("=", "<equation>"), ("y", "<equation>"),
        ("(", "I-<equation_label>"), ("3", "<equation_label>"), (")", "<equation_label>"),
        ("Figure", "I-<figure>"), ("1", "<figure>"), (":", "<figure>"), ("a", "<figure>"),
        ("cat", "<figure>"),
        ("Table", "I-<table>"), ("2", "<table>"), ("rows", "<table>"), ("cells", "I-<table>"),
        # a list item is a paragraph in GROBID's trainer
        ("-", "I-<paragraph>"), ("one", "<paragraph>"),
        # an element GROBID does not know (<note>) drops the text before it and
        # labels what follows <other>; the dropped word takes the label before it
        ("before", "<paragraph>"), ("n1", "I-<other>"), ("after", "<other>"),
        ("so", "I-<paragraph>"), *[(w, "<paragraph>") for w in words[-5:]]]
    assert (read.matched, read.guessed) == (len(words) - 1, 1)


def test_documents_without_a_partner_are_counted(tmp_path: Path) -> None:
    directory = tmp_path / "corpus"
    shutil.copytree(CORPUS, directory)
    (directory / "raw" / "PMC5462700.training.fulltext").unlink()
    (directory / "raw" / "lone.training.fulltext").write_text(
        " ".join(["x"] * 27) + "\n", encoding="utf-8")
    read = read_corpus("fulltext", directory)
    assert len(read.sequences) == 2
    assert read.skip_counts() == {SkipReason.NO_RAW_FILE: 1, SkipReason.NO_TEI_FILE: 1}


def test_registered_for_the_models_command(tmp_path: Path) -> None:
    model = trainable("fulltext")
    assert model.corpus == "fulltext/corpus"
    dataset = tmp_path / "dataset"
    shutil.copytree(CORPUS, dataset / "fulltext" / "corpus")
    assert corpus_of(model, dataset) == dataset / "fulltext" / "corpus"


# feature rows -------------------------------------------------------------------------


def line(text: str, x: float, y: float, *, page: int = 0, size: float = 10.0,
         bold: bool = False) -> Line:
    tokens = []
    at = x
    for word, space in split_spaced(text):
        width = CHAR * len(word)
        tokens.append(Token(word, "Times", size, bold, False, at, y, width, size, page,
                            space_after=space))
        at += width + (CHAR if space else 0)
    return Line(tokens)


def body_layout() -> tuple[Layout, list[Line]]:
    """A heading and a paragraph on page 0 (a bitmap under the paragraph), a
    footnote that is not body, a line with a superscript on page 1; the body
    lines."""
    head = Block([line("1 Introduction", 72, 100, size=12, bold=True)])
    para = Block([
        line("Cats are [1] the best, dogs-", 72, 120),
        line("like them too.", 72, 132),
        line("An indented line", 90, 144),
        line("back to the left", 72, 156),
    ])
    foot = Block([line("Not body", 72, 700)])
    page0 = Page(0, 600, 800, [head, para, foot])
    page0.graphic_boxes = [Graphic(100, 250, 50, 30, vector=False)]
    more = Block([line("More text 2", 72, 400, page=1)])
    more.lines[0].tokens[-1].superscript = True
    layout = Layout([page0, Page(1, 600, 800, [more])], reader="test")
    return layout, [*head.lines, *para.lines, *more.lines]


def column(rows: list[list[str]], name: str) -> list[str]:
    return [r[FULLTEXT_COLUMNS.index(name)] for r in rows]


def by_token(tokens: list[Token], rows: list[list[str]], name: str) -> list[tuple[str, str]]:
    return [(t.text, v) for t, v in zip(tokens, column(rows, name), strict=True)]


def test_a_row_per_body_token() -> None:
    layout, body = body_layout()
    tokens, rows = fulltext_rows(layout, body, LEX)
    assert tokens == [t for ln in body for t in ln.tokens]
    assert {len(r) for r in rows} == {len(FULLTEXT_COLUMNS)} == {27}
    assert rows[2][:10] == ["Cats", "cats", "C", "Ca", "Cat", "Cats", "s", "ts", "ats", "Cats"]
    assert fulltext_rows(layout, [], LEX) == ([], [])


def test_block_and_line_status() -> None:
    layout, body = body_layout()
    tokens, rows = fulltext_rows(layout, body, LEX)
    status = list(zip([t.text for t in tokens], column(rows, "block"), column(rows, "line"),
                      strict=True))
    # a block's last token is found ending when the next block starts
    assert status[:3] == [("1", "BLOCKSTART", "LINESTART"),
                          ("Introduction", "BLOCKEND", "LINEEND"),
                          ("Cats", "BLOCKSTART", "LINESTART")]
    # a word followed by a space is inside its line until the next line starts;
    # a hyphen, followed by the newline itself, ends its line at once
    assert status[10:13] == [("dogs", "BLOCKIN", "LINEIN"), ("-", "BLOCKIN", "LINEEND"),
                             ("like", "BLOCKIN", "LINESTART")]
    assert status[15:17] == [(".", "BLOCKIN", "LINEEND"), ("An", "BLOCKIN", "LINESTART")]
    assert status[22:24] == [("left", "BLOCKEND", "LINEEND"), ("More", "BLOCKSTART", "LINESTART")]
    # the body's last row: nothing follows to close it (as in GROBID's files)
    assert status[-1] == ("2", "BLOCKIN", "LINEIN")


def test_alignment_fonts_and_words() -> None:
    layout, body = body_layout()
    tokens, rows = fulltext_rows(layout, body, LEX)
    alignment = dict(by_token(tokens, rows, "alignment"))
    # "An" starts 18 points right of the line before: indented until a line
    # starts left again
    assert (alignment["like"], alignment["An"], alignment["line"], alignment["back"]) == (
        "ALIGNEDLEFT", "LINEINDENT", "LINEINDENT", "ALIGNEDLEFT")
    assert column(rows, "font")[:3] == ["NEWFONT", "SAMEFONT", "SAMEFONT"]
    assert column(rows, "font_size")[:3] == ["HIGHERFONT", "SAMEFONTSIZE", "LOWERFONT"]
    assert column(rows, "bold")[:3] == ["1", "1", "0"]
    words = {t.text: r for t, r in zip(tokens, rows, strict=True)}

    def cells(word: str, *names: str) -> list[str]:
        return [words[word][FULLTEXT_COLUMNS.index(n)] for n in names]

    names = ("capitals", "digits", "single_char", "punctuation")
    assert cells("Cats", *names) == ["INITCAP", "NODIGIT", "0", "NOPUNCT"]
    assert cells("1", *names) == ["NOCAPS", "ALLDIGIT", "1", "NOPUNCT"]
    assert cells("[", *names) == ["ALLCAP", "NODIGIT", "1", "OPENBRACKET"]
    assert cells(",", *names) == ["ALLCAP", "NODIGIT", "1", "COMMA"]
    assert cells("-", *names)[3] == "HYPHEN"


def test_positions_bitmap_and_superscript() -> None:
    layout, body = body_layout()
    tokens, rows = fulltext_rows(layout, body, LEX)
    # the body's characters (spaces and newlines of GROBID's stream included):
    # 97 in the first piece (heading and paragraph), 12 in the second
    position = dict(by_token(tokens, rows, "document_position"))
    assert column(rows, "document_position")[0] == "0"
    assert position["Cats"] == str(17 * 12 // 109)
    assert position["More"] == str(97 * 12 // 109)
    assert position["2"] == str(107 * 12 // 109)
    page = dict(by_token(tokens, rows, "page_position"))
    assert (page["Introduction"], page["back"], page["More"]) == ("1", "2", "6")  # y / 800 * 12
    # the bitmap at y 250-280 is within 100 points of the paragraph, not the heading
    bitmap = dict(by_token(tokens, rows, "bitmap_around"))
    assert (bitmap["Introduction"], bitmap["Cats"], bitmap["left"], bitmap["More"]) == (
        "0", "1", "1", "0")
    assert column(rows, "superscript") == ["0"] * (len(rows) - 1) + ["1"]


def test_callout_columns() -> None:
    layout, body = body_layout()
    tokens, rows = fulltext_rows(layout, body, LEX)
    assert set(column(rows, "callout_type")) == {"UNKNOWN"}
    assert set(column(rows, "callout_known")) == {"0"}
    callouts = Callouts("NUMBER", frozenset({"1", "Smith"}))
    tokens, rows = fulltext_rows(layout, body, LEX, callouts)
    assert set(column(rows, "callout_type")) == {"NUMBER"}
    # a known label is flagged wherever it is, a section's number too (as GROBID does)
    assert [t for t, v in by_token(tokens, rows, "callout_known") if v == "1"] == ["1", "1"]


def test_reference_callouts() -> None:
    found = reference_callouts([("[1]", "Smith"), ("2.", None), ("(3)", "Doe"), (None, "Roe")])
    assert found == Callouts("NUMBER", frozenset({"1", "2", "3", "Smith", "Doe", "Roe"}))
    # a strict majority of all references must be numbered
    assert reference_callouts([("1", None), ("2", None), (None, "A"), (None, "B")]).kind == (
        "UNKNOWN")
    # GROBID's numbered test finds the year of an author-year label: never AUTHOR
    assert reference_callouts([("Smith 2001", None)]).kind == "NUMBER"
    assert reference_callouts([]) == NO_CALLOUTS
    # the cascade's references: the label is the biblio's id
    refs = [GrobidBiblio(authors=[GrobidAuthor(full_name="A Smith", surname="Smith")], id="1"),
            GrobidBiblio(authors=[], id="2")]
    assert biblio_callouts(refs) == Callouts("NUMBER", frozenset({"1", "2", "Smith"}))


# a real PDF ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def real_body() -> tuple[Layout, list[Line]]:
    pdf = PDFS / "0807.3577.pdf"
    if not pdf.is_file():
        unavailable(f"{pdf} is not there", "SHARED_DATA")
    if find_pdfalto() is None:
        unavailable("pdfalto is not installed (pip install pdfalto)", "PDFALTO")
    layout = read_layout_alto(pdf, timeout=120)
    zones = ColumnModel.load("segmentation").tag(segmentation_rows(layout))
    lines = [ln for ln, zone in zip(layout.lines(), zones, strict=True)
             if plain(zone) == "<body>"]
    assert lines
    return layout, lines


def test_rows_of_a_real_pdf(real_body: tuple[Layout, list[Line]]) -> None:
    layout, lines = real_body
    tokens, rows = fulltext_rows(layout, lines)
    assert len(tokens) == len(rows) == sum(len(ln.tokens) for ln in lines) > 3000
    assert {len(r) for r in rows} == {27}
    # every column holds only the values GROBID's feature writer prints
    assert set(column(rows, "block")) == {"BLOCKSTART", "BLOCKIN", "BLOCKEND"}
    assert set(column(rows, "line")) == {"LINESTART", "LINEIN", "LINEEND"}
    assert set(column(rows, "alignment")) <= {"ALIGNEDLEFT", "LINEINDENT"}
    assert {int(v) for v in column(rows, "document_position")} == set(range(12))
    assert {int(v) for v in column(rows, "page_position")} <= set(range(13))
    assert column(rows, "document_position") == sorted(column(rows, "document_position"), key=int)
    # a line's first token starts it (a one-token line ending a block is
    # GROBID's "LINEEND" instead: the next block's start closes it)
    firsts = {id(ln.tokens[0]) for ln in lines if len(ln.tokens) > 1}
    assert {v for t, v in zip(tokens, column(rows, "line"), strict=True)
            if id(t) in firsts} == {"LINESTART"}
    assert Counter(column(rows, "line"))["LINESTART"] <= len(lines)


def test_shipped_model_finds_sections_and_paragraphs(
        real_body: tuple[Layout, list[Line]]) -> None:
    layout, lines = real_body
    # the callout columns as the model learnt them: from the document's references
    callouts = document_callouts(layout)
    assert callouts.kind == "NUMBER" and {"1", "39", "Buchert"} <= callouts.known
    tokens, rows = fulltext_rows(layout, lines, callouts=callouts)
    model = ColumnModel.load("fulltext")
    labels = model.tag(rows)
    assert len(labels) == len(rows)
    found = fields(labels)
    kinds = Counter(label for label, _, _ in found)
    assert kinds["<section>"] >= 5 and kinds["<paragraph>"] >= 20
    assert kinds["<citation_marker>"] >= 30  # the paper cites [1] to [39] in its body
    heads = [" ".join(t.text for t in tokens[a:b]) for label, a, b in found
             if label == "<section>"]
    assert any("Introduction" in head for head in heads), heads
    # most tokens are paragraph text
    share = sum(plain(label) == "<paragraph>" for label in labels) / len(labels)
    assert share > 0.6
