"""The offline demo, run on the process's services: the demo's catalog of
Crossref works persisted and indexed (``sandcrawler.demo.catalog``), the demo
requests crawled from the loopback demo site (``sandcrawler.demo``), each
document identified and its references resolved against that catalog, the
results persisted, and a report of where everything went.

The demo stores real DOIs and URLs with documents rendered for the demo, so
``sandcrawler ingest demo`` runs it in a data directory of its own (embedded
database and store), never the user's: ``demo_settings`` says which settings
that takes, ``look_command`` how to point another command at it."""

from __future__ import annotations

import shlex
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import orjson
from sqlalchemy import func, select

from sandcrawler.app.services import Services
from sandcrawler.config import CoreSettings
from sandcrawler.core.jsontext import RawJSON
from sandcrawler.db.engine import begin
from sandcrawler.db.persist import TABLES, upsert
from sandcrawler.db.schema import citation
from sandcrawler.demo import REQUESTS
from sandcrawler.demo.catalog import STAND_IN_PREFIX, demo_works
from sandcrawler.ingest.worker import PersistIngestFileWorker, record_results
from sandcrawler.match.resolving import citing_document
from sandcrawler.records.ingest import FileIngestResult
from sandcrawler.records.refs import CrossrefRow
from sandcrawler.refs.reading import RefsWriter

#: the demo's database file in its directory (the embedded default's name)
DATABASE_FILE = "sandcrawler.sqlite3"


@dataclass(slots=True)
class DemoReport:
    results: list[FileIngestResult]
    statuses: Counter[str] = field(default_factory=Counter)
    #: one block of "what to look at" lines per hit (the catalog's first)
    hits: list[list[str]] = field(default_factory=list)


def default_demo_dir(data_dir: Path) -> Path:
    """Beside the data directory, never in it: ``~/.local/share/sandcrawler-demo``
    for the default ``~/.local/share/sandcrawler``."""
    return data_dir.with_name(f"{data_dir.name}-demo")


def demo_settings(directory: Path) -> dict[str, str]:
    """The settings that put everything the demo writes in ``directory``: its
    data directory, and the embedded database and store there even when another
    database or store is configured."""
    directory = directory.expanduser().resolve()
    return {"data_dir": str(directory),
            "database_url": f"sqlite:///{directory / DATABASE_FILE}",
            "store_url": str(directory / "store")}


def look_command(settings: CoreSettings, command: str) -> str:
    """``command`` as a shell line reading what these settings hold: the data
    directory, and the database and store when they are not its embedded ones
    (``SANDCRAWLER_DATA_DIR=… sandcrawler serve``)."""
    env = {"SANDCRAWLER_DATA_DIR": str(settings.data_dir)}
    if settings.database.url != f"sqlite:///{settings.data_dir / DATABASE_FILE}":
        env["SANDCRAWLER_DATABASE_URL"] = settings.database.url
    if settings.store.url != str(settings.data_dir / "store"):
        env["SANDCRAWLER_STORE_URL"] = settings.store.url
    return " ".join([*(f"{k}={shlex.quote(v)}" for k, v in env.items()), command])


def persist_demo_catalog(services: Services) -> int:
    """The demo's Crossref works into the crossref table (an upsert: a rerun
    changes nothing), and the match index brought up to date; returns how many."""
    works = demo_works()
    rows = [CrossrefRow(w["DOI"].lower(), w["indexed"]["date-time"],
                        RawJSON(orjson.dumps(w).decode())).columns() for w in works]
    with begin(services.engine) as conn:
        upsert(conn, TABLES["crossref"], rows)
    services.sync_match_index()
    return len(works)


def run_demo(services: Services) -> DemoReport:
    """Persist the demo's catalog, ingest the demo requests (the caller has
    routed the demo hosts to the demo site), persist the results, and say where
    everything is, what each document was identified as and what its
    references matched."""
    works = persist_demo_catalog(services)
    ingester = services.file_ingester()
    try:
        results = ingester.ingest_batch(list(REQUESTS))
    finally:
        ingester.close()
    record_results(services.engine, PersistIngestFileWorker(), results)
    report = DemoReport(results, Counter(r.status for r in results))
    report.hits.append([f"catalog    {works} Crossref works persisted and indexed for the demo: "
                        f"the five articles (real DOIs) and works their references cite "
                        f"(stand-in DOIs {STAND_IN_PREFIX}.*)"])
    refs = RefsWriter(services.engine)
    for result in results:
        if result.hit:
            report.hits.append(_where(services, refs, result))
    return report


