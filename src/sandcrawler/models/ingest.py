"""Ingest requests (every type) and file ingest results.

The request is the original system's ingest request: one JSON object per line
or message, from many producers, so unknown fields are kept and echoed back in
the result. ``ingest_type`` picks the ingester: ``pdf``, ``xml`` (JATS) and
``html`` go to file ingest (``sandcrawler.ingest``), ``dataset`` to fileset
ingest (``sandcrawler.fileset``).

A file ingest result is the original's ``ingest-file-results`` object: ``hit``,
``status``, ``request``, ``hops`` (every URL from ``base_url`` to the terminal,
redirects and followed links), ``terminal``, ``file_meta``, ``cdx``,
``revisit_cdx``, ``html_biblio``; beyond it, ``processing`` (what was done with
the full text found) and ``error_message``.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from sandcrawler.models.base import Record
from sandcrawler.models.capture import CdxRecord
from sandcrawler.models.files import FileMeta, Terminal


class IngestType(StrEnum):
    PDF = "pdf"
    XML = "xml"
    HTML = "html"
    DATASET = "dataset"


#: the types file ingest crawls for
FILE_INGEST_TYPES = frozenset({IngestType.PDF, IngestType.XML, IngestType.HTML})


class IngestRequest(BaseModel):
    """An ingest request as the request topic carries it. Unknown fields are kept
    (requests come from many producers) and echoed back in the result."""

    model_config = ConfigDict(extra="allow")

    ingest_type: str = Field(min_length=1)
    base_url: str = Field(min_length=1)
    link_source: str | None = None
    link_source_id: str | None = None
    ingest_request_source: str | None = None
    release_stage: str | None = None
    fatcat: dict[str, Any] | None = None
    #: identifiers of the work: doi, pmcid, pmid, arxiv, ...
    ext_ids: dict[str, Any] | None = None
    edit_extra: dict[str, Any] | None = None
    force_recrawl: bool = False

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)


class Processing(Record):
    """``processing``: what was done with the full text found. ``status`` is the
    processor's (a PDF's extraction status, ``success`` for stored XML/HTML);
    ``uuid`` the catalogue document it is stored under."""

    model_config = ConfigDict(extra="allow", use_enum_values=True)

    kind: str
    status: str
    uuid: str | None = None
    resources: list[str] | None = None
    grobid_status: str | None = None
    #: references parsed into grobid_refs (source ``document``, the UUID)
    references: int | None = None
    error: str | None = None


class FileIngestResult(Record):
    hit: bool
    status: str
    request: dict[str, Any]
    hops: list[str] = Field(default_factory=list)
    terminal: Terminal | None = None
    file_meta: FileMeta | None = None
    cdx: CdxRecord | None = None
    revisit_cdx: CdxRecord | None = None
    html_biblio: dict[str, Any] | None = None
    processing: Processing | None = None
    error_message: str | None = None
