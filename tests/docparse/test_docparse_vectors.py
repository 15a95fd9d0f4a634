"""GROBID's feature vectors from layout tokens (docparse/vectors.py): each
feature on small layouts built here, and parity with GROBID's own feature files
on the PDFs of GROBID's corpora that we have (docs/extraction.md, "Feature
vectors and parity")."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sandcrawler.docparse.features.header import HEADER_COLUMNS, header_rows
from sandcrawler.docparse.features.lexicon import Lexicon, default_lexicon
from sandcrawler.docparse.features.parity import (
    Agreement,
    compare,
    document_callouts,
    find_pairs,
    read_raw,
)
from sandcrawler.docparse.features.reference_segmenter import REFSEG_COLUMNS, refseg_rows
from sandcrawler.docparse.features.segmentation import SEGMENTATION_COLUMNS, segmentation_rows
from sandcrawler.docparse.layout.alto import find_pdfalto, read_layout_alto
from sandcrawler.docparse.layout.elements import Block, Graphic, Layout, Line, Page, Token
from sandcrawler.docparse.layout.tokens import split_spaced
from tests.helpers.paths import REPO, SHARED_DATA
from tests.helpers.skips import unavailable

GROBID = Path(os.environ.get("SANDCRAWLER_TEST_GROBID_DIR", REPO.parent / "grobid"))
LEX = Lexicon(
    dictionary=frozenset({"of", "for", "and", "the", "more"}),
    names=frozenset({"smith", "jones"}),
    locations=frozenset({"oxford", "uk"}),
)
CHAR = 5.0  # a character's width in the layouts built here


def line(
    text: str,
    x: float,
    y: float,
    *,
    page: int = 0,
    size: float = 10.0,
    font: str = "Times",
    bold: bool = False,
    italic: bool = False,
) -> Line:
    tokens = []
    at = x
    for word, space in split_spaced(text):
        width = CHAR * len(word)
        tokens.append(
            Token(word, font, size, bold, italic, at, y, width, size, page, False, False, space)
        )
        at += width + (CHAR if space else 0)
    return Line(tokens)


def block(*lines: Line) -> Block:
    return Block(list(lines))


def col(rows: list[list[str]], names: tuple[str, ...], name: str) -> list[str]:
    return [r[names.index(name)] for r in rows]


def seg(rows: list[list[str]], name: str) -> list[str]:
    return col(rows, SEGMENTATION_COLUMNS, name)


def hdr(rows: list[list[str]], name: str) -> list[str]:
    return col(rows, HEADER_COLUMNS, name)


def ref(rows: list[list[str]], name: str) -> list[str]:
    return col(rows, REFSEG_COLUMNS, name)


def two_pages() -> Layout:
    """A running head on both pages, a title, authors, a body block, a page number."""
    head0 = block(line("Journal of Cat Studies", 72, 30, size=8))
    title = block(line("Deep Learning for Cats", 72, 60, size=14, font="Times-Bold", bold=True))
    authors = block(
        line("John Smith and Mary Jones", 72, 300),
        line("University of Oxford, UK", 72, 312),
        line("smith@ox.ac.uk http://x.org 1999", 72, 324),
    )
    number0 = block(line("1", 300, 760, size=8))
    page0 = Page(0, 600, 800, [head0, title, authors, number0])
    page0.graphic_boxes = [
        Graphic(100, 250, 50, 30, vector=False),
        Graphic(0, 700, 600, 1, vector=True),
    ]
    page0.bitmaps, page0.graphics = 1, 1
    head1 = block(line("Journal of Cat Studies", 72, 30, page=1, size=8))
    body = block(
        line("May the cats be with you in 2020 and more.", 72, 200, page=1, italic=True),
        line("THE END", 72, 212, page=1, italic=True),
        *(
            line(f"filler line {i} of the body text here", 72, 224 + 12 * i, page=1)
            for i in range(10)
        ),
    )
    page1 = Page(1, 600, 800, [head1, body])
    return Layout([page0, page1], reader="test")


# segmentation -------------------------------------------------------------------


def test_segmentation_a_row_per_line() -> None:
    layout = two_pages()
    rows = segmentation_rows(layout, LEX)
    assert len(rows) == len(layout.lines()) == 19
    assert {len(r) for r in rows} == {len(SEGMENTATION_COLUMNS)} == {33}
    first = rows[0]
    assert first[:7] == ["Journal", "of", "journal", "J", "Jo", "Jou", "Jour"]
    # a one-word line repeats its word as the second
    assert rows[5][:3] == ["1", "1", "1"]
    # a line's words are cut at whitespace only
    assert rows[4][:2] == ["smith@ox.ac.uk", "http://x.org"]


def test_segmentation_block_and_page_status() -> None:
    rows = segmentation_rows(two_pages(), LEX)
    assert seg(rows, "block")[:6] == [
        "BLOCKSTART",  # running head: a one-line block only starts
        "BLOCKSTART",
        "BLOCKSTART",  # authors: start, in, end
        "BLOCKIN",
        "BLOCKEND",
        "BLOCKSTART",
    ]
    assert (
        seg(rows, "page")
        == ["PAGESTART"] + ["PAGEIN"] * 4 + ["PAGEEND"] + ["PAGESTART"] + ["PAGEIN"] * 12
    )


def test_segmentation_layout_comes_from_the_block_first_token() -> None:
    layout = two_pages()
    # the body's second line is in capitals, but its block starts in italics
    rows = segmentation_rows(layout, LEX)
    assert (
        seg(rows, "font")
        == ["NEWFONT", "NEWFONT", "NEWFONT", "SAMEFONT", "SAMEFONT"] + ["SAMEFONT"] * 14
    )
    assert seg(rows, "font_size")[:8] == [
        "HIGHERFONT",  # the first line
        "HIGHERFONT",  # 14 after 8
        "LOWERFONT",  # 10 after 14
        "SAMEFONTSIZE",
        "SAMEFONTSIZE",
        "LOWERFONT",  # the page number, 8
        "SAMEFONTSIZE",  # the running head, 8
        "HIGHERFONT",  # the body, 10
    ]
    assert seg(rows, "bold")[:3] == ["0", "1", "0"]
    assert seg(rows, "italic")[7:10] == ["1", "1", "1"]


@pytest.mark.parametrize(
    ("index", "capitals", "digits", "single", "name", "common", "year", "month", "email", "http"),
    [
        (0, "INITCAP", "NODIGIT", "0", "0", "0", "0", "0", "0", "0"),  # Journal
        (2, "INITCAP", "NODIGIT", "0", "0", "0", "0", "0", "0", "0"),  # John
        (4, "NOCAPS", "NODIGIT", "0", "0", "0", "0", "0", "1", "0"),  # smith@ox.ac.uk
        (5, "NOCAPS", "ALLDIGIT", "1", "0", "0", "0", "0", "0", "0"),  # 1
        (7, "INITCAP", "NODIGIT", "0", "0", "0", "0", "1", "0", "0"),  # May
        (8, "ALLCAP", "NODIGIT", "0", "0", "1", "0", "0", "0", "0"),  # THE
    ],
)
def test_segmentation_word_columns(
    index: int,
    capitals: str,
    digits: str,
    single: str,
    name: str,
    common: str,
    year: str,
    month: str,
    email: str,
    http: str,
) -> None:
    row = segmentation_rows(two_pages(), LEX)[index]
    names = (
        "capitals",
        "digits",
        "single_char",
        "name",
        "common",
        "year",
        "month",
        "email",
        "http",
    )
    got = [row[SEGMENTATION_COLUMNS.index(n)] for n in names]
    assert got == [capitals, digits, single, name, common, year, month, email, http]
    assert row[SEGMENTATION_COLUMNS.index("first_name")] == "0"  # never set by GROBID


def test_segmentation_word_columns_of_odd_words() -> None:
    layout = Layout(
        [
            Page(
                0,
                600,
                800,
                [
                    block(
                        line("2020 is a year", 72, 100),
                        line("Smith, again", 72, 112),
                        line("x2 https", 72, 124),
                        line("1,999", 72, 136),
                    )
                ],
            )
        ]
    )
    rows = segmentation_rows(layout, LEX)
    assert seg(rows, "year") == ["1", "0", "0", "1"]  # GROBID's year class holds a comma
    assert seg(rows, "name") == ["0", "0", "0", "0"]  # "Smith," with its comma is no name
    assert seg(rows, "common") == ["0", "0", "0", "0"]
    assert seg(rows, "digits") == ["ALLDIGIT", "NODIGIT", "CONTAINSDIGITS", "CONTAINSDIGITS"]
    assert seg(rows, "capitals") == ["NOCAPS", "INITCAP", "NOCAPS", "ALLCAP"]


def test_segmentation_positions_count_grobid_tokens() -> None:
    layout = two_pages()
    rows = segmentation_rows(layout, LEX)

    def size(b: Block) -> int:
        # GROBID's tokens: the line's tokens, a space after each word (its last
        # too), a newline per line and one more for the block
        return sum(len(ln.tokens) + sum(t.space_after for t in ln.tokens) + 2 for ln in b.lines) + 1

    blocks0, blocks1 = layout.pages[0].blocks, layout.pages[1].blocks
    total = sum(size(b) for p in layout.pages for b in p.blocks)
    before_authors = size(blocks0[0]) + size(blocks0[1])
    page0 = sum(size(b) for b in blocks0)
    assert seg(rows, "document_position")[2:5] == [str(int(before_authors / total * 12))] * 3
    assert seg(rows, "page_position")[2:5] == [str(int(before_authors / page0 * 12))] * 3
    assert seg(rows, "document_position")[6] == str(int(page0 / total * 12))
    assert seg(rows, "page_position")[6] == "0"
    assert seg(rows, "page_position")[7] == str(
        int(size(blocks1[0]) / (size(blocks1[0]) + size(blocks1[1])) * 12)
    )


def test_segmentation_punctuation_and_line_length() -> None:
    rows = segmentation_rows(two_pages(), LEX)
    assert seg(rows, "punctuation")[2:5] == ["no", ",", "@..://."]
    assert seg(rows, "punctuation_count")[2:5] == ["0", "1", "7"]
    # each line's length against the block's longest, counted with its trailing space
    texts = [
        "John Smith and Mary Jones ",
        "University of Oxford, UK ",
        "smith@ox.ac.uk http://x.org 1999 ",
    ]
    longest = max(len(t) for t in texts)
    assert seg(rows, "line_length")[2:5] == [str(int(len(t) / longest * 10)) for t in texts]
    assert seg(rows, "line_length")[:2] == ["10", "10"]


def test_segmentation_graphics_around() -> None:
    rows = segmentation_rows(two_pages(), LEX)
    # the bitmap at y 250-280 is within 100 points of the authors (from 300), not the title
    assert seg(rows, "bitmap_around")[:6] == ["0", "0", "1", "1", "1", "0"]
    # page 0 has a drawing: GROBID's training files place it at (0, 0), "around"
    # the blocks that start within 100 points of the page's top; page 1 has none
    assert seg(rows, "vector_around")[:6] == ["1", "1", "0", "0", "0", "0"]
    assert set(seg(rows, "vector_around")[6:]) == {"0"}


def test_segmentation_repetitive_lines() -> None:
    rows = segmentation_rows(two_pages(), LEX)
    assert seg(rows, "repetitive")[0] == seg(rows, "repetitive")[6] == "1"
    assert seg(rows, "first_repetitive")[0] == "1"
    assert seg(rows, "first_repetitive")[6] == "0"
    # the title is not repeated; the page number is too short a pattern
    assert seg(rows, "repetitive")[1] == seg(rows, "repetitive")[5] == "0"


def test_segmentation_main_area() -> None:
    rows = segmentation_rows(two_pages(), LEX)
    # the big blocks (authors, body) make the main area; the running heads, the
    # title and the page number are outside it
    assert seg(rows, "main_area") == ["0", "0", "1", "1", "1", "0", "0"] + ["1"] * 12


def test_segmentation_main_area_needs_odd_and_even_pages() -> None:
    layout = two_pages()
    layout.pages.pop()
    rows = segmentation_rows(layout, LEX)
    assert set(seg(rows, "main_area")) == {"1"}  # the whole page


def test_segmentation_of_no_text() -> None:
    assert segmentation_rows(Layout([Page(0, 600, 800)]), LEX) == []


# header -------------------------------------------------------------------------


def header_layout() -> Layout:
    title = block(
        line("Deep Learning", 72, 60, size=14, bold=True),
        line("for Cats", 72, 76, size=14, bold=True),
    )
    authors = block(
        line("John Smith (Oxford, UK)", 72, 100),
        line("smith@ox.ac.uk; www.x.org", 90, 112, italic=True),
        line("\u201cquoted\u201d: yes - no.", 72, 124),
    )
    body = block(line("Body text", 72, 300))
    return Layout([Page(0, 600, 800, [title, authors, body])])


def test_header_rows_are_tokens_of_the_lines() -> None:
    layout = header_layout()
    lines = layout.lines()[:5]
    tokens, rows = header_rows(layout, lines, LEX)
    assert tokens == [t for ln in lines for t in ln.tokens]
    assert {len(r) for r in rows} == {len(HEADER_COLUMNS)} == {32}
    assert set(hdr(rows, "label_slot")) == {"0"}
    assert rows[0][:10] == ["Deep", "deep", "D", "De", "Dee", "Deep", "p", "ep", "eep", "Deep"]


def test_header_block_and_line_status() -> None:
    layout = header_layout()
    _, rows = header_rows(layout, layout.lines()[:5], LEX)
    assert hdr(rows, "block")[:4] == ["BLOCKSTART", "BLOCKIN", "BLOCKIN", "BLOCKEND"]
    assert hdr(rows, "line")[:4] == ["LINESTART", "LINEEND", "LINESTART", "LINEEND"]
    assert hdr(rows, "block")[4] == "BLOCKSTART"
    assert hdr(rows, "block")[-1] == "BLOCKEND"
    assert hdr(rows, "line")[-1] == "LINEEND"


def test_header_alignment() -> None:
    layout = header_layout()
    tokens, rows = header_rows(layout, layout.lines()[:5], LEX)
    alignment = dict(zip((t.text for t in tokens), hdr(rows, "alignment"), strict=False))
    # the e-mail line starts 18 points right of the line before: indented, from
    # that line on, until a line starts left of it again
    assert alignment["John"] == "ALIGNEDLEFT"
    assert alignment["smith"] == alignment["www"] == "LINEINDENT"
    assert alignment["yes"] == "ALIGNEDLEFT"


def test_header_fonts() -> None:
    layout = header_layout()
    tokens, rows = header_rows(layout, layout.lines()[:5], LEX)
    assert hdr(rows, "font")[:5] == ["NEWFONT", "SAMEFONT", "SAMEFONT", "SAMEFONT", "SAMEFONT"]
    assert hdr(rows, "font_size")[:5] == [
        "HIGHERFONT",
        "SAMEFONTSIZE",
        "SAMEFONTSIZE",
        "SAMEFONTSIZE",
        "LOWERFONT",
    ]
    assert hdr(rows, "bold")[:5] == ["1", "1", "1", "1", "0"]
    italic = [t.text for t, i in zip(tokens, hdr(rows, "italic"), strict=True) if i == "1"]
    assert italic[:3] == ["smith", "@", "ox"]
    # the largest font is the title's; the smallest is GROBID's spaces' (0): never a token's
    assert hdr(rows, "largest_font") == ["1"] * 4 + ["0"] * (len(rows) - 4)
    assert set(hdr(rows, "smallest_font")) == {"0"}
    assert hdr(rows, "larger_than_average")[:5] == ["1", "1", "1", "1", "1"]


def test_header_lexical_and_pattern_columns() -> None:
    layout = header_layout()
    tokens, rows = header_rows(layout, layout.lines()[:5], LEX)
    by_text: dict[str, list[str]] = {}
    for token, row in zip(tokens, rows, strict=True):
        by_text.setdefault(token.text, row)

    def flags(word: str, *names: str) -> list[str]:
        return [by_text[word][HEADER_COLUMNS.index(n)] for n in names]

    assert flags("Smith", "name", "common", "location") == ["1", "0", "0"]
    assert flags("for", "name", "common", "location") == ["0", "1", "0"]
    assert flags("Oxford", "name", "common", "location") == ["0", "0", "1"]
    assert flags("UK", "location", "capitals") == ["1", "ALLCAP"]
    # the e-mail address and the URL are found in the block's text, token by token
    email = [
        t.text for t, r in zip(tokens, rows, strict=True) if r[HEADER_COLUMNS.index("email")] == "1"
    ]
    assert email == ["smith", "@", "ox", ".", "ac", ".", "uk"]
    http = [
        t.text for t, r in zip(tokens, rows, strict=True) if r[HEADER_COLUMNS.index("http")] == "1"
    ]
    assert http == ["www", ".", "x", ".", "org"]


@pytest.mark.parametrize(
    ("word", "kind"),
    [
        ("(", "OPENBRACKET"),
        (")", "ENDBRACKET"),
        (".", "DOT"),
        (",", "COMMA"),
        ("-", "HYPHEN"),
        ('"', "QUOTE"),
        (":", "PUNCT"),
        (";", "PUNCT"),
        ("@", "NOPUNCT"),
        ("yes", "NOPUNCT"),
    ],
)
def test_header_punctuation_kind(word: str, kind: str) -> None:
    layout = header_layout()
    tokens, rows = header_rows(layout, layout.lines()[:5], LEX)
    found = {
        t.text: r[HEADER_COLUMNS.index("punctuation")] for t, r in zip(tokens, rows, strict=True)
    }
    assert found[word] == kind


def test_header_pieces() -> None:
    layout = header_layout()
    lines = layout.lines()
    # the title's second line and the authors' first two: one piece over two blocks
    tokens, rows = header_rows(layout, [lines[1], lines[2], lines[3]], LEX)
    assert [t.text for t in tokens][:3] == ["for", "Cats", "John"]
    assert hdr(rows, "block")[:3] == ["BLOCKSTART", "BLOCKEND", "BLOCKSTART"]
    # the piece ends inside the authors' block: its last row ends the block
    assert hdr(rows, "block")[-1] == "BLOCKEND"
    # two lines apart are two pieces
    tokens, rows = header_rows(layout, [lines[0], lines[5]], LEX)
    assert [t.text for t in tokens] == ["Deep", "Learning", "Body", "text"]
    assert hdr(rows, "block") == ["BLOCKSTART", "BLOCKEND", "BLOCKSTART", "BLOCKEND"]
    assert header_rows(layout, [], LEX) == ([], [])


# reference segmenter ------------------------------------------------------------


def refs_layout() -> Layout:
    refs = block(
        line("[1] Doe J", 72, 100),
        line("Things, of (1999) and more, more: more; more. more! more? [x]", 72, 112),
    )
    other = block(line("[2] Roe K http://x.org", 72, 200))
    return Layout([Page(0, 600, 800, [block(line("References", 72, 60)), refs, other])])


def test_refseg_rows() -> None:
    layout = refs_layout()
    lines = layout.lines()[1:]
    tokens, rows = refseg_rows(layout, lines, LEX)
    assert tokens == [t for ln in lines for t in ln.tokens]
    assert {len(r) for r in rows} == {len(REFSEG_COLUMNS)} == {28}
    assert set(ref(rows, "label_slot")) == {"0"}
    assert set(ref(rows, "first_name")) == set(ref(rows, "location")) == {"0"}
    first = rows[:5]
    assert [r[0] for r in first] == ["[", "1", "]", "Doe", "J"]
    assert ref(first, "line") == ["LINESTART", "LINEIN", "LINEIN", "LINEIN", "LINEEND"]
    assert ref(first, "block") == ["BLOCKSTART", "BLOCKIN", "BLOCKIN", "BLOCKIN", "BLOCKIN"]
    assert ref(rows, "block")[len(lines[0].tokens) + len(lines[1].tokens) - 1] == "BLOCKEND"
    assert ref(rows, "block")[len(lines[0].tokens) + len(lines[1].tokens)] == "BLOCKSTART"
    # the place in the line: characters so far ("[1] Doe J \n", a space counting
    # twice as in GROBID) against the line's length from its first token (11)
    assert ref(first, "line_position") == ["0", "1", "2", "7", "10"]
    # punctuation of the line: "[]", two characters
    assert ref(first, "punctuation_count") == ["2"] * 5
    # the second line has eleven: GROBID caps the count at ten
    assert ref(rows, "punctuation_count")[5] == "10"
    texts = [t.text for t in tokens]
    assert [texts[i] for i, v in enumerate(ref(rows, "http")) if v == "1"] == ["http"]
    assert ref(rows, "punctuation")[:3] == ["OPENBRACKET", "NOPUNCT", "ENDBRACKET"]


def test_refseg_line_length() -> None:
    layout = refs_layout()
    lines = layout.lines()[1:]
    _, rows = refseg_rows(layout, lines, LEX)
    # lines against the longest line of the zone, counted as GROBID counts it:
    # up to each newline inside the zone (the zone's last line, cut before its
    # newline, is not counted)
    second = len("Things, of (1999) and more, more: more; more. more! more? [x] \n")
    assert ref(rows, "line_length")[0] == str(int(len("[1] Doe J \n") / second * 10))
    assert ref(rows, "line_length")[5] == "10"


def test_refseg_without_lines() -> None:
    layout = refs_layout()
    assert refseg_rows(layout, [], LEX) == ([], [])


def test_shipped_lexicon() -> None:
    lex = default_lexicon()
    assert lex.common("However,") and lex.common("well-known") and not lex.common("Xqzt")
    assert lex.name("Neumann") and lex.name("mary") and not lex.name("the")
    assert "germany" in lex.locations
    assert len(lex.dictionary) > 40_000 and len(lex.names) > 20_000


# parity with GROBID's own feature files ------------------------------------------

#: per model: the lowest share of aligned rows equal to GROBID's allowed for any
#: column, the lowest mean over columns, the lowest share of GROBID's rows aligned
#: (measured: docs/extraction.md; the lowest columns are pdfalto's version drift)
FLOORS = {
    "segmentation": (0.70, 0.96, 0.88),
    "header": (0.92, 0.99, 0.99),
    "reference-segmenter": (0.99, 0.99, 0.99),
    "fulltext": (0.99, 0.99, 0.99),
}


@pytest.fixture(scope="module")
def parity() -> dict[str, Agreement]:
    if not (GROBID / "grobid-trainer" / "resources" / "dataset").is_dir():
        unavailable(f"GROBID's training data not found at {GROBID}", "GROBID")
    if find_pdfalto() is None:
        unavailable("pdfalto is not installed (pip install pdfalto)", "PDFALTO")
    pairs = find_pairs(GROBID, [SHARED_DATA / "pdfs", GROBID / "testpdfs"])
    if not pairs:
        unavailable("no PDF of GROBID's corpora found", "SHARED_DATA")
    totals = {model: Agreement(model) for model in FLOORS}
    layouts: dict[Path, Layout] = {}
    for pair in pairs:
        if pair.pdf not in layouts:
            layouts[pair.pdf] = read_layout_alto(pair.pdf, timeout=120)
        # the fulltext's callout columns: from the references as our models read them
        callouts = document_callouts(layouts[pair.pdf]) if pair.model == "fulltext" else None
        totals[pair.model].add(
            compare(pair.model, layouts[pair.pdf], read_raw(pair.raw), callouts=callouts))
    return totals


@pytest.mark.parametrize("model", sorted(FLOORS))
def test_parity_floor(parity: dict[str, Agreement], model: str) -> None:
    agreement = parity[model]
    lowest, mean, coverage = FLOORS[model]
    assert agreement.aligned > 0
    shares = [agreement.column(i) for i in range(len(agreement.equal))]
    assert min(shares) >= lowest, shares
    assert sum(shares) / len(shares) >= mean, shares
    assert agreement.coverage >= coverage
