"""Workers for Crossref works and grobid_refs rows.

- ParseCrossrefRefsWorker: work -> grobid_refs row (``parse-crossref-refs``)
- PersistCrossrefWorker:   work -> crossref row (+ grobid_refs row with a parser)
- PersistGrobidRefsWorker: grobid_refs JSON line -> validated grobid_refs row

Statuses: ``RefsStatus`` (success, empty and success-no-refs are ok; the rest
errors), the parser's ``ParserStatus``, ``missing-doi`` / ``bad-doi``, and the
pipeline's; the table is in docs/refs.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from sandcrawler.citations.base import CitationParser, biblio_to_dict, parse_within_limit
from sandcrawler.core.errors import CitationParseError, RecordError
from sandcrawler.core.jsontext import RawJSON
from sandcrawler.core.work import (
    Item,
    Outcome,
    RecordWorker,
    Rows,
    TableRow,
    decode_json,
    decode_record,
)
from sandcrawler.records.refs import CrossrefRow, GrobidRefsRow, ParsedRefs
from sandcrawler.records.statuses import RefsStatus
from sandcrawler.refs.crossref_works import (
    SelectedRef,
    select_references,
    unwrap_work,
    work_doi,
    work_indexed,
)

SOURCE = "crossref"


@dataclass(slots=True)
class _Work:
    item: Item
    work: dict[str, Any]  # Crossref's JSON, read here by key only (crossref.py)
    bare: bool  # the line is the work itself, not an API envelope around it
    doi: str
    indexed: str | None
    refs: list[SelectedRef]


def _read_work(item: Item, with_refs: bool = True) -> _Work:
    obj = decode_json(item.data)
    work = unwrap_work(obj)
    doi = work_doi(work)
    refs = select_references(work) if with_refs else []
    return _Work(item, work, work is obj, doi, work_indexed(work), refs)


def _parse_works(
    parser: CitationParser, works: list[_Work]
) -> list[list[dict[str, Any]] | CitationParseError]:
    """refs_json for each work (``ParsedRefs.refs_json``), parsing all the works'
    references in one parser call."""
    todo = [w for w in works if w.refs]
    parsed = iter(parse_within_limit(parser, [[r.text for r in w.refs] for w in todo])
                  if todo else [])
    results: list[list[dict[str, Any]] | CitationParseError] = []
    for w in works:
        biblios = next(parsed) if w.refs else []
        if isinstance(biblios, CitationParseError):
            results.append(biblios)
            continue
        refs_json = []
        for ref, biblio in zip(w.refs, biblios, strict=True):
            # The parser never saw the keys: weave them back by position, which
            # the parser guarantees (count and order are checked there).
            biblio.id = ref.key
            biblio.index = ref.index
            refs_json.append(biblio_to_dict(biblio))
        results.append(refs_json)
    return results


def row_key(row: ParsedRefs) -> str:
    """A grobid_refs row's Kafka message key: its DOI, one partition per work."""
    return row.source_id


def _grobid_refs_row(w: _Work, refs_json: list[dict[str, Any]]) -> ParsedRefs:
    return ParsedRefs(source=SOURCE, source_id=w.doi, source_ts=w.indexed, refs_json=refs_json)


class _WorksWorker:
    """Reads a batch of works (per-record errors become outcomes) and hands the good ones on."""

    def __init__(self, parser: CitationParser | None) -> None:
        self.parser = parser

    def process_batch(self, items: list[Item]) -> list[Outcome]:
        read: list[_Work | Outcome] = []
        for item in items:
            try:
                w = _read_work(item, with_refs=self.parser is not None)
                self.check(w)
                read.append(w)
            except RecordError as e:
                read.append(Outcome.failed(item.where, e))
        works = [r for r in read if isinstance(r, _Work)]
        refs = iter(_parse_works(self.parser, works) if self.parser else [None] * len(works))
        outcomes = []
        for r in read:
            if isinstance(r, Outcome):
                outcomes.append(r)
                continue
            parsed = next(refs)
            if isinstance(parsed, CitationParseError):
                outcomes.append(Outcome.failed(r.item.where, parsed))
                continue
            try:
                outcomes.append(self.outcome(r, parsed))
            except RecordError as e:
                outcomes.append(Outcome.failed(r.item.where, e))
        return outcomes

    def check(self, w: _Work) -> None:
        pass

    def outcome(self, w: _Work, refs: list[dict[str, Any]] | None) -> Outcome:
        """``refs``: the work's parsed references' refs_json (None: no parser)."""
        raise NotImplementedError

    def close(self) -> None:
        if self.parser is not None:
            self.parser.close()


class ParseCrossrefRefsWorker(_WorksWorker):
    def __init__(self, parser: CitationParser) -> None:
        super().__init__(parser)

    def outcome(self, w: _Work, refs: list[dict[str, Any]] | None) -> Outcome:
        assert refs is not None
        return Outcome(
            where=w.item.where,
            status=RefsStatus.SUCCESS if w.refs else RefsStatus.EMPTY,
            output=_grobid_refs_row(w, refs),
        )


class PersistCrossrefWorker(_WorksWorker):
    """Output for the database sink: the work's ``crossref`` row, and its
    ``grobid_refs`` row when references are parsed."""

    def check(self, w: _Work) -> None:
        if w.indexed is None:
            raise RecordError("work has no indexed date-time", status=RefsStatus.MISSING_INDEXED)

    def outcome(self, w: _Work, refs: list[dict[str, Any]] | None) -> Outcome:
        assert w.indexed is not None  # check() refused the work otherwise
        # A bare work is stored from its own line: no second serialisation.
        try:
            record = RawJSON(w.item.data.decode() if w.bare else orjson.dumps(w.work).decode())
        except TypeError as e:  # orjson: nested deeper than it writes (255 levels)
            raise RecordError(f"the work cannot be stored as JSON: {e}",
                              status=RefsStatus.BAD_WORK) from None
        rows: tuple[TableRow, ...] = (CrossrefRow(doi=w.doi, indexed=w.indexed, record=record),)
        status = RefsStatus.SUCCESS
        if refs is not None:
            rows += (_grobid_refs_row(w, refs),)
            status = RefsStatus.SUCCESS if w.refs else RefsStatus.SUCCESS_NO_REFS
        return Outcome(where=w.item.where, status=status, output=Rows(rows))


class PersistGrobidRefsWorker(RecordWorker):
    def process(self, item: Item) -> Outcome:
        _, row = decode_record(item.data, GrobidRefsRow, "a grobid_refs row",
                               RefsStatus.BAD_ROW)
        return Outcome(where=item.where, status=RefsStatus.SUCCESS, output=Rows((row,)))
