"""File records, and where their bytes come from.

A file record names one file to process: a local ``path``, a capture in a WARC
file of the configured WARC source (``warc_path``, ``warc_offset``,
``warc_csize``), a ``url``, or a ``sha1`` of a file already stored (with the
others, the digest the bytes must have). ``FileLocator.local_file`` turns a
record into a local path for the time it is needed (docs/pdf.md, "File
records: where the bytes are").
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import orjson
from pydantic import ValidationError

from sandcrawler.core.errors import ConfigError, NotFound, RecordError
from sandcrawler.core.identifiers import sha1_hex
from sandcrawler.core.paths import safe_relative_path
from sandcrawler.core.spool import spooled
from sandcrawler.records.capture import CdxRecord
from sandcrawler.records.statuses import FileRecordStatus, PipelineStatus, StoreStatus
from sandcrawler.storage.resources import resource_kind
from sandcrawler.web.archive.warc import copy_payload
from sandcrawler.web.http.fetch import HttpFetcher

if TYPE_CHECKING:  # the catalogue pulls in SQLAlchemy
    from sandcrawler.storage.catalogue import Catalogue


@dataclass(frozen=True, slots=True)
class WarcRef:
    path: str
    offset: int
    csize: int


@dataclass(slots=True)
class FileRecord:
    name: str
    path: str | None = None
    url: str | None = None
    sha1: str | None = None  # hex; the expected digest, or (alone) what to look up
    warc: WarcRef | None = None
    cdx: CdxRecord | None = None  # when the record came from a CDX line

    def describe(self) -> dict[str, Any]:
        """What a result line says about where the file came from."""
        out: dict[str, Any] = {"path": self.name}
        if self.cdx is not None:
            out.update(url=self.cdx.url, dt=self.cdx.datetime)
        elif self.url:
            out["url"] = self.url
        return out


def parse_file_record(data: bytes) -> FileRecord:
    """A bare path, or a JSON object with one of path / warc_* / url / sha1."""
    raw = data.strip()
    if not raw.startswith(b"{"):
        if not raw:
            raise RecordError("empty record", status=FileRecordStatus.MISSING_PATH)
        bare = os.fsdecode(raw)
        return FileRecord(bare, path=bare)
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError as e:
        raise RecordError(f"not JSON: {e}", status=PipelineStatus.BAD_JSON) from None
    if not isinstance(obj, dict):
        raise RecordError("a file record is a JSON object", status=FileRecordStatus.BAD_RECORD)
    path, url = _str_field(obj, "path"), _str_field(obj, "url")
    sha1 = sha1_hex(obj["sha1"]) if obj.get("sha1") else None
    warc = None
    if obj.get("warc_path") is not None:
        offset, csize = obj.get("warc_offset"), obj.get("warc_csize")
        if not (isinstance(offset, int) and isinstance(csize, int) and offset >= 0
                and csize >= 0 and not isinstance(offset, bool)):
            raise RecordError("warc_offset and warc_csize must be non-negative integers",
                              status=FileRecordStatus.BAD_RECORD)
        warc = WarcRef(_str_field(obj, "warc_path") or "", offset, csize)
    if not (path or url or sha1 or warc):
        raise RecordError("record has none of path, url, sha1, warc_path",
                          status=FileRecordStatus.MISSING_PATH)
    name = _str_field(obj, "name") or path or url or (warc and warc.path) or sha1 or ""
    cdx = None
    if obj.get("cdx") is not None:
        try:
            cdx = CdxRecord.model_validate(obj["cdx"])
        except ValidationError as e:
            raise RecordError(f"{name}: not a CDX capture: {e.errors()[0]['msg']}",
                              status=FileRecordStatus.BAD_RECORD) from None
    return FileRecord(name, path=path, url=url, sha1=sha1, warc=warc, cdx=cdx)


def _str_field(obj: dict[str, Any], key: str) -> str | None:
    value = obj.get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise RecordError(f"{key!r} must be a string", status=FileRecordStatus.BAD_RECORD)
    return value


def cdx_file_record(cdx: CdxRecord) -> dict[str, Any]:
    """The file record of a capture named by a CDX line: its bytes are in the WARC,
    its digest is the line's, and the line itself goes along (``file:cdx``)."""
    return {"name": cdx.url, "sha1": cdx.sha1hex, "warc_path": cdx.warc_path,
            "warc_offset": cdx.warc_offset, "warc_csize": cdx.warc_csize,
            "cdx": cdx.to_cdx()}


