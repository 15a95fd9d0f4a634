"""What results say about one file: its metadata (``file_meta``) and where the
fetch of it ended (``terminal``).

The JSON of each model is the object of the same name in the original
sandcrawler's ingest results; every key is always present (a value that is not
known is ``null``), so a consumer can read them without testing for presence.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_serializer, model_validator

SHA1_HEX = r"^[0-9a-f]{40}$"
DT14 = r"^[0-9]{14}$"


class FileMeta(BaseModel):
    """``file_meta``: size, digests (lower-case hex) and the MIME type sniffed
    from the bytes (``sandcrawler.core.mime``). A digest that was not computed (a
    redirect's empty body, an index row without it) is ``""``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    size_bytes: int = Field(ge=0)
    sha1hex: str = Field(pattern=SHA1_HEX)
    sha256hex: str = Field(pattern=r"^([0-9a-f]{64})?$")
    md5hex: str = Field(pattern=r"^([0-9a-f]{32})?$")
    mimetype: str

    @model_validator(mode="before")
    @classmethod
    def _size(cls, data: Any) -> Any:
        """``size`` is read too: the name results and item records had before.
        (Not a validation alias: the checker would not see ``size_bytes`` in
        ``__init__``.)"""
        if isinstance(data, dict) and "size" in data:
            data = dict(data)
            size = data.pop("size")
            data.setdefault("size_bytes", size)
        return data

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


class Terminal(BaseModel):
    """``terminal``: the last hop of a fetch (after redirects), and the sha1 of
    the body it answered with."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    terminal_url: str = Field(min_length=1)
    terminal_dt: str = Field(pattern=DT14)  # 14 digits, YYYYMMDDhhmmss (UTC)
    terminal_status_code: int | None = None
    terminal_sha1hex: str | None = Field(None, pattern=SHA1_HEX)

    @model_serializer
    def _json(self) -> dict[str, Any]:
        return {"terminal_url": self.terminal_url, "terminal_dt": self.terminal_dt,
                "terminal_status_code": self.terminal_status_code,
                "terminal_sha1hex": self.terminal_sha1hex}

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")
