"""Pipeline workers of fileset ingest: requests → results, and results → SQL rows."""

from __future__ import annotations

from collections.abc import Callable

import orjson

from sandcrawler.core.work import Item, Outcome, RecordWorker, Rows, TableRow, decode_record
from sandcrawler.fileset.ingest import SKIP_INGEST_TYPE, FilesetIngester, file_result_of
from sandcrawler.records.fileset import (
    DatasetFileResult,
    FilesetIngestResult,
    IngestRequest,
    IngestResultView,
)
from sandcrawler.records.ingest import FileIngestResult
from sandcrawler.records.statuses import FilesetStatus


def parse_request(data: bytes) -> IngestRequest:
    return decode_record(data, IngestRequest, "an ingest request", FilesetStatus.BAD_REQUEST)[1]


def parse_result(data: bytes) -> IngestResultView:
    """An ingest result, fileset or file, from any producer (``IngestResultView``);
    ``bad-result`` saying what is wrong when it is not one."""
    return decode_record(data, IngestResultView, "an ingest result", FilesetStatus.BAD_RESULT)[1]


class IngestFilesetWorker(RecordWorker):
    """Ingest requests of dataset type; other types are skipped (the file ingest
    worker's). Every result is the output, a failed ingest included: its status
    is the news (``kind`` error only puts its message on stderr)."""

    def __init__(self, ingester: FilesetIngester) -> None:
        self.ingester = ingester

    def process(self, item: Item) -> Outcome:
        out = self.ingester.ingest(parse_request(item.data))
        if out.status == SKIP_INGEST_TYPE:  # another worker's request: nothing to publish
            return Outcome(where=item.where, status=out.status, kind="skip")
        return Outcome(where=item.where, status=out.status,
                       kind="ok" if out.result.hit else "error",
                       error=out.error or out.status, output=out.result)

    def close(self) -> None:
        self.ingester.close()


#: an ingest result, as a message: each is JSON once, in the sink
IngestResult = FilesetIngestResult | DatasetFileResult | FileIngestResult
Messages = list[tuple[str, IngestResult]]


def result_messages(fileset_topic: str,
                    file_topic: str) -> Callable[[FilesetIngestResult], Messages]:
    """Kafka routing of a fileset result: to the fileset results topic, and its
    ingest-file result (a ``*-file`` success) to the file results topic."""

    def route(result: FilesetIngestResult) -> Messages:
        messages: Messages = [(fileset_topic, result)]
        if (file_result := file_result_of(result)) is not None:
            messages.append((file_topic, file_result))
        return messages

    return route


def result_key(result: IngestResult) -> str | bytes | None:
    """Messages are keyed by the request's base URL: one partition per URL, so
    results of the same request stay in order (file ingest results too). A bad
    request's base_url may be a number or a list: its JSON text is the key."""
    base_url = result.request.get("base_url")
    if base_url is None or isinstance(base_url, str):
        return base_url
    return orjson.dumps(base_url)


class PersistIngestFilesetWorker(RecordWorker):
    """Fileset results (and ingest-file results) → ``ingest_file_result`` rows
    (status and landing-page terminal, as for file ingest) and, when the platform
    was identified, ``ingest_fileset_platform`` rows. Results are read as an
    ``IngestResultView``: other producers' too, and ``bad-result`` for a line
    that is not one."""

    def process(self, item: Item) -> Outcome:
        result = parse_result(item.data)
        rows: list[TableRow] = [result.file_row()]
        if (platform := result.platform_row()) is not None:
            rows.append(platform)
        return Outcome(where=item.where, status=FilesetStatus.SUCCESS, output=Rows(tuple(rows)))
