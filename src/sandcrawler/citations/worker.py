"""``citations parse`` as a pipeline worker: one reference per input line.

A line is a JSON object with ``unstructured`` (``id``/``key`` and ``index`` are
carried over), a JSON string, or plain text. A line that starts with ``"`` but
is not a JSON string is plain text (references often open with a quoted title);
one that starts with ``{`` must be a JSON object. Statuses: ``success`` (some field
found), ``empty`` (nothing found; the biblio keeps ``unstructured``), and
``bad-utf8``, ``bad-json``, ``missing-unstructured`` for unusable lines.
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson
from grobid_tei_xml.types import GrobidBiblio

from sandcrawler.citations.base import (
    MAX_CITATION_CHARS,
    CitationParser,
    ParsedCitation,
    parse_within_limit,
)
from sandcrawler.core.errors import CitationParseError, RecordError
from sandcrawler.core.work import Item, Outcome, decode_json
from sandcrawler.records.statuses import CitationStatus, PipelineStatus


@dataclass(frozen=True, slots=True)
class Reference:
    """One input line's reference string, and the ids it carries over to its biblio."""

    text: str
    id: str | None = None
    index: int | None = None


def read_reference(data: bytes) -> Reference:
    """One input line as its reference (a RecordError for an unusable line)."""
    stripped = data.strip()
    if stripped[:1] == b'"':
        try:
            obj = orjson.loads(stripped)
        except orjson.JSONDecodeError:
            obj = None
        if isinstance(obj, str):
            return Reference(obj)
    if stripped[:1] != b"{":
        try:
            return Reference(data.decode("utf-8").strip("\r\n"))
        except UnicodeDecodeError as e:
            raise RecordError(f"invalid UTF-8 at byte {e.start}",
                              status=PipelineStatus.BAD_UTF8) from None
    obj = decode_json(stripped)
    if isinstance(obj, str):
        return Reference(obj)
    text = obj.get("unstructured") if isinstance(obj, dict) else None
    if not isinstance(text, str):
        raise RecordError("JSON line has no string `unstructured`",
                          status=CitationStatus.MISSING_UNSTRUCTURED)
    ref_id = obj.get("id", obj.get("key"))
    index = obj.get("index")
    return Reference(text, None if ref_id is None else str(ref_id),
                     index if isinstance(index, int) else None)


class ParseCitationsWorker:
    def __init__(self, parser: CitationParser):
        self.parser = parser

    def process_batch(self, items: list[Item]) -> list[Outcome]:
        read: list[Reference | Outcome] = []
        for item in items:
            try:
                read.append(read_reference(item.data))
            except RecordError as e:
                read.append(Outcome.failed(item.where, e))
        texts = [r.text for r in read if not isinstance(r, Outcome)]
        parsed: list[GrobidBiblio | CitationParseError] = []
        if texts:
            whole = parse_within_limit(self.parser, [texts])[0]
            if isinstance(whole, CitationParseError):
                # one bad answer for the batch (GROBID): ask again string by string so
                # that only the strings at fault fail
                parsed = [r if isinstance(r, CitationParseError) else r[0]
                          for r in parse_within_limit(self.parser, [[t] for t in texts])]
            else:
                parsed = list(whole)
        results = iter(parsed)
        outcomes = []
        for item, r in zip(items, read, strict=True):
            if isinstance(r, Outcome):
                outcomes.append(r)
                continue
            biblio = next(results)
            if isinstance(biblio, CitationParseError):
                outcomes.append(Outcome.failed(item.where, biblio))
                continue
            if r.id is not None:
                biblio.id = r.id
            if r.index is not None:
                biblio.index = r.index
            status = (CitationStatus.TOO_LONG if len(r.text) > MAX_CITATION_CHARS
                      else CitationStatus.EMPTY if biblio.is_empty() else CitationStatus.SUCCESS)
            outcomes.append(Outcome(item.where, status, output=ParsedCitation(biblio)))
        return outcomes

    def close(self) -> None:
        self.parser.close()
