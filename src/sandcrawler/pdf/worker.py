"""``sandcrawler process``: a file path in, its processing result out.

For each file: metadata in one pass (size, hashes, sniffed MIME type); for a PDF,
extraction in the sandbox (time and memory limits); then the primary file and
its thumbnails into the resource store under the document's UUID, the ``file``
and ``pdf0`` families into the PDF table, and the catalogue row refreshed. A
file whose ``pdf0`` status is already recorded is skipped (``exists``) unless
``force``: re-processing is idempotent either way, as every write is keyed by
the sha1.

Statuses: the extraction's (success, not-pdf, bad-pdf, encrypted, empty-pdf,
empty-page0, text-too-large, parse-error), the sandbox's (timeout,
memory-limit, crashed), ``exists``, and ``unreadable`` / ``not-a-file``.
"""

from __future__ import annotations

import os
from typing import Any

import orjson

from sandcrawler.errors import RecordError
from sandcrawler.filemeta import FileMeta, file_metadata
from sandcrawler.grobid import GrobidClient
from sandcrawler.pdf.extract import PdfExtract, extract_pdf
from sandcrawler.pdf.fulltext import grobid_fulltext, not_run
from sandcrawler.pipeline.records import Item, Outcome, RecordWorker
from sandcrawler.sandbox import Sandbox, SandboxError
from sandcrawler.storage.catalogue import Catalogue
from sandcrawler.storage.pdftable import PdfTable

#: extraction statuses that still give a usable document (stored and catalogued)
_STORED = {"success", "empty-page0", "text-too-large"}


def read_path(item: Item) -> tuple[str, str]:
    """(path to read, name to report): a line is a path, or a JSON object with
    ``path`` and optionally ``name`` (e.g. ``archive.zip!paper.pdf``)."""
    raw = item.data.strip()
    if raw.startswith(b"{"):
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError as e:
            raise RecordError(f"not JSON: {e}", status="bad-json") from None
        path = obj.get("path") if isinstance(obj, dict) else None
        if not isinstance(path, str) or not path:
            raise RecordError("record has no 'path'", status="missing-path")
        name = obj.get("name")
        name = name if isinstance(name, str) and name else path
        if obj.get("error"):
            raise RecordError(f"{name}: {obj['error']}", status="bad-zip-member")
        return path, name
    path = os.fsdecode(raw)
    return path, path


class ProcessPdfWorker(RecordWorker):
    def __init__(
        self,
        catalogue: Catalogue,
        table: PdfTable,
        *,
        force: bool = False,
        timeout: float = 120.0,
        memory_limit: int | None = 2 * 1024**3,
        grobid: GrobidClient | None = None,
        grobid_options: list[tuple[str, str]] | None = None,
        grobid_max_bytes: int = 256 * 2**20,
    ) -> None:
        self.catalogue = catalogue
        self.table = table
        self.grobid = grobid
        self.grobid_options = grobid_options or []
        self.grobid_max_bytes = grobid_max_bytes
        self.force = force
        self.timeout = timeout
        self.sandbox = Sandbox(memory_limit=memory_limit)

    def process(self, item: Item) -> Outcome:
        path, name = read_path(item)
        meta = file_metadata(path)
        result: dict[str, Any] = {"path": name, **meta.to_json()}
        if not self.force:
            done = self.table.get(meta.sha1hex, ["pdf0:pdf_status"])
            if done is not None:
                result.update(status="exists", pdf_status=done.cells["pdf0"]["pdf_status"])
                return Outcome(item.where, "exists", kind="skip", output=result)
        try:
            extracted = (
                self.sandbox.call(extract_pdf, path, timeout=self.timeout)
                if meta.mimetype == "application/pdf"
                else PdfExtract("not-pdf", error=f"the file is {meta.mimetype}")
            )
        except SandboxError as e:
            extracted = PdfExtract(e.status, error=str(e))
        result.update(self._store(path, meta, extracted))
        kind = "ok" if extracted.status in _STORED else (
            "skip" if extracted.status == "not-pdf" else "error")
        return Outcome(item.where, extracted.status, kind=kind, output=result,
                       error=extracted.error if kind == "error" else None)

    def _store(self, path: str, meta: FileMeta, out: PdfExtract) -> dict[str, Any]:
        summary: dict[str, Any] = {"status": out.status, "error": out.error}
        cells: dict[str, dict[str, Any]] = {
            "file": {"size": meta.size, "mime": meta.mimetype},
            "pdf0": {"pdf_status": out.status, "pdf_meta": out.to_json()},
        }
        if out.text is not None:
            cells["pdf0"]["text"] = out.text
        if out.status in _STORED:
            grobid0, tei = self._fulltext(path, meta)
            cells["grobid0"] = grobid0
            secondary = dict(out.thumbnails)
            if tei is not None:
                secondary["grobid-tei"] = tei.encode("utf-8")
            entry = self.catalogue.add_file(
                path, kind="pdf", sha1=meta.sha1hex, metadata=_metadata(out, grobid0),
                resources=secondary,
            )
            summary.update(uuid=entry.uuid, resources=list(entry.resources),
                           grobid_status=grobid0["status"]["status"],
                           grobid_quality=grobid0.get("quality"))
        # The table last: its pdf0 row is what marks the file as done.
        self.table.put(meta.sha1hex, cells)
        summary.update(page_count=out.page_count, word_count=out.word_count,
                       pdf_version=out.pdf_version)
        return summary

    def _fulltext(self, path: str, meta: FileMeta) -> tuple[dict[str, Any], str | None]:
        if self.grobid is None:
            return not_run("no GROBID URL configured"), None
        if meta.size > self.grobid_max_bytes:
            limit = self.grobid_max_bytes / 2**20
            return {"status": {"status": "too-large",
                               "error": f"over the {limit:g} MB limit for GROBID"}}, None
        with open(path, "rb") as f:
            pdf = f.read()
        return grobid_fulltext(self.grobid, pdf, self.grobid_options)

    def close(self) -> None:
        self.sandbox.close()
        if self.grobid is not None:
            self.grobid.close()


def _metadata(out: PdfExtract, grobid0: dict[str, Any]) -> dict[str, Any]:
    """Header metadata: GROBID's when it found a header, else the PDF's own."""
    meta: dict[str, Any] = {}
    header = grobid0.get("metadata") if grobid0.get("quality") in ("good", "marginal") else None
    if header:
        if header.get("title"):
            meta["title"] = [header["title"]]
        if header.get("authors"):
            meta["author"] = [
                {"given": a.get("given_name"), "family": a.get("surname"),
                 "name": a.get("full_name")} for a in header["authors"]
            ]
        if header.get("doi"):
            meta["DOI"] = header["doi"]
        if header.get("abstract"):
            meta["abstract"] = header["abstract"]
        meta["metadata_source"] = "grobid"
    else:
        title = out.xmp.get("title") or out.info.get("title")
        if title:
            meta["title"] = [title]
        author = out.xmp.get("creator") or out.info.get("author")
        if author:
            meta["pdf_author"] = author
        if out.xmp.get("doi"):
            meta["DOI"] = out.xmp["doi"]
        meta["metadata_source"] = "pdf"
    meta["pdf"] = out.to_json()
    return meta
