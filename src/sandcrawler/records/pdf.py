"""The result line of ``sandcrawler process`` (and the ``process-pdf`` worker's
``pdf-results`` messages): one file record, processed.

The line is flat. A key is present when the step that knows it ran, even if
what it found is null; a step that did not run leaves its keys out, and
``to_json()`` leaves out exactly the keys that were not given, so a line read
back serialises as it was, byte for byte. Which keys each step adds:
docs/pdf.md, "The result line".
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from sandcrawler.records.files import DT14, SHA1_HEX
from sandcrawler.records.statuses import (
    CdxStatus,
    FulltextStatus,
    ParserStatus,
    PdfStatus,
    SandboxStatus,
    Status,
)

#: a result line's status: the extraction's (or the sandbox's), ``exists``, a CDX
#: line's skip, or why the record's file could not be read at all (``docs/pdf.md``,
#: "Statuses for the record itself": the file record's, the fetch's, the store's...,
#: whichever layer's error it was). The domains a line's status is read back as
#: come first: a status string several enums share is read as the first one's.
ProcessStatus = PdfStatus | SandboxStatus | CdxStatus | Status


class ProcessResult(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str
    url: str | None = None
    dt: str | None = Field(None, pattern=DT14)
    size: int | None = Field(None, ge=0)
    sha1hex: str | None = Field(None, pattern=SHA1_HEX)
    sha256hex: str | None = None
    md5hex: str | None = None
    mimetype: str | None = None
    #: when the record's file could not be read, ``error`` says what happened
    status: ProcessStatus
    #: ``exists``: the ``pdf0:pdf_status`` recorded then, as the table holds it
    pdf_status: str | None = None
    error: str | None = None
    uuid: str | None = None
    resources: list[str] | None = None
    grobid_status: FulltextStatus | ParserStatus | None = None
    grobid_quality: Literal["good", "marginal", "bad"] | None = None
    page_count: int | None = Field(None, ge=0)
    word_count: int | None = Field(None, ge=0)
    pdf_version: str | None = None

    @model_serializer(mode="wrap")
    def _keys_in_order(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if isinstance(self.status, CdxStatus):  # a skipped capture: its own order
            return {**{k: data[k] for k in ("path", "status", "sha1hex") if k in data}, **data}
        return data

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_unset=True)
