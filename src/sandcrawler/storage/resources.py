"""Primary and secondary resources of a document, laid out as in the seed:

    98/da/17/ff/<uuid>/<uuid>.pdf                 primary file (.pdf, .nxml, .xml, ...)
    98/da/17/ff/<uuid>/<uuid>.grobid.tei.xml.gz   secondary resources, named by kind
    98/da/17/ff/<uuid>/<uuid>-thumb-small.png

Text resources (XML, JSON, HTML) are gzip-compressed at rest, with ``.gz``
appended, and decompressed transparently on read. Every kind is one line of
``KINDS``.
"""

from __future__ import annotations

import gzip
import io
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import IO

from sandcrawler.core.errors import CorruptData, InvalidName
from sandcrawler.records.statuses import StoreStatus
from sandcrawler.storage.blobs import CHUNK, BlobInfo, BlobStore
from sandcrawler.storage.docid import parse_uuid, shard_dir

GZIP_LEVEL = 6  # zlib's default: 9 costs ~3x the time for ~2 % smaller XML


@dataclass(slots=True)
class DocumentListing:
    """A document's files as the store lists them."""

    uuid: str
    kinds: list[ResourceKind]
    #: when the latest of them was written (None when the store does not say)
    modified: datetime | None = None


@dataclass(frozen=True, slots=True)
class ResourceKind:
    name: str
    suffix: str  # what follows the UUID in the file name, before any .gz
    binary: bool
    primary: bool
    description: str
    #: what the bytes of a primary file of this kind sniff as (``mime.sniff_mime``)
    mimetypes: tuple[str, ...] = ()

    @property
    def stored_suffix(self) -> str:
        return self.suffix if self.binary else self.suffix + ".gz"


def _kind(name: str, suffix: str, binary: bool, primary: bool, description: str,
          *mimetypes: str) -> ResourceKind:
    return ResourceKind(name, suffix, binary, primary, description, mimetypes)