def _where(services: Services, refs: RefsWriter, result: FileIngestResult) -> list[str]:
    store = services.settings.store.url
    request = result.request
    lines = [f"{request['ingest_type']} {request['base_url']}: {result.status}"]
    if result.terminal is not None:
        lines.append(f"  terminal   {result.terminal.terminal_url}")
    if (cdx := result.cdx) is not None:
        lines.append(f"  WARC       {store}/{cdx.warc_path} (offset {cdx.warc_offset})")
    uuid = result.processing.uuid if result.processing is not None else None
    if uuid and (entry := services.catalogue.get(uuid)) is not None:
        get = look_command(services.settings, f"sandcrawler catalogue get {uuid}")
        lines.append(f"  catalogue  {uuid} ({get})")
        paths = services.catalogue.paths(entry)
        thumbs = [p for kind, p in paths.items() if kind.startswith("thumb-")]
        primary = [p for kind, p in paths.items() if kind in ("pdf", "nxml", "html")]
        lines += [f"  stored     {store}/{p}" for p in primary]
        if thumbs:
            lines.append(f"  thumbnail  {store}/{sorted(thumbs)[0]} (+{len(thumbs) - 1} more)")
        if "pdf" in paths:
            lines += _extracted(services, entry.sha1)
        lines += _identified(services, entry.sha1)
        if count := len(refs.get(uuid) or []):
            lines.append(f"  references {count} parsed into grobid_refs (source document, {uuid})")
            lines += _resolved(services, uuid, paths.get("references"))
        else:
            # what the page gives (citation_reference) or the file's own list (JATS,
            # GROBID, the extraction cascade)
            lines.append("  references none: the page has no citation_reference tags"
                         + ("; the PDF's were not extracted (extract.enabled)"
                            if "pdf" in paths and not services.settings.extract.enabled
                            else ""))
    return lines


def _extracted(services: Services, sha1: str | None) -> list[str]:
    """The ``extract0`` family in one line: the cascade's status, title and
    reference count."""
    row = services.pdftable.get(sha1, ["extract0"]) if sha1 else None
    cells = row.cells.get("extract0") if row is not None else None
    if not cells:
        return ["  extracted  not run (extract.enabled is off)"]
    header = cells.get("xheader") or {}
    title = header.get("title") or "no title"
    return [f"  extracted  {cells['xstatus']}: {title!r}, {len(header.get('authors') or [])} "
            f"author(s), {len(cells.get('xrefs') or [])} reference(s) (extract0, without "
            "GROBID)"]


def _identified(services: Services, sha1: str | None) -> list[str]:
    """The document's ``match0`` family in one line: what it was identified as,
    by which source, and what every source said."""
    row = services.pdftable.get(sha1, ["match0"]) if sha1 else None
    cells = row.cells.get("match0") if row is not None else None
    if not cells:
        return ["  identified not looked up (no catalog to match against)"]
    info = cells.get("minfo") or {}
    said = ", ".join(f"{s['source']} {s['status']}"
                     + (" (another printed DOI: not counted)" if s.get("used") is False else "")
                     for s in info.get("sources", []))
    doi = cells.get("doi") or "no DOI"
    return [f"  identified {cells['mstatus']} {doi} (match0; by {info.get('source')}; "
            f"sources: {said or 'none'})"]


def _resolved(services: Services, uuid: str, path: str | None) -> list[str]:
    """The document's citation rows counted by status, and its references resource."""
    with begin(services.engine) as conn:
        counts: dict[str, int] = dict(conn.execute(
            select(citation.c.status, func.count()).where(
                citation.c.citing == citing_document(uuid)).group_by(citation.c.status)).all())
    if not counts:
        return []
    summary = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    lines = [f"  resolved   {summary} (citation rows, citing {citing_document(uuid)})"]
    if path:
        lines.append(f"  resolved   {services.settings.store.url}/{path}")
    return lines
