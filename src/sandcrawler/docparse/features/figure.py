"""The figure and table models' feature rows: one row per token of a figure's
or a table's token run, 27 columns. GROBID's ``FigureParser`` and
``TableParser`` tag the rows its fulltext model was given for those tokens
(``FullTextParser.processFigures``/``processTables`` hand each model its
cluster's feature block), so a row here is the token's fulltext row
(``features.fulltext``); GROBID's ``FeaturesVectorFigure`` is never filled. The
columns: docs/extraction-models.md, "The figure and table models".
"""

from __future__ import annotations

from collections.abc import Sequence

from sandcrawler.docparse.features.fulltext import (
    FULLTEXT_COLUMNS,
    NO_CALLOUTS,
    Callouts,
    fulltext_rows,
)
from sandcrawler.docparse.features.lexicon import Lexicon
from sandcrawler.docparse.features.stream import TokenRows
from sandcrawler.docparse.layout.elements import Layout, Line, Token

#: the columns of a figure or table row: the fulltext row's
FIGURE_COLUMNS = FULLTEXT_COLUMNS

# the last body's rows: a document's figures are read one after the other
_Key = tuple[int, tuple[int, ...] | None, Callouts, int]
_CACHE: list[tuple[_Key, Layout, Sequence[Line] | None, TokenRows, dict[int, int]]] = []


def _body_rows(layout: Layout, body: Sequence[Line] | None, callouts: Callouts,
               lexicon: Lexicon | None) -> tuple[TokenRows, dict[int, int]]:
    key: _Key = (id(layout), None if body is None else tuple(map(id, body)), callouts,
                 id(lexicon))
    entry = _CACHE[0] if _CACHE else None
    # the objects are kept in the entry, so their ids cannot be reused meanwhile
    if entry is not None and entry[0] == key and entry[1] is layout:
        return entry[3], entry[4]
    lines = layout.lines() if body is None else body
    found = fulltext_rows(layout, lines, lexicon, callouts)
    where = {id(token): i for i, token in enumerate(found.tokens)}
    _CACHE[:] = [(key, layout, body, found, where)]
    return found, where


def figure_rows(layout: Layout, tokens: Sequence[Token], *, body: Sequence[Line] | None = None,
                callouts: Callouts = NO_CALLOUTS, lexicon: Lexicon | None = None) -> TokenRows:
    """The rows of a figure's or table's ``tokens`` (tokens of ``layout``, in
    order), and the token of each row: their rows among the fulltext rows of
    ``body`` (the lines the segmentation labelled body; by default every line
    of the layout, which moves the document-position column a little from
    GROBID's), with the document's reference ``callouts``. A token that has
    no fulltext row (not in ``body``) has none here. Callers that already hold
    the body's fulltext rows should slice those instead, as GROBID does."""
    found, where = _body_rows(layout, body, callouts, lexicon)
    kept: list[Token] = []
    rows: list[list[str]] = []
    for token in tokens:
        i = where.get(id(token))
        if i is not None:
            kept.append(token)
            rows.append(list(found.rows[i]))
    return TokenRows(kept, rows)
