"""Ingest requests (every type) and file ingest results.

The request is the original system's ingest request: unknown fields are kept
and echoed back; ``ingest_type`` picks file ingest (``pdf``, ``xml``, ``html``) or
fileset ingest (``dataset``). A file ingest result is the original's
``ingest-file-results`` object, plus ``processing`` and ``error_message``
(docs/ingest.md, "Results").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from sandcrawler.records.base import Record
from sandcrawler.records.capture import CdxRecord
from sandcrawler.records.files import FileMeta, Terminal
from sandcrawler.records.html_biblio import HtmlBiblio
from sandcrawler.records.statuses import INGEST_FILE_SUCCESS, Status


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
    status: Status
    uuid: str | None = None
    resources: list[str] | None = None
    grobid_status: Status | None = None
    #: references parsed into grobid_refs (source ``document``, the UUID)
    references: int | None = None
    error: str | None = None
    #: JATS: where the references came from, ``jats`` or the landing page's ``meta``
    references_from: str | None = None
    #: HTML: words of main text, and the page's sub-resources (``url``, ``type``, ...)
    word_count: int | None = Field(None, ge=0)
    html_resources: list[dict[str, str]] | None = None


class FileIngestResult(Record):
    """Built once, when the request's outcome is known (``FileIngester``); it
    becomes JSON in the sink. ``hit`` follows from ``status`` (``is_hit``)."""

    hit: bool
    #: the request's own status or one a lower layer gave (``fetch-error``, ...)
    status: Status
    #: the request echoed as it came, unknown fields kept (``IngestRequest.to_json``,
    #: or the JSON object of a line that did not validate): a mapping on purpose,
    #: since it is any producer's object, not one this result interprets
    request: dict[str, Any]
    #: None only for a line that was no request (``IngestWorker``: nothing was
    #: tried, and its result has no ``hops``); else every URL tried, maybe none
    hops: list[str] | None = Field(default_factory=list)
    terminal: Terminal | None = None
    file_meta: FileMeta | None = None
    cdx: CdxRecord | None = None
    revisit_cdx: CdxRecord | None = None
    html_biblio: HtmlBiblio | None = None
    processing: Processing | None = None
    error_message: str | None = None

    @staticmethod
    def is_hit(status: Status) -> bool:
        """A result's ``hit``: the file was found and archived."""
        return status in INGEST_FILE_SUCCESS


# --- rows: what persisting results writes (``db.persist.write_tables``) -------------


@dataclass(frozen=True, slots=True)
class IngestFileResultRow:
    """An ``ingest_file_result`` row: a request's key, its status and where its
    fetch ended. Made from a result read back (``IngestResultView``), any
    producer's, so its status is the string that result holds."""

    table: ClassVar[str] = "ingest_file_result"

    ingest_type: str
    base_url: str
    hit: bool
    status: str | None
    terminal_url: str | None = None
    terminal_dt: str | None = None
    terminal_status_code: int | None = None
    terminal_sha1hex: str | None = None

    def columns(self) -> dict[str, Any]:
        return {"ingest_type": self.ingest_type, "base_url": self.base_url, "hit": self.hit,
                "status": self.status, "terminal_url": self.terminal_url,
                "terminal_dt": self.terminal_dt,
                "terminal_status_code": self.terminal_status_code,
                "terminal_sha1hex": self.terminal_sha1hex}


@dataclass(frozen=True, slots=True)
class IngestRequestRow:
    """An ``ingest_request`` row, keyed as the original system keys requests:
    (link_source, link_source_id, ingest_type, base_url)."""

    table: ClassVar[str] = "ingest_request"

    link_source: str
    link_source_id: str
    ingest_type: str
    base_url: str
    ingest_request_source: str | None
    release_stage: str | None
    created: datetime
    #: the request echoed in the result, kept whole (a JSON column): any
    #: producer's object, with fields this row does not read
    request: Mapping[str, Any]

    def columns(self) -> dict[str, Any]:
        return {"link_source": self.link_source, "link_source_id": self.link_source_id,
                "ingest_type": self.ingest_type, "base_url": self.base_url,
                "ingest_request_source": self.ingest_request_source,
                "release_stage": self.release_stage, "created": self.created,
                "request": self.request}
