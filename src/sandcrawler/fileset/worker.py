"""Pipeline workers of fileset ingest: requests → results, and results → SQL rows."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from sandcrawler.errors import RecordError
from sandcrawler.fileset.ingest import SKIP_INGEST_TYPE, FilesetIngester, file_result_of
from sandcrawler.models.fileset import IngestRequest
from sandcrawler.models.statuses import FilesetStatus
from sandcrawler.work import Item, Outcome, RecordWorker, decode_json


def parse_request(data: bytes) -> IngestRequest:
    obj = decode_json(data)
    if not isinstance(obj, dict):
        raise RecordError("an ingest request is a JSON object", status=FilesetStatus.BAD_REQUEST)
    try:
        return IngestRequest.model_validate(obj)
    except ValidationError as e:
        problems = "; ".join(f"{'.'.join(str(p) for p in err['loc']) or 'request'}: "
                             f"{err['msg']}" for err in e.errors()[:3])
        raise RecordError(f"not an ingest request: {problems}",
                          status=FilesetStatus.BAD_REQUEST) from None


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
    was identified, ``ingest_fileset_platform`` rows."""

    def process(self, item: Item) -> Outcome:
        result = decode_json(item.data)
        request = result.get("request") if isinstance(result, dict) else None
        if not isinstance(request, dict) or not request.get("ingest_type") \
                or not request.get("base_url") or not isinstance(result.get("status"), str):
            raise RecordError("not an ingest result (needs request.ingest_type, "
                              "request.base_url and status)", status=FilesetStatus.BAD_RESULT)
        terminal = result.get("terminal") or {}
        key = {"ingest_type": request["ingest_type"], "base_url": request["base_url"]}
        common = {**key, "hit": bool(result.get("hit")), "status": result["status"] or None}
        output: dict[str, dict[str, Any]] = {"ingest_file_result": {
            **common,
            "terminal_url": terminal.get("terminal_url"),
            "terminal_dt": terminal.get("terminal_dt"),
            "terminal_status_code": terminal.get("terminal_status_code"),
            "terminal_sha1hex": terminal.get("terminal_sha1hex"),
        }}
        if all(result.get(k) for k in ("platform_name", "platform_domain", "platform_id")):
            output["ingest_fileset_platform"] = platform_row(common, result)
        return Outcome(where=item.where, status=FilesetStatus.SUCCESS, output=output)


def platform_row(common: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    bundle = result.get("fileset_bundle") or {}
    bundle_terminal = bundle.get("terminal") or {}
    web = str(result.get("ingest_strategy") or "").startswith("web-")
    return {
        **common,
        "platform_name": result["platform_name"],
        "platform_domain": result["platform_domain"],
        "platform_id": result["platform_id"],
        "ingest_strategy": result.get("ingest_strategy"),
        "total_size": result.get("total_size"),
        "file_count": result.get("file_count"),
        "archiveorg_item_name": result.get("archiveorg_item_name"),
        "archiveorg_item_bundle_path": bundle.get("archiveorg_bundle_path"),
        "web_bundle_url": bundle_terminal.get("terminal_url") if web else None,
        "web_bundle_dt": bundle_terminal.get("terminal_dt") if web else None,
        "manifest": result.get("manifest"),
    }
