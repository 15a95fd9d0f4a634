"""One capture as a CDX index knows it: a line of a CDX file (a crawl's index,
``sandcrawler.web.archive.cdx`` reads them) or a ``web_cdx`` row of our own web archive.

The same record serialises to what each reader needs: the ``cdx`` object of
ingest results (``to_cdx()``, the original's keys), the capture's ``terminal``
(``to_terminal()``), the PDF table's ``file:cdx`` cell (``cell()``), and a
``web_cdx`` row (``to_row()``/``from_row()``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_serializer, model_validator

from sandcrawler.core.errors import RecordError
from sandcrawler.core.identifiers import sha1_base32, sha1_hex
from sandcrawler.records.files import DT14, SHA1_HEX, Terminal
from sandcrawler.records.statuses import CdxStatus

REVISIT_MIME = "warc/revisit"


class CdxRecord(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    surt: str = Field(min_length=1)
    datetime: str = Field(pattern=DT14)  # 14 digits, YYYYMMDDhhmmss (UTC)
    url: str = Field(min_length=1)
    mimetype: str | None = None  # as recorded, not normalised; warc/revisit for a revisit
    status_code: int | None = None  # None for "-" (revisits, some non-HTTP records)
    sha1hex: str | None = Field(None, pattern=SHA1_HEX)  # of the payload
    warc_csize: int = Field(ge=0)
    warc_offset: int = Field(ge=0)
    warc_path: str = Field(min_length=1)
    # what our own archive indexes beyond a CDX line
    location: str | None = None  # a redirect's target
    sha256hex: str | None = None
    md5hex: str | None = None
    size: int | None = Field(None, ge=0)  # of the payload, uncompressed

    @model_validator(mode="before")
    @classmethod
    def _from_base32(cls, data: Any) -> Any:
        """A ``cdx`` object read back: its ``sha1b32`` is the sha1 in another form."""
        if isinstance(data, Mapping) and "sha1b32" in data:
            data = dict(data)
            b32 = data.pop("sha1b32")
            if b32 is not None:
                try:
                    hexed = sha1_hex(b32)
                except RecordError as e:
                    raise ValueError(str(e)) from None
                if data.get("sha1hex") not in (None, hexed):
                    raise ValueError(f"sha1b32 {b32} and sha1hex {data['sha1hex']} differ")
                data["sha1hex"] = hexed
        return data

    @property
    def sha1b32(self) -> str | None:
        return None if self.sha1hex is None else sha1_base32(self.sha1hex)

    @property
    def is_revisit(self) -> bool:
        return self.mimetype == REVISIT_MIME

    def skip_reason(self) -> tuple[CdxStatus, str | None] | None:
        """(status, detail) when this capture holds no usable file: a revisit
        (no payload of its own) or an answer other than 200; else None."""
        if self.is_revisit:
            return CdxStatus.SKIP_REVISIT, None
        if self.status_code != 200:
            return CdxStatus.SKIP_STATUS, f"HTTP status {self.status_code or '-'}"
        return None

    @model_serializer
    def _json(self) -> dict[str, Any]:
        return {"surt": self.surt, "datetime": self.datetime, "url": self.url,
                "mimetype": self.mimetype, "status_code": self.status_code,
                "sha1b32": self.sha1b32, "sha1hex": self.sha1hex,
                "warc_csize": self.warc_csize, "warc_offset": self.warc_offset,
                "warc_path": self.warc_path}

    def to_cdx(self) -> dict[str, Any]:
        """The ``cdx`` object of ingest results."""
        return self.model_dump(mode="json")

    def to_terminal(self) -> Terminal:
        """The ``terminal`` object: this capture as the end of a fetch."""
        return Terminal(terminal_url=self.url, terminal_dt=self.datetime,
                        terminal_status_code=self.status_code, terminal_sha1hex=self.sha1hex)

    def cell(self) -> dict[str, str]:
        """The ``file:cdx`` cell of the PDF table (all values strings, as the seed has it)."""
        return {
            "surt": self.surt,
            "url": self.url,
            "dt": self.datetime,
            "warc": self.warc_path,
            "offset": str(self.warc_offset),
            "c_size": str(self.warc_csize),
        }

    def to_row(self) -> dict[str, Any]:
        """A ``web_cdx`` row (every column but ``row_created``)."""
        return {name: getattr(self, name) for name in ROW_FIELDS}

    @classmethod
    def from_row(cls, row: Mapping[Any, Any]) -> CdxRecord:
        """A ``web_cdx`` row (other columns are ignored); ``Mapping[Any, Any]`` because
        SQLAlchemy's ``RowMapping`` is keyed by names and columns alike."""
        return cls.model_validate({name: row[name] for name in ROW_FIELDS})


ROW_FIELDS = tuple(CdxRecord.model_fields)
