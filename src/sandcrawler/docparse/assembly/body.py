"""The fulltext model's labelled body tokens to a :class:`Body`: a section at
each ``<section>`` (its head), paragraphs and list items with their callouts
in place, formulas with their labels, and the token runs labelled
``<figure>`` / ``<table>`` handed to the figure and table models
(docs/extraction.md, "Full text").

A paragraph goes on across a callout, a figure or a table: GROBID labels "as
shown in [3] the" as paragraph, citation marker, paragraph, and an
``I-<paragraph>`` starts a new one only after paragraph text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from sandcrawler.docparse.assembly.paragraphs import ends_sentence, printed_breaks, starts_sentence
from sandcrawler.docparse.layout.elements import Token
from sandcrawler.docparse.layout.text import join_spans, join_tokens, line_spans
from sandcrawler.records.fulltext import (
    Body,
    Box,
    Callout,
    CalloutKind,
    Figure,
    Formula,
    Paragraph,
    Section,
)
from sandcrawler.tagging.scoring import BEGIN, fields

#: a figure or table from the tokens ``start:end`` of the body:
#: (start, end, kind "figure"|"table", id) -> Figure
ReadFigure = Callable[[int, int, str, str], Figure]

_MARKERS = {"<citation_marker>": CalloutKind.BIBR, "<figure_marker>": CalloutKind.FIGURE,
            "<table_marker>": CalloutKind.TABLE, "<equation_marker>": CalloutKind.FORMULA}
#: a head's number: "2", "2.1", "2.1.", "IV.", "A." before the title
#: an equation's run that is only the closing bracket of its label
_CLOSING = re.compile(r"\s*[)\]]\s*")
_NUMBER = re.compile(r"^((?:\d+\.)*\d+\.?|[IVXLC]+\.|[A-H]\.)\s+(?=\S)")


def build_body(tokens: Sequence[Token], labels: Sequence[str],
               read_figure: ReadFigure | None = None) -> Body:
    body = Body()
    section: Section | None = None
    # the open paragraph's tokens and its callouts' token ranges and kinds
    para: list[Token] = []
    marks: list[tuple[int, int, CalloutKind]] = []
    item = False

    def current() -> Section:
        # text before the first head goes into a section without one
        nonlocal section
        if section is None:
            section = _section(body, None)
        return section

    def close() -> None:
        nonlocal para, marks
        if para:
            current().blocks.append(paragraph(para, marks, item=item))
        para, marks = [], []

    counts = {"figure": 0, "table": 0, "formula": 0}
    last = ""
    breaks = printed_breaks(tokens)
    for label, start, end in fields(labels):
        run = tokens[start:end]
        begins = labels[start].startswith(BEGIN)
        if label in ("<paragraph>", "<item>"):
            # GROBID's rule: text after a callout, a figure or a table goes on
            # with the paragraph before it, whatever its label's I- says
            goes_on = last in _MARKERS or last in ("<figure>", "<table>")
            # ... and so does a start the model saw inside a sentence, which the
            # page does not show (a column's top, a lower-case word going on)
            if begins and para and not ends_sentence(para[-1].text) \
                    and not starts_sentence(run[0].text):
                goes_on = True
            if (begins and not goes_on) or item != (label == "<item>") or not para \
                    or start in breaks:
                close()
            item = label == "<item>"
            # a paragraph's end the page prints and the model missed
            cut = start
            for i in range(start + 1, end):
                if i in breaks:
                    para.extend(tokens[cut:i])
                    close()
                    cut = i
            para.extend(tokens[cut:end])
        elif label in _MARKERS:
            marks.append((len(para), len(para) + len(run), _MARKERS[label]))
            para.extend(run)
        elif label == "<section>":
            close()
            section = _section(body, run)
        elif label in ("<figure>", "<table>"):
            kind = label.strip("<>")
            figure_id = f"{'fig' if kind == 'figure' else 'tab'}_{counts[kind]}"
            counts[kind] += 1
            figure = read_figure(start, end, kind, figure_id) if read_figure is not None else \
                Figure(figure_id, kind, description=join_tokens(run), boxes=boxes_of(run))
            body.figures.append(figure)
        elif label == "<equation>":
            formula = _last_formula(section)
            text = join_tokens(run)
            if last == "<equation_label>" and formula is not None and formula.label \
                    and _CLOSING.fullmatch(text):
                # the ")" of "(3)" the model left with the equation
                formula.label += text
            else:
                close()
                current().blocks.append(Formula(f"formula_{counts['formula']}", text,
                                                boxes=boxes_of(run)))
                counts["formula"] += 1
        elif label == "<equation_label>":
            formula = _last_formula(section)
            if formula is not None and formula.label is None:
                formula.label = join_tokens(run)
                if formula.text.endswith("(") and not formula.label.startswith("("):
                    # ... and its "(": the label is printed whole
                    formula.text = formula.text[:-1].rstrip()
                    formula.label = "(" + formula.label
            else:
                para.extend(run)
        # <other>: running heads, page numbers, debris the model set apart
        if label != "<other>":
            last = label
    close()
    body.sections = [s for s in body.sections if s.head or s.blocks]
    return body


def paragraph(tokens: Sequence[Token], marks: Sequence[tuple[int, int, CalloutKind]],
              *, item: bool = False) -> Paragraph:
    text, spans = join_spans(tokens)
    callouts = []
    for first, last, kind in marks:
        start, end = spans[first][0], spans[last - 1][1]
        callouts.append(Callout(kind, text[start:end], start, end,
                                boxes=boxes_of(tokens[first:last])))
    boxes, box_spans = _line_boxes(tokens, spans)
    return Paragraph(text, callouts, boxes=boxes, box_spans=box_spans, item=item)


def _section(body: Body, run: Sequence[Token] | None) -> Section:
    if run is None:
        # text before the first head: a section without one
        if body.sections and body.sections[-1].head is None:
            return body.sections[-1]
        body.sections.append(Section(None))
        return body.sections[-1]
    head = join_tokens(run)
    number = None
    if m := _NUMBER.match(head):
        number, head = m.group(1).rstrip("."), head[m.end():]
    body.sections.append(Section(head, number, boxes=boxes_of(run)))
    return body.sections[-1]


def _last_formula(section: Section | None) -> Formula | None:
    if section is None or not section.blocks:
        return None
    last = section.blocks[-1]
    return last if isinstance(last, Formula) else None


def _lines(tokens: Sequence[Token]) -> list[list[int]]:
    """The tokens' indices cut into printed lines."""
    return [list(range(start, end)) for start, end in line_spans(tokens)]


def _box(tokens: Sequence[Token]) -> Box:
    x0 = min(t.x for t in tokens)
    y0 = min(t.y for t in tokens)
    x1 = max(t.x + t.width for t in tokens)
    y1 = max(t.y + t.height for t in tokens)
    return (tokens[0].page + 1, round(x0, 2), round(y0, 2), round(x1 - x0, 2),
            round(y1 - y0, 2))


def boxes_of(tokens: Sequence[Token]) -> list[Box]:
    """One box per printed line of ``tokens`` (GROBID's ``coords`` list)."""
    return [_box([tokens[i] for i in line]) for line in _lines(tokens)]


def _line_boxes(tokens: Sequence[Token], spans: Sequence[tuple[int, int]]
                ) -> tuple[list[Box], list[tuple[int, int]]]:
    boxes, box_spans = [], []
    for line in _lines(tokens):
        boxes.append(_box([tokens[i] for i in line]))
        box_spans.append((spans[line[0]][0], spans[line[-1]][1]))
    return boxes, box_spans