KINDS: dict[str, ResourceKind] = {
    k.name: k
    for k in (
        # primary files: the full text in the format it was harvested in
        _kind("pdf", ".pdf", True, True, "PDF full text", "application/pdf"),
        _kind("nxml", ".nxml", False, True, "JATS XML from PubMed Central",
              "application/xml", "text/xml"),
        _kind("xml", ".xml", False, True, "publisher XML", "application/xml", "text/xml"),
        _kind("html", ".html", False, True, "HTML full text", "text/html",
              "application/xhtml+xml"),
        _kind("docx", ".docx", True, True, "Word document",
              "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
        _kind("ps", ".ps", True, True, "PostScript full text", "application/postscript"),
        # secondary resources: extractions, annotations, enrichments
        _kind("grobid-tei", ".grobid.tei.xml", False, False, "GROBID structured full text"),
        _kind("extract-tei", ".extract.tei.xml", False, False,
              "header and references from the embedded extraction cascade (TEI)"),
        _kind("text", ".txt", False, False, "main text extracted from HTML full text"),
        _kind("pub2tei", ".pub2tei.tei.xml", False, False, "publisher XML converted to TEI"),
        _kind("ref-annotations", "-ref-annotations.json", False, False,
              "reference annotations"),
        _kind("thumb-small", "-thumb-small.png", True, False, "page-0 thumbnail, small"),
        _kind("thumb-medium", "-thumb-medium.png", True, False, "page-0 thumbnail, medium"),
        _kind("thumb-large", "-thumb-large.png", True, False, "page-0 thumbnail, large"),
        _kind("thumb-listing", "-thumb-listing.jpg", True, False,
              "page-0 thumbnail for listings (JPEG)"),
        _kind("software", ".software.json", False, False, "software mention annotations"),
        _kind("dataset", ".dataset.json", False, False, "dataset mention annotations"),
        _kind("references", ".references.tei.xml", False, False,
              "resolved bibliographical references"),
        _kind("affiliations", ".affiliations.json", False, False, "resolved affiliations"),
        _kind("metadata", ".metadata.json", False, False,
              "catalogue metadata, with the UUID as 'id'"),
    )
}

_BY_STORED_SUFFIX = {k.stored_suffix: k for k in KINDS.values()}
_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
#: a key in the resource layout: shard dirs, UUID dir, UUID + stored suffix
RESOURCE_KEY = re.compile(
    rf"^([0-9a-f]{{2}})/([0-9a-f]{{2}})/([0-9a-f]{{2}})/([0-9a-f]{{2}})/({_UUID})/\5(.+)$"
)


def resource_kind(name: str | ResourceKind) -> ResourceKind:
    """A kind by name (``grobid-tei``) or by its suffix (``.grobid.tei.xml``)."""
    if isinstance(name, ResourceKind):
        return name
    kind = KINDS.get(name) or next((k for k in KINDS.values() if k.suffix == name), None)
    if kind is None:
        raise InvalidName(
            f"unknown resource kind {name!r}; known: {', '.join(KINDS)}",
            status=StoreStatus.UNKNOWN_RESOURCE_KIND,
        )
    return kind


def resource_key(doc_uuid: str, kind: str | ResourceKind) -> str:
    k = resource_kind(kind)
    u = parse_uuid(doc_uuid)
    return f"{shard_dir(u)}/{u}{k.stored_suffix}"


def parse_resource_key(key: str) -> tuple[str, ResourceKind] | None:
    """(uuid, kind) for a key in the layout; None for anything else in the store."""
    m = RESOURCE_KEY.match(key)
    if not m or m.group(5)[:8] != "".join(m.group(i) for i in range(1, 5)):
        return None
    kind = _BY_STORED_SUFFIX.get(m.group(6))
    return (m.group(5), kind) if kind else None


class _Prefixed(io.RawIOBase):
    """``raw`` with bytes already read from it put back in front."""

    def __init__(self, head: bytes, raw: IO[bytes]) -> None:
        self._head = head
        self._raw = raw

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        if self._head:
            n = min(len(buffer), len(self._head))
            buffer[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        data = self._raw.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


class _CheckedGunzip(io.RawIOBase):
    """Decompresses a stored ``.gz`` stream; damage becomes CorruptData naming the key."""

    def __init__(self, raw: IO[bytes], key: str) -> None:
        self._raw = raw
        self._key = key
        # gzip reads an empty file as empty content; a stored resource is never that.
        head = raw.read(2)
        if head != b"\x1f\x8b":
            raw.close()
            raise CorruptData(f"{key}: not gzip data (starts with {head!r})")
        self._gz = gzip.GzipFile(fileobj=_Prefixed(head, raw), mode="rb")

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        try:
            return self._gz.readinto(buffer)
        except (OSError, EOFError, zlib.error) as e:
            raise CorruptData(f"{self._key}: damaged gzip data: {e}") from None

    def close(self) -> None:
        if not self.closed:
            self._gz.close()
            self._raw.close()
        super().close()


class ResourceStore:
    """Documents' files in a blob store, addressed by (UUID, kind)."""

    def __init__(self, blobs: BlobStore) -> None:
        self.blobs = blobs

    def put(self, doc_uuid: str, kind: str | ResourceKind, data: bytes | IO[bytes]) -> BlobInfo:
        """Store a resource (replacing any earlier version atomically); text kinds are
        gzip-compressed on the way. The returned info describes the stored bytes."""
        k = resource_kind(kind)
        key = resource_key(doc_uuid, k)
        if k.binary:
            return self.blobs.put(key, data)
        writer = self.blobs.open_write(key)
        # mtime=0: the same content always gives the same stored bytes.
        gz = gzip.GzipFile(fileobj=writer, mode="wb", compresslevel=GZIP_LEVEL, mtime=0)
        with writer, gz:
            if isinstance(data, bytes | bytearray | memoryview):
                gz.write(data)
            else:
                while chunk := data.read(CHUNK):
                    gz.write(chunk)
        assert writer.info is not None
        return writer.info

    def open(self, doc_uuid: str, kind: str | ResourceKind) -> IO[bytes]:
        """The resource's content as a stream (decompressed for text kinds)."""
        k = resource_kind(kind)
        key = resource_key(doc_uuid, k)
        raw = self.blobs.open_read(key)
        if k.binary:
            return raw
        return io.BufferedReader(_CheckedGunzip(raw, key), CHUNK)

    def get(self, doc_uuid: str, kind: str | ResourceKind) -> bytes:
        with self.open(doc_uuid, kind) as f:
            return f.read()

    def exists(self, doc_uuid: str, kind: str | ResourceKind) -> bool:
        return self.blobs.exists(resource_key(doc_uuid, kind))

    def delete(self, doc_uuid: str, kind: str | ResourceKind) -> bool:
        return self.blobs.delete(resource_key(doc_uuid, kind))

    def kinds(self, doc_uuid: str) -> list[ResourceKind]:
        """The resources a document has, from a listing of its directory."""
        found = []
        for info in self.blobs.list(shard_dir(doc_uuid) + "/"):
            parsed = parse_resource_key(info.key)
            if parsed and parsed[0] == parse_uuid(doc_uuid):
                found.append(parsed[1])
        return found

    def documents(self, prefix: str = "") -> Iterator[tuple[str, list[ResourceKind]]]:
        """Every document in the store with its resources, in UUID order. Keys that
        are not in the layout (other data sharing the store) are passed over."""
        for listing in self.listings(prefix):
            yield listing.uuid, listing.kinds

    def listings(self, prefix: str = "") -> Iterator[DocumentListing]:
        """``documents`` with the time each document's files last changed."""
        current: DocumentListing | None = None
        for info in self.blobs.list(prefix):
            parsed = parse_resource_key(info.key)
            if parsed is None:
                continue
            doc, kind = parsed
            if current is None or doc != current.uuid:
                if current is not None:
                    yield current
                current = DocumentListing(doc, [])
            current.kinds.append(kind)
            if info.modified is not None and (current.modified is None
                                              or info.modified > current.modified):
                current.modified = info.modified
        if current is not None:
            yield current
