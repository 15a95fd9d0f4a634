"""Pipeline workers of fileset ingest: requests → results, and results → SQL rows."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sandcrawler.fileset.ingest import SKIP_INGEST_TYPE, FilesetIngester, file_result_of
from sandcrawler.models.fileset import IngestRequest, IngestResultView
from sandcrawler.models.statuses import FilesetStatus
from sandcrawler.work import Item, Outcome, RecordWorker, decode_record


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
                       kind="ok" if out.result["hit"] else "error",
                       error=out.error or out.status, output=out.result)

    def close(self) -> None:
        self.ingester.close()


Messages = list[tuple[str, dict[str, Any]]]


def result_messages(fileset_topic: str,
                    file_topic: str) -> Callable[[dict[str, Any]], Messages]:
    """Kafka routing of a fileset result: to the fileset results topic, and its
    ingest-file result (a ``*-file`` success) to the file results topic."""

    def route(result: dict[str, Any]) -> Messages:
        messages = [(fileset_topic, result)]
        if (file_result := file_result_of(result)) is not None:
            messages.append((file_topic, file_result))
        return messages

    return route


def result_key(result: dict[str, Any]) -> str | None:
    """Messages are keyed by the request's base URL: one partition per URL, so
    results of the same request stay in order."""
    request = result.get("request") or {}
    return request.get("base_url")


class PersistIngestFilesetWorker(RecordWorker):
    """Fileset results (and ingest-file results) → ``ingest_file_result`` rows
    (status and landing-page terminal, as for file ingest) and, when the platform
    was identified, ``ingest_fileset_platform`` rows. Results are read as an
    ``IngestResultView``: other producers' too, and ``bad-result`` for a line
    that is not one."""

    def process(self, item: Item) -> Outcome:
        result = parse_result(item.data)
        output: dict[str, dict[str, Any]] = {"ingest_file_result": result.file_row()}
        if (platform := result.platform_row()) is not None:
            output["ingest_fileset_platform"] = platform
        return Outcome(where=item.where, status=FilesetStatus.SUCCESS, output=output)
