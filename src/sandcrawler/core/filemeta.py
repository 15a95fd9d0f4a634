"""File metadata in one streaming pass: size, sha1, sha256, md5 and the MIME type
sniffed from the first bytes (never from the file name; ``sandcrawler.core.mime``).

Hashing reads 1 MiB at a time; hashlib releases the GIL on large buffers, so
the three digests run on separate threads while the next chunks are read.
"""

from __future__ import annotations

import hashlib
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Protocol

from sandcrawler.core.errors import ConfigError, RecordError
from sandcrawler.core.mime import SNIFF_BYTES, sniff_mime
from sandcrawler.records.files import FileMeta
from sandcrawler.records.statuses import FileRecordStatus

CHUNK = 1024 * 1024
HASHES = ("sha1", "sha256", "md5")


class Hasher(Protocol):
    """A hash object as hashlib makes them: all that hashing a stream needs."""

    def update(self, data: bytes | bytearray | memoryview, /) -> None: ...

    def hexdigest(self) -> str: ...


def new_hashers(names: Iterable[str]) -> dict[str, Hasher]:
    """``hashlib`` objects by name; an unknown name is a configuration error."""
    try:
        return {name: hashlib.new(name) for name in names}
    except ValueError as e:
        raise ConfigError(f"unknown hash algorithm: {e}") from e


@contextmanager
def open_file(path: str | Path) -> Iterator[IO[bytes]]:
    """A file opened for reading; what stops that is this record's error."""
    try:
        f = open(path, "rb", buffering=0)  # noqa: SIM115 (closed below)
    except IsADirectoryError:
        raise RecordError(f"{path} is a directory", status=FileRecordStatus.NOT_A_FILE) from None
    except OSError as e:
        raise RecordError(f"cannot read {path}: {e.strerror}",
                          status=FileRecordStatus.UNREADABLE) from None
    with f:
        yield f


def read_chunks(stream: IO[bytes]) -> Iterator[bytes]:
    while chunk := stream.read(CHUNK):
        yield chunk


def hash_stream(stream: IO[bytes], names: Iterable[str] = HASHES) -> dict[str, str]:
    return hash_chunks(read_chunks(stream), names)


def hash_chunks(chunks: Iterable[bytes], names: Iterable[str] = HASHES) -> dict[str, str]:
    """Digests of the concatenated chunks, each algorithm on its own thread."""
    hasher = MultiHasher(new_hashers(names))
    for chunk in chunks:
        hasher.update(chunk)
    return hasher.hexdigests()


