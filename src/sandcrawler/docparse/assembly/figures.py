"""A figure's or a table's tokens, labelled by the figure or table model, to a
:class:`Figure`: its label, head, caption, a table's note, and a table's
content cut into rows and cells by where its tokens are on the page (no
model: tokens on one line are a row, a gap much wider than a space ends a
cell). What comes from which label: docs/extraction-models.md, "The figure and
table models".
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

from sandcrawler.docparse.crf.columns import ColumnModel
from sandcrawler.docparse.features.figure import figure_rows
from sandcrawler.docparse.features.fulltext import NO_CALLOUTS, Callouts
from sandcrawler.docparse.layout.elements import Layout, Line, Token
from sandcrawler.docparse.layout.text import join_tokens
from sandcrawler.records.fulltext import Box, Figure
from sandcrawler.tagging.scoring import fields

#: a gap between two tokens of a row wider than this many font sizes ends a
#: cell (a word space is about a quarter of one)
CELL_GAP = 0.75
_HEAD = frozenset(("<figure_head>", "<label>"))
_TRAILING = " \t.:;,|\u2013\u2014-"


def build_figure(tokens: Sequence[Token], labels: Sequence[str], *, kind: str,
                 id: str) -> Figure:
    """The figure (``kind`` "figure") or table (``kind`` "table") of
    ``tokens``, one label per token (GROBID's, with its ``I-`` marks): the
    first ``<label>`` field is the label ("3"), the ``<figure_head>`` and
    ``<label>`` tokens in order the head ("Figure 3", as GROBID puts the
    label in the head), the ``<figDesc>`` fields the description, the
    ``<note>`` fields a table's note, a table's ``<content>`` its rows (a
    figure's content, the text inside the drawing, is left out, as GROBID
    leaves it out of its TEI); ``<other>`` is dropped. ``boxes``: one box per
    page around all of the tokens."""
    if len(tokens) != len(labels):
        raise ValueError(f"{len(tokens)} tokens but {len(labels)} labels")
    label: str | None = None
    head: list[Token] = []
    description: list[str] = []
    notes: list[str] = []
    content: list[Token] = []
    for name, start, end in fields(labels):
        run = tokens[start:end]
        if name in _HEAD:
            head.extend(run)
            if name == "<label>" and label is None:
                label = _clean(join_tokens(run))
        elif name == "<figDesc>":
            description.append(join_tokens(run))
        elif name == "<note>":
            notes.append(join_tokens(run))
        elif name == "<content>":
            content.extend(run)
    return Figure(
        id=id,
        kind=kind,
        label=label,
        head=_clean(join_tokens(head)) if head else None,
        description=_joined(description),
        rows=table_rows(content) if kind == "table" else [],
        note=_joined(notes),
        boxes=figure_boxes(tokens),
    )


def read_figure(tokens: Sequence[Token], layout: Layout, model: ColumnModel, *, kind: str,
                id: str,
                rows: Sequence[Sequence[str]] | None = None,
                body: Sequence[Line] | None = None,
                callouts: Callouts = NO_CALLOUTS) -> Figure:
    """The figure or table of ``tokens`` (a run the fulltext model labelled
    ``<figure>`` or ``<table>``), labelled by ``model`` (the figure or table
    model) and built by :func:`build_figure`. ``rows``: the tokens' fulltext
    rows, one per token, when the caller has them (GROBID tags these); else
    they are computed (:func:`figure_rows`, over ``body`` with ``callouts``),
    and a token without a row is left out."""
    if rows is not None:
        if len(rows) != len(tokens):
            raise ValueError(f"{len(tokens)} tokens but {len(rows)} rows")
        kept, table = list(tokens), [list(row) for row in rows]
    else:
        kept, table = figure_rows(layout, tokens, body=body, callouts=callouts)
    if not kept:
        return Figure(id=id, kind=kind, boxes=figure_boxes(tokens))
    return build_figure(kept, model.tag(table), kind=kind, id=id)


def table_rows(tokens: Sequence[Token]) -> list[list[str]]:
    """A table's content tokens as rows of cells, by their places alone: taken
    top to bottom (pages in order) by their middles, a token is on the current
    row when its middle is within the row's height or the row's middle within
    its own (a raised or lowered mark too), else it starts the next; in a row,
    left to right, a gap wider than :data:`CELL_GAP` font sizes starts a new
    cell. A cell's text is its tokens joined as printed."""
    placed = [t for t in tokens if t.text.strip()]
    ordered = sorted(placed, key=lambda t: (t.page, t.y + t.height / 2, t.x))
    lines: list[list[Token]] = []
    top = bottom = 0.0
    for token in ordered:
        middle = token.y + token.height / 2
        if lines and token.page == lines[-1][0].page and (
                top <= middle <= bottom
                or token.y <= (top + bottom) / 2 <= token.y + token.height):
            lines[-1].append(token)
            top, bottom = min(top, token.y), max(bottom, token.y + token.height)
            continue
        lines.append([token])
        top, bottom = token.y, token.y + token.height
    out: list[list[str]] = []
    for line in lines:
        line.sort(key=lambda t: t.x)
        cells: list[list[Token]] = [[line[0]]]
        for before, token in pairwise(line):
            gap = token.x - (before.x + before.width)
            if gap > CELL_GAP * max(before.size, token.size, 1.0):
                cells.append([token])
            else:
                cells[-1].append(token)
        out.append([join_tokens(cell) for cell in cells])
    return out


def figure_boxes(tokens: Sequence[Token]) -> list[Box]:
    """One box per page around the tokens (of width) on it, pages in order."""
    pages: dict[int, list[Token]] = {}
    for token in tokens:
        if token.width > 0:
            pages.setdefault(token.page, []).append(token)
    boxes: list[Box] = []
    for page in sorted(pages):
        on = pages[page]
        x0, y0 = min(t.x for t in on), min(t.y for t in on)
        x1 = max(t.x + t.width for t in on)
        y1 = max(t.y + t.height for t in on)
        boxes.append((page + 1, round(x0, 2), round(y0, 2), round(x1 - x0, 2),
                      round(y1 - y0, 2)))
    return boxes


def _clean(text: str) -> str:
    return text.strip().rstrip(_TRAILING).strip()


def _joined(parts: list[str]) -> str | None:
    text = " ".join(p for p in parts if p)
    return text or None
