"""The offline demo, run on the process's services: the demo requests crawled
from the loopback demo site (``sandcrawler.demo``), their results persisted,
and a report of where everything went."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from sandcrawler.app.services import Services
from sandcrawler.db.engine import begin
from sandcrawler.db.persist import write_tables
from sandcrawler.demo import REQUESTS
from sandcrawler.ingest.references import RefsWriter
from sandcrawler.ingest.worker import request_row
from sandcrawler.models.fileset import IngestResultView
from sandcrawler.models.ingest import IngestRequest


@dataclass(slots=True)
class DemoReport:
    results: list[dict[str, Any]]
    statuses: Counter[str] = field(default_factory=Counter)
    #: one block of "what to look at" lines per hit
    hits: list[list[str]] = field(default_factory=list)


def run_demo(services: Services) -> DemoReport:
    """Ingest the demo requests (the caller has routed the demo hosts to the demo
    site), persist the results, and say where everything is."""
    ingester = services.file_ingester()
    try:
        results = ingester.ingest_batch([IngestRequest(**r) for r in REQUESTS])
    finally:
        ingester.close()
    outputs: list[dict[str, dict[str, Any]]] = []
    for result in results:
        out = {"ingest_file_result": IngestResultView.model_validate(result).file_row()}
        if (row := request_row(result["request"])) is not None:
            out["ingest_request"] = row
        outputs.append(out)
    with begin(services.engine) as conn:
        write_tables(conn, outputs)
    report = DemoReport(results, Counter(r["status"] for r in results))
    refs = RefsWriter(services.engine)
    store = services.settings.store.url
    for result in results:
        if result["hit"]:
            report.hits.append(_where(services, refs, store, result))
    return report


def _where(services: Services, refs: RefsWriter, store: str,
           result: dict[str, Any]) -> list[str]:
    request = result["request"]
    lines = [f"{request['ingest_type']} {request['base_url']}: {result['status']}",
             f"  terminal   {result['terminal']['terminal_url']}"]
    if cdx := result.get("cdx"):
        lines.append(f"  WARC       {store}/{cdx['warc_path']} (offset {cdx['warc_offset']})")
    processing = result.get("processing") or {}
    uuid = processing.get("uuid")
    if uuid and (entry := services.catalogue.get(uuid)) is not None:
        lines.append(f"  catalogue  {uuid} (sandcrawler catalogue get {uuid})")
        paths = services.catalogue.paths(entry)
        thumbs = [p for kind, p in paths.items() if kind.startswith("thumb-")]
        primary = [p for kind, p in paths.items() if kind in ("pdf", "nxml", "html")]
        lines += [f"  stored     {store}/{p}" for p in primary]
        if thumbs:
            lines.append(f"  thumbnail  {store}/{sorted(thumbs)[0]} (+{len(thumbs) - 1} more)")
        count = len(refs.get(uuid) or [])
        lines.append(f"  references {count} parsed into grobid_refs (source document, {uuid})")
    return lines
