"""``grobid_refs`` rows as they travel as JSON lines."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_serializer, field_validator

from sandcrawler.identifiers import normalize_doi
from sandcrawler.timestamps import iso_utc


class GrobidRefsRow(BaseModel):
    """The seed's grobid_refs schema: refs_json is a list of ``GrobidBiblio.to_dict()``."""

    model_config = ConfigDict(extra="forbid")

    source: str = Field(min_length=1)
    source_id: str = Field(min_length=1)
    source_ts: datetime | None = None
    refs_json: list[dict[str, Any]]

    @field_validator("source")
    @classmethod
    def _lower_source(cls, v: str) -> str:
        return v.strip().lower()

    @field_validator("source_id")
    @classmethod
    def _doi_lower(cls, v: str, info: Any) -> str:
        if info.data.get("source") == "crossref":
            return normalize_doi(v)
        return v

    @field_serializer("source_ts")
    def _ts(self, ts: datetime | None) -> str | None:
        return iso_utc(ts)
