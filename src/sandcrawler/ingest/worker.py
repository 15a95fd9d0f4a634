"""Pipeline workers of ingest: requests → results (file ingest, and, for the
``ingest requests`` command, every type: datasets go to fileset ingest), and
file ingest results → SQL rows."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

import orjson
from sqlalchemy import Engine

from sandcrawler.core.errors import RecordError
from sandcrawler.core.work import (
    Item,
    Outcome,
    RecordWorker,
    Rows,
    TableRow,
    decode_json,
    decode_record,
)
from sandcrawler.db.engine import begin
from sandcrawler.db.persist import write_tables
from sandcrawler.fileset.ingest import FilesetIngester
from sandcrawler.ingest.file_ingest import FileIngester
from sandcrawler.records.fileset import FilesetIngestResult, IngestResultView
from sandcrawler.records.ingest import (
    FILE_INGEST_TYPES,
    FileIngestResult,
    IngestRequest,
    IngestRequestRow,
    IngestType,
)
from sandcrawler.records.statuses import IngestFileStatus


def parse_request(data: bytes) -> IngestRequest:
    return decode_record(data, IngestRequest, "an ingest request", IngestFileStatus.BAD_REQUEST)[1]


class IngestWorker:
    """Ingest requests → results. File types are crawled a batch at a time (one
    WARC file per batch); with a fileset ingester, ``dataset`` requests go to
    it, else they are skipped (the ingest-fileset worker's). Every result is an
    output, a miss included: its status is the news."""

    def __init__(self, files: FileIngester, fileset: FilesetIngester | None = None) -> None:
        self.files = files
        self.fileset = fileset

    def process_batch(self, items: list[Item]) -> list[Outcome]:
        outcomes: list[Outcome | None] = [None] * len(items)
        batch: list[tuple[int, IngestRequest]] = []
        for i, item in enumerate(items):
            try:
                request = parse_request(item.data)
            except RecordError as e:
                outcomes[i] = _bad_request(item, request_of(item.data), e)
                continue
            if request.ingest_type in FILE_INGEST_TYPES:
                batch.append((i, request))
            elif request.ingest_type == IngestType.DATASET and self.fileset is not None:
                out = self.fileset.ingest(request)
                outcomes[i] = _outcome(item, out.result)
            else:
                outcomes[i] = Outcome(item.where, IngestFileStatus.SKIP_INGEST_TYPE, kind="skip",
                                      error=f"ingest type {request.ingest_type!r} is not "
                                      "handled here")
        results = self.files.ingest_batch([r for _, r in batch]) if batch else []
        for (i, _), result in zip(batch, results, strict=True):
            outcomes[i] = _outcome(items[i], result)
        return [o for o in outcomes if o is not None]

    def close(self) -> None:
        self.files.close()
        if self.fileset is not None:
            self.fileset.close()


def request_of(data: bytes) -> dict[str, Any] | None:
    """The request object of a line that did not validate, when it is one: echoed
    as it came in its result (any producer's JSON object, so a mapping)."""
    try:
        obj = decode_json(data)
    except RecordError:
        return None
    return obj if isinstance(obj, dict) else None  # as it came: echoed in its result


def _bad_request(item: Item, raw: dict[str, Any] | None, e: RecordError) -> Outcome:
    """A request that is not one still gets a result, so whoever sent it learns
    why. A record that is not a JSON object (not JSON, not UTF-8, a list) has no
    request to echo: its result has an empty one, and the message says where the
    record is (a topic's partition and offset, a file's line) so that it can be
    found; it has no base_url, so its message has no key. Nothing was tried: the
    result has no ``hops``."""
    message = str(e) if raw is not None else f"{e} (record at {item.where})"
    result = FileIngestResult(hit=False, status=e.status,
                              request=raw if raw is not None else {}, hops=None,
                              error_message=message)
    return Outcome(item.where, e.status, kind="error", output=result, error=str(e))


def _outcome(item: Item, result: FileIngestResult | FilesetIngestResult) -> Outcome:
    if result.status == IngestFileStatus.SKIP_INGEST_TYPE:
        return Outcome(item.where, result.status, kind="skip", error=result.error_message)
    return Outcome(item.where, result.status, kind="ok" if result.hit else "error",
                   error=result.error_message or result.status, output=result)


class PersistIngestFileWorker(RecordWorker):
    """File ingest results → ``ingest_file_result`` rows (one per request, the
    latest wins) and ``ingest_request`` rows (for requests that name their
    ``link_source`` and ``link_source_id``: the original system's key)."""

    def process(self, item: Item) -> Outcome:
        raw, result = decode_record(item.data, IngestResultView, "an ingest result",
                                    IngestFileStatus.BAD_RESULT)
        rows: list[TableRow] = [result.file_row()]
        if (row := request_row(raw.get("request") or {})) is not None:
            rows.append(row)
        return Outcome(where=item.where, status=IngestFileStatus.SUCCESS, output=Rows(tuple(rows)))


def record_results(engine: Engine, worker: RecordWorker,
                   results: Iterable[FileIngestResult | FilesetIngestResult]) -> None:
    """Write results' rows as the persist command of ``worker`` writes them from
    the printed lines (``PersistIngestFileWorker``, ``PersistIngestFilesetWorker``):
    for the one-request commands and the demo, which record what they print. So
    each result is read back from its JSON, as that command reads it."""
    outputs = [worker.process(Item(where="a result",
                                   data=orjson.dumps(result.to_json()))).output
               for result in results]
    with begin(engine) as conn:
        write_tables(conn, [out for out in outputs if isinstance(out, Rows)])


def request_row(request: Mapping[str, Any]) -> IngestRequestRow | None:
    """The ``ingest_request`` row of a request echoed in a result (the JSON object
    as its producer wrote it, kept whole in the row's ``request`` column); None
    without its key fields."""
    link_source, link_source_id, ingest_type, base_url = (
        request.get(k) for k in ("link_source", "link_source_id", "ingest_type", "base_url"))
    if not (isinstance(link_source, str) and link_source and isinstance(link_source_id, str)
            and link_source_id and isinstance(ingest_type, str) and ingest_type
            and isinstance(base_url, str) and base_url):
        return None

    def text(name: str) -> str | None:
        value = request.get(name)
        return value if isinstance(value, str) and value else None

    return IngestRequestRow(
        link_source=link_source, link_source_id=link_source_id, ingest_type=ingest_type,
        base_url=base_url, ingest_request_source=text("ingest_request_source"),
        release_stage=text("release_stage"), created=datetime.now(UTC), request=request)
