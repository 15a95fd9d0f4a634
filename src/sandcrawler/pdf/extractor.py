"""The embedded extraction cascade (``docparse``) on PDFs on disk, each run in
the sandbox with a time and a memory limit (docs/extraction.md): a file that
makes the cascade loop, allocate without bound or crash gets the sandbox's
status (``timeout``, ``memory-limit``, ``crashed``) and the next file goes on.

Shared by ``sandcrawler extract`` (nothing stored) and ``PdfProcessor``
(``process`` and file ingest: the ``extract0`` family, the catalogue, the
references).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sandcrawler.config import ExtractSettings
from sandcrawler.docparse.assembly.cascade import extract_document
from sandcrawler.process.sandbox import Sandbox, SandboxError
from sandcrawler.records.extraction import USABLE, Extraction, ExtractRequest
from sandcrawler.records.statuses import SandboxStatus

if TYPE_CHECKING:
    from sandcrawler.match.consolidate import Consolidation

#: the PDF table's family for the cascade (``storage.pdftable``): a family of its
#: own beside ``grobid0``, its column names unique across families
EXTRACT_FAMILY = "extract0"


def extraction_cells(found: Extraction) -> dict[str, Any]:
    """The ``extract0`` family's cells."""
    cells: dict[str, Any] = {"xstatus": str(found.status), "xinfo": found.info()}
    if found.status in USABLE:
        header = found.header_json()
        if found.abstract:
            header["abstract"] = found.abstract
        cells["xheader"] = header
        cells["xrefs"] = found.references_json()
    return cells


class Extractor:
    def __init__(self, settings: ExtractSettings, *, timeout: float | None = None,
                 memory_limit_mb: int | None = None, citation_model: Path | None = None) -> None:
        self.settings = settings
        self.citation_model = citation_model
        self.timeout = timeout or settings.timeout
        self.sandbox = Sandbox(memory_limit=(memory_limit_mb or settings.memory_limit_mb)
                               * 2**20)

    def extract(self, path: str, request: ExtractRequest | None = None) -> Extraction:
        try:
            return self.sandbox.call(extract_document, path, self.settings,
                                     self.citation_model, request, timeout=self.timeout)
        except SandboxError as e:
            return Extraction(SandboxStatus(e.status), error=str(e))

    def close(self) -> None:
        self.sandbox.close()


@dataclass(frozen=True, slots=True)
class ExtractedFile:
    """One ``sandcrawler extract`` line: the path and what the cascade found."""

    path: str
    extraction: Extraction
    #: ``--consolidate``: what matching the header against the catalog did (None:
    #: no work matched)
    consolidation: Consolidation | None = None
    consolidated: bool = False

    def to_json(self) -> dict[str, Any]:
        out = self.extraction.to_json(self.path)
        if self.consolidated:
            out["consolidation"] = None if self.consolidation is None \
                else self.consolidation.to_json()
        return out
