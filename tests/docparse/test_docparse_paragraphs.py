"""Paragraph ends as the page prints them (docparse/assembly/paragraphs.py), and
how the body's assembly weighs them against the fulltext model's labels."""

from __future__ import annotations

from sandcrawler.docparse.assembly.body import build_body
from sandcrawler.docparse.assembly.paragraphs import printed_breaks
from sandcrawler.docparse.layout.elements import Token
from sandcrawler.records.fulltext import Formula

#: a column 300 points wide from x = 50, lines 12 points apart
LEFT, WIDTH = 50.0, 300.0


def page(lines: list[tuple[str, str, bool]], *, page_of: dict[int, int] | None = None
         ) -> tuple[list[Token], list[str]]:
    """Tokens of printed lines (label of its first token, text, full width?): a
    full line is stretched to the column's right edge, a short one ends at its
    words' natural width. Only the first token of a line labelled I-... begins."""
    tokens: list[Token] = []
    labels: list[str] = []
    for n, (label, text, full) in enumerate(lines):
        words = text.split(" ")
        natural = sum(6.0 * len(w) for w in words) + 3.0 * (len(words) - 1)
        gap = (WIDTH - natural + 3.0 * (len(words) - 1)) / max(1, len(words) - 1) \
            if full and len(words) > 1 else 3.0
        x, y = LEFT, 100.0 + 12 * n
        for j, word in enumerate(words):
            tokens.append(Token(word, "Times", 10, False, False, x, y, 6.0 * len(word), 10,
                                (page_of or {}).get(n, 0), space_after=j + 1 < len(words)))
            x += 6.0 * len(word) + gap
            labels.append(label if j == 0 else label.removeprefix("I-"))
    return tokens, labels


COLUMN = [
    ("I-<paragraph>", "The first paragraph runs over several lines of the", True),
    ("<paragraph>", "column and it ends here in a short line of text.", False),
    ("<paragraph>", "The second one starts with a capital and is printed", True),
    ("<paragraph>", "on lines as full as the first one was, to the end", True),
    ("<paragraph>", "of its column, and stops at last with a short one.", False),
    ("<paragraph>", "then a lower-case line goes on after a short one: and", True),
    ("<paragraph>", "ends, a comma after a short line,", False),
    ("<paragraph>", "Capital after a comma is no paragraph start either at", True),
    ("<paragraph>", "all but this line is full and ends with a full stop.", True),
    ("<paragraph>", "So a capital after a full line starts nothing at all.", True),
]


def test_a_short_line_ending_a_sentence_before_a_capital_is_a_break() -> None:
    tokens, _ = page(COLUMN)
    starts = {i for i, t in enumerate(tokens) if i == 0 or tokens[i - 1].y != t.y}
    breaks = printed_breaks(tokens)
    assert breaks <= starts
    line_of = {t: n for n, t in enumerate(sorted(starts))}
    # line 2 (after line 1's short sentence end) only: line 5 starts in lower case,
    # line 7 follows a comma, line 9 follows a full line
    assert sorted(line_of[i] for i in breaks) == [2]


def test_a_page_break_says_nothing_of_a_paragraph_end() -> None:
    tokens, _ = page(COLUMN[:3], page_of={2: 1})
    assert printed_breaks(tokens) == frozenset()


def test_the_body_splits_where_the_page_breaks_a_paragraph_the_model_ran_on() -> None:
    tokens, labels = page(COLUMN)
    body = build_body(tokens, labels)
    texts = [p.text for p in body.sections[0].paragraphs]
    assert len(texts) == 2
    assert texts[0].endswith("short line of text.")
    assert texts[1].startswith("The second one starts")


def test_a_start_the_model_saw_inside_a_sentence_goes_on() -> None:
    tokens, labels = page([
        ("I-<paragraph>", "A paragraph that the column breaks in the middle of", True),
        ("I-<paragraph>", "its sentence, where the model saw a new paragraph.", False),
        ("I-<paragraph>", "A real new paragraph begins here with its capital.", False),
    ])
    texts = [p.text for p in build_body(tokens, labels).sections[0].paragraphs]
    assert texts == [
        "A paragraph that the column breaks in the middle of its sentence, where the "
        "model saw a new paragraph.",
        "A real new paragraph begins here with its capital."]


def test_an_equation_label_keeps_its_brackets() -> None:
    tokens, labels = page([
        ("I-<paragraph>", "The energy is", False),
        ("I-<equation>", "E = m c 2 (", False),
        ("I-<equation_label>", "1", False),
        ("I-<equation>", ")", False),
        ("I-<paragraph>", "where c is the speed of light.", False),
    ])
    blocks = build_body(tokens, labels).sections[0].blocks
    formulas = [b for b in blocks if isinstance(b, Formula)]
    assert [(f.text, f.label) for f in formulas] == [("E = m c 2", "(1)")]