class FileLocator:
    def __init__(
        self,
        *,
        catalogue: Catalogue | None = None,
        warc_source: str | None = None,
        fetcher: HttpFetcher | None = None,
        spool_dir: Path | None = None,
    ) -> None:
        self.catalogue = catalogue
        self.spool_dir = spool_dir
        self.warc_source = check_warc_source(warc_source)
        self._is_url = is_url(self.warc_source)
        self.fetcher = fetcher or HttpFetcher()
        #: a fetcher handed in belongs to whoever built it (the Services): not closed here
        self._owns_fetcher = fetcher is None

    def close(self) -> None:
        if self._owns_fetcher:
            self.fetcher.close()

    @contextlib.contextmanager
    def local_file(self, record: FileRecord) -> Iterator[str]:
        """A local path holding the record's bytes, for the duration of the block."""
        if record.path is not None:
            yield record.path
            return
        with _naming(record):
            found = None
            if record.warc is not None and not self._is_url and self.warc_source:
                found = self._local_capture(record)
        if found is not None:  # a file named by the sha1: no copy needed
            yield found
            return
        with spooled(self.spool_dir, ".fetch") as path:
            with path.open("wb") as tmp, _naming(record):
                self._fill(record, tmp)
            yield str(path)

    def _local_capture(self, record: FileRecord) -> str | None:
        assert record.warc is not None and self.warc_source
        if os.path.isfile(_inside(self.warc_source, record.warc.path)):
            return None  # read from the WARC file by _fill
        for name in (record.sha1, f"{record.sha1}.pdf") if record.sha1 else ():
            candidate = os.path.join(self.warc_source, name)
            if os.path.isfile(candidate):
                return candidate
        raise NotFound(f"{record.warc.path} is not in {self.warc_source}"
                       + (f", nor a file named {record.sha1}" if record.sha1 else ""))

    def _fill(self, record: FileRecord, dest: IO[bytes]) -> None:
        max_bytes = self.fetcher.max_bytes
        if record.warc is not None:
            ref = record.warc
            where = f"{ref.path}@{ref.offset}"
            if not self.warc_source:
                raise RecordError(f"{where}: no WARC source configured (--source or "
                                  "SANDCRAWLER_WARC_SOURCE)",
                                  status=FileRecordStatus.NO_WARC_SOURCE)
            if self._is_url:
                opened = self.fetcher.open_range(f"{self.warc_source}/{_warc_name(ref.path)}",
                                                 ref.offset, ref.csize)
                try:
                    copy_payload(opened.response, dest, where=where, length=ref.csize,
                                 max_bytes=max_bytes)
                finally:
                    opened.close()
            else:
                with open(_inside(self.warc_source, ref.path), "rb") as f:
                    f.seek(ref.offset)
                    copy_payload(f, dest, where=where, length=ref.csize, max_bytes=max_bytes)
        elif record.url is not None:
            self.fetcher.download(record.url, dest)
        elif record.sha1 is not None:
            self._from_store(record.sha1, dest)
        else:  # parse_file_record never makes such a record
            raise RecordError(f"{record.name}: nothing says where the file is",
                              status=FileRecordStatus.MISSING_PATH)

    def _from_store(self, sha1: str, dest: IO[bytes]) -> None:
        if self.catalogue is None:
            raise NotFound(f"sha1 {sha1}: no catalogue to look it up in")
        for doc in self.catalogue.lookup("sha1", sha1):
            entry = self.catalogue.get(doc)
            primary = [k for k in entry.resources if resource_kind(k).primary] if entry else []
            if primary:
                with self.catalogue.resources.open(doc, primary[0]) as src:
                    shutil.copyfileobj(src, dest, 1024 * 1024)
                return
        raise NotFound(f"sha1 {sha1} is not in the catalogue")


@contextlib.contextmanager
def _naming(record: FileRecord) -> Iterator[None]:
    """Record errors say which record they are about."""
    try:
        yield
    except RecordError as e:
        if record.name in str(e):
            raise
        raise type(e)(f"{record.name}: {e}", status=e.status) from None


def is_url(text: str | None) -> bool:
    return bool(text) and text.startswith(("http://", "https://"))  # type: ignore[union-attr]


def check_warc_source(source: str | None) -> str | None:
    """The WARC source without a trailing slash; ConfigError unless it is an
    existing directory or an http(s) URL."""
    if not source:
        return None
    if not is_url(source) and not os.path.isdir(source):
        raise ConfigError(f"WARC source {source!r} is neither a directory nor an http(s) URL")
    return source.rstrip("/") or "/"


def _warc_name(relative: str) -> str:
    """``relative`` if it cannot leave the WARC source (the rule of
    ``sandcrawler.core.paths``; status ``bad-name``). It is used as given, not in NFC:
    it names a file that exists, and Linux filesystems and URLs keep both forms
    apart."""
    safe_relative_path(relative, what="WARC file name", status=StoreStatus.BAD_NAME)
    return relative


def _inside(root: str, relative: str) -> str:
    """``root/relative``, refusing names that would leave ``root``."""
    return os.path.join(root, *_warc_name(relative).split("/"))
