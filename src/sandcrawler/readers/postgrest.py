"""``Reader`` over the read-only PostgREST API (``sandcrawler db api``; docs/api.md).

The queries are the original system's shapes, e.g.
``/ingest_file_result?ingest_type=eq.pdf&base_url=eq.<url>`` and
``/grobid_refs?source=eq.crossref&source_id=eq.<doi>``; a batch of
existing-result checks is one ``base_url=in.(...)`` request per few dozen URLs.
An unreachable or failing API is ``DatabaseUnavailable`` (the database behind
it is what is missing); a refusal (4xx) is a ``ConfigError`` saying what to run.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, cast
from urllib.parse import quote

import orjson

from sandcrawler.core.errors import ConfigError, DatabaseUnavailable, RecordError
from sandcrawler.db.queries import (
    CAPTURE_ORDER,
    CITED_BY_ORDER,
    Key,
    Row,
    citing_key,
    lower_doi,
    normalise_row,
)
from sandcrawler.db.rows import (
    CatalogueRow,
    CitationTableRow,
    CrossrefWithRefsRow,
    GrobidRefsRow,
    IngestFileResultRow,
)
from sandcrawler.records.capture import CdxRecord
from sandcrawler.web.http.fetch import HttpFetcher

#: most characters of the URLs of one ``in.(...)`` filter (servers cap request lines)
MAX_IN_CHARS = 6000
#: "the latest capture of a URL" as PostgREST's ``order=``: the SQL readers' own order
LATEST_CAPTURE_ORDER = ",".join(f"{name}.desc" for name in CAPTURE_ORDER)
_CONTENT_RANGE = re.compile(r"^(?:\*|\d+-\d+)/(\d+)$")


def eq(value: str) -> str:
    """A PostgREST ``eq.`` filter value, percent-encoded."""
    return "eq." + quote(value, safe="")


def in_list(values: Iterable[str]) -> str:
    """A PostgREST ``in.(...)`` filter: each value double-quoted (commas, parentheses
    and quotes inside are then plain), percent-encoded."""
    quoted = ",".join('"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"' for v in values)
    return "in." + quote(f"({quoted})", safe="")


class PostgrestReader:
    """``Reader`` over HTTP; ``fetcher`` belongs to the caller."""

    def __init__(self, base_url: str, fetcher: HttpFetcher) -> None:
        self.base_url = base_url.rstrip("/")
        self.fetcher = fetcher

    def _get(self, relation: str, query: str) -> list[Row]:
        url = f"{self.base_url}/{relation}?{query}"
        try:
            status, body = self.fetcher.get_json(url)
        except RecordError as e:
            raise DatabaseUnavailable(f"PostgREST at {self.base_url} unavailable: {e}") from None
        return self._rows(relation, status, body)

    def _get_counted(self, relation: str, query: str) -> tuple[int, list[Row]]:
        """The rows and how many rows match in all: PostgREST counts them when asked
        (``Prefer: count=exact``) and says so in ``Content-Range`` (``0-49/123``,
        ``*/0`` when the page is empty), so a page and its total are one request."""
        url = f"{self.base_url}/{relation}?{query}"
        try:
            opened = self.fetcher.open(url, headers={"Accept": "application/json",
                                                     "Prefer": "count=exact"})
            try:
                chunks: list[bytes] = []
                self.fetcher.stream_body(opened, chunks.append, 64 * 2**20)
            finally:
                opened.close()
        except RecordError as e:
            raise DatabaseUnavailable(f"PostgREST at {self.base_url} unavailable: {e}") from None
        try:
            body = orjson.loads(b"".join(chunks))
        except orjson.JSONDecodeError:
            body = None
        # a page of a counted set is 206 Partial Content, a page past its end 416;
        # each carries the count
        status = opened.status
        rows = [] if status == 416 else self._rows(relation, 200 if status == 206 else status,
                                                   body)
        found = _CONTENT_RANGE.match(opened.final.header("Content-Range") or "")
        if found is None:
            raise DatabaseUnavailable(f"PostgREST at {self.base_url} answered /{relation} "
                                      "without a count (Content-Range)")
        return int(found.group(1)), rows

    def _rows(self, relation: str, status: int, body: Any) -> list[Row]:
        if status == 200 and isinstance(body, list):
            return [normalise_row(relation, row) for row in body]
        detail = body.get("message") if isinstance(body, dict) else None
        what = f"PostgREST at {self.base_url} answered HTTP {status} to /{relation}" + (
            f" ({detail})" if detail else "")
        if 400 <= status < 500:
            raise ConfigError(f"{what}: is it set up by `sandcrawler db api` for this version "
                              "(`sandcrawler db upgrade` first)?")
        raise DatabaseUnavailable(what)

    def _one(self, relation: str, query: str) -> Row | None:
        rows = self._get(relation, query + "&limit=1")
        return rows[0] if rows else None

    def ingest_hits(self, keys: Iterable[Key]) -> dict[Key, IngestFileResultRow]:
        wanted = set(keys)
        urls = sorted({url for _, url in wanted})
        found: dict[Key, IngestFileResultRow] = {}
        for chunk in _chunks(urls, MAX_IN_CHARS):
            for row in self._get("ingest_file_result",
                                 f"hit=is.true&base_url={in_list(chunk)}"):
                key = (row["ingest_type"], row["base_url"])
                if key in wanted:
                    found[key] = cast(IngestFileResultRow, row)
        return found

    def ingest_file_result(self, ingest_type: str,
                           base_url: str) -> IngestFileResultRow | None:
        return cast("IngestFileResultRow | None", self._one("ingest_file_result",
                         f"ingest_type={eq(ingest_type)}&base_url={eq(base_url)}"))

    def capture(self, url: str) -> CdxRecord | None:
        row = self._one("web_cdx", f"url={eq(url)}&order={LATEST_CAPTURE_ORDER}")
        return None if row is None else CdxRecord.from_row(row)

    def document_by_sha1(self, sha1hex: str) -> list[CatalogueRow]:
        rows: list[Any] = self._get("catalogue", f"sha1={eq(sha1hex.lower())}&order=uuid")
        return rows

    def document_by_doi(self, doi: str) -> list[CatalogueRow]:
        rows: list[Any] = self._get("catalogue", f"doi={eq(lower_doi(doi))}&order=uuid")
        return rows

    def grobid_refs(self, source: str, source_id: str) -> GrobidRefsRow | None:
        if source == "crossref":
            source_id = lower_doi(source_id)
        return cast("GrobidRefsRow | None", self._one(
            "grobid_refs", f"source={eq(source)}&source_id={eq(source_id)}"))

    def crossref_with_refs(self, doi: str) -> CrossrefWithRefsRow | None:
        return cast("CrossrefWithRefsRow | None",
                    self._one("crossref_with_refs", f"doi={eq(lower_doi(doi))}"))

    def citations(self, citing: str) -> list[CitationTableRow]:
        rows = self._get("citation", f"citing={eq(citing_key(citing))}&order=ref_index")
        return [_citation(row) for row in rows]

    def cited_by(self, doi: str, *, offset: int = 0,
                 limit: int = 50) -> tuple[int, list[CitationTableRow]]:
        total, rows = self._get_counted(
            "citation", f"cited_doi={eq(lower_doi(doi))}&order={','.join(CITED_BY_ORDER)}"
                        f"&offset={offset}&limit={limit}")
        return total, [_citation(row) for row in rows]

    def close(self) -> None:
        """The fetcher belongs to the caller."""


def _citation(row: Row) -> CitationTableRow:
    # a double precision column comes back as a JSON number: 1.0 reads as int 1
    if isinstance(row.get("score"), int):
        row["score"] = float(row["score"])
    return cast(CitationTableRow, row)


def _chunks(values: list[str], max_chars: int) -> Iterable[list[str]]:
    chunk: list[str] = []
    size = 0
    for value in values:
        cost = len(quote(value, safe="")) + 8
        if chunk and size + cost > max_chars:
            yield chunk
            chunk, size = [], 0
        chunk.append(value)
        size += cost
    if chunk:
        yield chunk