_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _hash_pool() -> ThreadPoolExecutor:
    """One pool for every hasher of the process: starting threads per file costs
    more than hashing a small file."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(8, thread_name_prefix="hash")
        return _POOL


class _Lane:
    """One hash object and the chunks waiting for it, hashed in order by at most
    one pool thread at a time."""

    __slots__ = ("busy", "hasher", "queue")

    def __init__(self, hasher: Hasher) -> None:
        self.hasher = hasher
        self.queue: deque[bytes] = deque()
        self.busy = False


class MultiHasher:
    """Feeds every chunk to several hash objects, each on a pool thread for big
    chunks (hashlib releases the GIL), so sha1 + sha256 + md5 cost about one.

    Each hash object is a lane of its own that may fall up to ``depth`` chunks
    behind the caller: the slowest digest (md5) runs without a stop while the
    others and the caller's reading share the other core, instead of every
    chunk waiting for the slowest digest of the one before. Memory: at most
    ``depth`` chunks held."""

    def __init__(self, hashers: dict[str, Hasher], depth: int = 4) -> None:
        self.hashers = hashers
        self._pool = _hash_pool()
        self._lanes = [_Lane(h) for h in hashers.values()]
        self._depth = depth
        self._cond = threading.Condition()
        self._error: BaseException | None = None

    def _idle(self) -> bool:
        return not any(lane.busy for lane in self._lanes)

    def update(self, chunk: bytes) -> None:
        with self._cond:
            if len(chunk) < 65536 and self._idle():  # not worth a thread hop
                for lane in self._lanes:
                    lane.hasher.update(chunk)
                return
            while self._error is None and any(len(lane.queue) >= self._depth
                                              for lane in self._lanes):
                self._cond.wait()
            self._raise()
            for lane in self._lanes:
                lane.queue.append(chunk)
                if not lane.busy:
                    lane.busy = True
                    self._pool.submit(self._drain, lane)

    def _drain(self, lane: _Lane) -> None:
        while True:
            with self._cond:
                if not lane.queue or self._error is not None:
                    lane.busy = False
                    self._cond.notify_all()
                    return
                chunk = lane.queue[0]
            try:
                lane.hasher.update(chunk)
            except BaseException as e:  # reported to the caller
                with self._cond:
                    self._error = e
            with self._cond:
                lane.queue.popleft()
                self._cond.notify_all()

    def _raise(self) -> None:
        if self._error is not None:
            raise self._error

    def _wait(self) -> None:
        with self._cond:
            while not self._idle():
                self._cond.wait()
            self._raise()

    def hexdigest(self, name: str) -> str:
        """One digest, as soon as its lane is done (the others may still run)."""
        lane = self._lanes[list(self.hashers).index(name)]
        with self._cond:
            while lane.busy:
                self._cond.wait()
            self._raise()
        return lane.hasher.hexdigest()

    def hexdigests(self) -> dict[str, str]:
        self._wait()
        return {name: h.hexdigest() for name, h in self.hashers.items()}


class MetaWriter:
    """Passes chunks on to ``write`` and works out the FileMeta of what went by:
    one pass for copying, hashing and sniffing. ``extra`` hash objects (e.g. a
    WARC block digest already fed the HTTP headers) are updated alongside."""

    def __init__(self, write: Callable[[bytes], Any],
                 extra: dict[str, Hasher] | None = None) -> None:
        self._write = write
        self.size = 0
        self._head = b""
        self._hasher = MultiHasher({**new_hashers(HASHES), **(extra or {})})

    def write(self, chunk: bytes) -> int:
        if len(self._head) < SNIFF_BYTES:
            self._head += chunk[: SNIFF_BYTES - len(self._head)]
        self.size += len(chunk)
        self._hasher.update(chunk)
        self._write(chunk)
        return len(chunk)

    def sha1hex(self) -> str:
        """The sha1 of what went by (no more writes), before the slower digests
        are done: a lookup by sha1 can run meanwhile."""
        return self._hasher.hexdigest("sha1")

    def finish(self) -> tuple[FileMeta, dict[str, str]]:
        """The file's metadata, and the hex digests of the ``extra`` hashers."""
        mimetype = sniff_mime(self._head)  # on this thread while the last chunks hash
        digests = self._hasher.hexdigests()
        meta = _meta(self.size, digests, mimetype)
        return meta, {k: v for k, v in digests.items() if k not in HASHES}


def file_metadata(source: str | Path | bytes | IO[bytes]) -> FileMeta:
    """Size, sha1, sha256, md5 and MIME type of a file, bytes or a binary stream,
    in one pass over the data."""
    if isinstance(source, bytes | bytearray | memoryview):
        data = bytes(source)
        return _meta(len(data), hash_chunks([data]), sniff_mime(data[:SNIFF_BYTES]))
    if isinstance(source, str | Path):
        with open_file(source) as f:
            return file_metadata(f)
    size = 0
    head = b""

    def chunks() -> Iterable[bytes]:
        nonlocal size, head
        for chunk in read_chunks(source):
            if len(head) < SNIFF_BYTES:
                head += chunk[: SNIFF_BYTES - len(head)]
            size += len(chunk)
            yield chunk

    digests = hash_chunks(chunks())
    return _meta(size, digests, sniff_mime(head))


def _meta(size: int, digests: dict[str, str], mimetype: str) -> FileMeta:
    return FileMeta(size_bytes=size, sha1hex=digests["sha1"], sha256hex=digests["sha256"],
                    md5hex=digests["md5"], mimetype=mimetype)
