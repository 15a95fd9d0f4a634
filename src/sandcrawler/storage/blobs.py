"""The blob store interface: named byte streams on a local disk or in S3.

Keys are ``/``-separated relative names. Both backends stream writes, make them
atomic (nothing visible until ``commit``; a killed writer leaves only garbage for
``cleanup``), hash while writing, and ``list`` keys in byte order
(docs/storage.md, "Blob store").
"""

from __future__ import annotations

import io
import shutil
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from types import TracebackType
from typing import IO

from sandcrawler.core.errors import InvalidName
from sandcrawler.core.filemeta import new_hashers
from sandcrawler.core.paths import safe_relative_path
from sandcrawler.records.statuses import StoreStatus

#: hashes computed on every write unless a caller asks for others; both run at
#: over 1.5 GB/s with the CPU's SHA instructions, md5 at half that.
DEFAULT_HASHES: tuple[str, ...] = ("sha1", "sha256")
CHUNK = 1024 * 1024
#: first key segment reserved for a local store's in-progress writes
RESERVED_SEGMENT = ".tmp"


def check_key(key: str) -> str:
    """``key`` in NFC if it is a safe relative name, else InvalidName (status
    ``bad-key``) saying why: the rule of ``sandcrawler.core.paths`` (no empty, ``.`` or
    ``..`` segments, absolute paths, drive letters, backslashes, control
    characters or invalid Unicode; at most 1,024 bytes, 255 per segment), and not
    the reserved ``.tmp/`` area. A key can therefore never name a file outside
    the store, and one name is one key whichever Unicode form it came in."""
    key = safe_relative_path(key, what="blob key", status=StoreStatus.BAD_KEY)
    if key.split("/", 1)[0] == RESERVED_SEGMENT:
        raise InvalidName(f"blob keys under {RESERVED_SEGMENT}/ are reserved",
                          status=StoreStatus.BAD_KEY)
    return key


def check_range(offset: int, length: int) -> None:
    if offset < 0 or length < 1:
        raise ValueError(f"bad byte range: offset {offset}, length {length}")


def check_prefix(prefix: str) -> str:
    """A listing prefix (in NFC): like a key, but may be empty or end in ``/``."""
    if prefix == "":
        return prefix
    if prefix.endswith("/"):
        return check_key(prefix + "x")[:-1]
    return check_key(prefix)


@dataclass(frozen=True, slots=True)
class BlobInfo:
    key: str
    size: int
    modified: datetime | None = None
    #: hash name -> hex digest; filled for blobs just written, empty from stat/list
    hashes: dict[str, str] = field(default_factory=dict)


class BlobWriter(ABC):
    """A write in progress. Use as a context manager: a clean exit commits, an
    exception aborts. Hashes and size accumulate as bytes are written."""

    def __init__(self, key: str, hashes: Iterable[str]) -> None:
        self.key = key
        self.size = 0
        self._hashers = new_hashers(hashes)
        self.info: BlobInfo | None = None
        self._done = False

    def write(self, data: bytes) -> int:
        if self._done:
            raise ValueError(f"write to a finished blob writer ({self.key})")
        for h in self._hashers.values():
            h.update(data)
        self.size += len(data)
        self._write(data)
        return len(data)

    def writev(self, buffers: Sequence[bytes | memoryview]) -> int:
        """Write the buffers one after the other (one system call where the
        backend can gather them); the number of bytes."""
        if self._done:
            raise ValueError(f"write to a finished blob writer ({self.key})")
        n = 0
        for b in buffers:
            for h in self._hashers.values():
                h.update(b)
            n += len(b)
        self.size += n
        self._writev(buffers)
        return n

    @property
    def rewritable(self) -> bool:
        """Can bytes already written be overwritten (``pwrite``) or cut off
        (``truncate``) before ``commit``? Only without running hashes."""
        return False

    def pwrite(self, data: bytes, offset: int) -> None:
        """Overwrite bytes already written at ``offset`` (the size is unchanged)."""
        raise io.UnsupportedOperation(f"{type(self).__name__} cannot overwrite")

    def truncate(self, size: int) -> None:
        """Forget everything written from ``size`` on; writing goes on from there."""
        raise io.UnsupportedOperation(f"{type(self).__name__} cannot truncate")

    def _writev(self, buffers: Sequence[bytes | memoryview]) -> None:
        for b in buffers:
            self._write(b if type(b) is bytes else bytes(b))

    def writable(self) -> bool:  # lets io/gzip wrappers accept the writer as a file
        return True

    def flush(self) -> None:  # noqa: B027 (nothing to flush before commit; a file-like hook)
        pass

    def commit(self) -> BlobInfo:
        if self.info is not None:
            return self.info
        self._done = True
        modified = self._commit()
        self.info = BlobInfo(
            self.key,
            self.size,
            modified,
            {name: h.hexdigest() for name, h in self._hashers.items()},
        )
        return self.info

    def abort(self) -> None:
        if not self._done:
            self._done = True
            self._abort()

    def __enter__(self) -> BlobWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.abort()

    @abstractmethod
    def _write(self, data: bytes) -> None: ...

    @abstractmethod
    def _commit(self) -> datetime | None:
        """Make the object visible under its key, atomically."""

    @abstractmethod
    def _abort(self) -> None: ...


class BlobStore(ABC):
    """Where blobs live. ``url`` names the store in messages and ``config show``."""

    url: str

    @abstractmethod
    def open_write(self, key: str, *, hashes: Iterable[str] = DEFAULT_HASHES) -> BlobWriter: ...

    @abstractmethod
    def open_read(self, key: str) -> IO[bytes]:
        """A binary stream of the blob; NotFound if there is none."""

    @abstractmethod
    def open_range(self, key: str, offset: int, length: int) -> IO[bytes]:
        """A binary stream of at most ``length`` bytes of the blob from ``offset``
        (fewer at its end): a seek on a local file, a ranged GET on S3, never a
        read from byte 0. NotFound if there is no blob; ValueError for a negative
        offset or a length below 1."""

    @abstractmethod
    def stat(self, key: str) -> BlobInfo | None: ...

    @abstractmethod
    def list(self, prefix: str = "") -> Iterator[BlobInfo]:
        """Blobs whose key starts with ``prefix`` (a string prefix), in key order."""

    @abstractmethod
    def delete(self, key: str) -> bool:
        """Remove the blob; False if there was none."""

    @abstractmethod
    def cleanup(self, older_than: float = 86400.0) -> int:
        """Remove what interrupted writers left behind (never visible as blobs);
        returns how many leftovers were removed."""

    def create(self) -> bool:
        """Create the store's container if it is missing (True if created)."""
        return False  # a local store creates its directory when opened

    def check(self) -> None:  # noqa: B027 (optional hook)
        """Raise ConfigError or StoreUnavailable unless the store can be used."""

    def put(
        self, key: str, data: bytes | IO[bytes], *, hashes: Iterable[str] = DEFAULT_HASHES
    ) -> BlobInfo:
        """Store bytes or everything a binary stream yields."""
        with self.open_write(key, hashes=hashes) as w:
            if isinstance(data, bytes | bytearray | memoryview):
                w.write(bytes(data))
            else:
                shutil.copyfileobj(data, w, CHUNK)
        assert w.info is not None
        return w.info

    def get(self, key: str) -> bytes:
        with self.open_read(key) as f:
            return f.read()

    def exists(self, key: str) -> bool:
        return self.stat(key) is not None

    def close(self) -> None:  # noqa: B027 (optional hook)
        pass


