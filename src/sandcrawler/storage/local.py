"""The local-filesystem blob store: one file per blob under a root directory.

Writes go to a temporary file under ``<root>/.tmp/`` and are renamed into place
(``os.replace`` is atomic on POSIX), so a reader sees the old object or the new
one, never a part. With ``fsync`` the data and the directory entry are flushed
first, so a crash cannot leave an empty or truncated file under the final name.
"""

from __future__ import annotations

import contextlib
import io
import os
import stat
import tempfile
import time
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

from sandcrawler.config import StoreSettings
from sandcrawler.core.errors import ConfigError, InvalidName, NotFound
from sandcrawler.core.retry import Backoff, RetryPolicy
from sandcrawler.records.statuses import StoreStatus
from sandcrawler.storage.blobs import (
    DEFAULT_HASHES,
    RESERVED_SEGMENT,
    BlobInfo,
    BlobStore,
    BlobWriter,
    check_key,
    check_prefix,
    check_range,
)


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# Read once: os.umask can only be read by setting it, which is not thread-safe.
_FILE_MODE = 0o666 & ~_current_umask()
#: a rename that lost a race with a delete pruning its directory: try again at once
_RENAME_RACE = RetryPolicy(attempts=3, base=0.0)
#: buffers per writev call (the POSIX minimum of IOV_MAX; Linux allows 1,024)
_IOV_MAX = 1024


class _Limited(io.RawIOBase):
    """At most ``left`` bytes of an open file, from where it stands; closes it."""

    def __init__(self, f: IO[bytes], left: int) -> None:
        self._f = f
        self._left = left

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        if self._left <= 0:
            return 0
        view = memoryview(buffer)[: min(len(buffer), self._left)]
        n = self._f.readinto(view)  # type: ignore[attr-defined]
        self._left -= n or 0
        return n or 0

    def close(self) -> None:
        if not self.closed:
            self._f.close()
        super().close()


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class _LocalWriter(BlobWriter):
    def __init__(self, store: LocalBlobStore, key: str, hashes: Iterable[str]) -> None:
        super().__init__(key, hashes)
        self._store = store
        fd, tmp = tempfile.mkstemp(dir=store.tmp_dir, prefix="w-")
        os.fchmod(fd, _FILE_MODE)
        self._tmp = Path(tmp)
        self._fh = os.fdopen(fd, "wb", buffering=0)

    def _write(self, data: bytes) -> None:
        self._fh.write(data)

    def _writev(self, buffers: Sequence[bytes | memoryview]) -> None:
        fd = self._fh.fileno()
        views = [memoryview(b).cast("B") for b in buffers if len(b)]
        while views:
            written = os.writev(fd, views[:_IOV_MAX])
            while views and written >= len(views[0]):  # drop what went out whole
                written -= len(views.pop(0))
            if written:
                views[0] = views[0][written:]

    @property
    def rewritable(self) -> bool:
        return not self._hashers and not self._done

    def pwrite(self, data: bytes, offset: int) -> None:
        if not self.rewritable or offset < 0 or offset + len(data) > self.size:
            raise ValueError(f"cannot overwrite {len(data)} bytes at {offset} of {self.key} "
                             f"({self.size} bytes written)")
        view = memoryview(data)
        while view:
            n = os.pwrite(self._fh.fileno(), view, offset)
            view, offset = view[n:], offset + n

    def truncate(self, size: int) -> None:
        if not self.rewritable or not 0 <= size <= self.size:
            raise ValueError(f"cannot truncate {self.key} ({self.size} bytes) to {size}")
        os.ftruncate(self._fh.fileno(), size)
        self._fh.seek(size)
        self.size = size

    def _commit(self) -> datetime:
        final = self._store.path(self.key)
        try:
            if self._store.fsync:
                os.fsync(self._fh.fileno())
            self._fh.close()
            race = Backoff(_RENAME_RACE)
            while True:
                try:
                    final.parent.mkdir(parents=True, exist_ok=True)
                    os.replace(self._tmp, final)
                    break
                except FileNotFoundError:
                    # A concurrent delete pruned the (then empty) directory.
                    if not race.retry():
                        raise
                except (FileExistsError, NotADirectoryError, IsADirectoryError):
                    # A file cannot also be a directory, as an S3 key can.
                    raise InvalidName(
                        f"blob key {self.key!r} clashes with an existing blob or directory "
                        "(a local store cannot hold both 'a' and 'a/b')",
                        status=StoreStatus.KEY_CONFLICT,
                    ) from None
            if self._store.fsync:
                _fsync_dir(final.parent)
        except BaseException:
            self._discard()
            raise
        return datetime.fromtimestamp(final.stat().st_mtime, UTC)

    def _abort(self) -> None:
        self._discard()

    def _discard(self) -> None:
        self._fh.close()
        with contextlib.suppress(FileNotFoundError):
            self._tmp.unlink()


class LocalBlobStore(BlobStore):
    def __init__(self, root: str | Path, *, fsync: bool = True) -> None:
        self.root = Path(root).expanduser().absolute()
        self.url = str(self.root)
        self.fsync = fsync
        self.tmp_dir = self.root / RESERVED_SEGMENT
        try:
            self.tmp_dir.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise ConfigError(f"cannot use {self.root} as a blob store: {e}") from e

    @classmethod
    def from_url(cls, rest: str, store: StoreSettings) -> LocalBlobStore:
        """``file://DIR`` or a plain directory, with ``store.fsync``."""
        return cls(rest, fsync=store.fsync)

    def path(self, key: str) -> Path:
        return self.root / check_key(key)

    def open_write(self, key: str, *, hashes: Iterable[str] = DEFAULT_HASHES) -> BlobWriter:
        return _LocalWriter(self, check_key(key), hashes)

    def open_read(self, key: str) -> IO[bytes]:
        path = self.path(key)
        try:
            return open(path, "rb")
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            raise NotFound(f"no blob {key!r} in {self.url}") from None

    def open_range(self, key: str, offset: int, length: int) -> IO[bytes]:
        check_range(offset, length)
        f = self.open_read(key)
        try:
            f.seek(offset)
        except BaseException:
            f.close()
            raise
        return io.BufferedReader(_Limited(f, length))

    def stat(self, key: str) -> BlobInfo | None:
        key = check_key(key)
        try:
            st = (self.root / key).stat()
        except (FileNotFoundError, NotADirectoryError):
            return None
        if not stat.S_ISREG(st.st_mode):
            return None
        return BlobInfo(key, st.st_size, datetime.fromtimestamp(st.st_mtime, UTC))

    def list(self, prefix: str = "") -> Iterator[BlobInfo]:
        prefix = check_prefix(prefix)
        # Start at the deepest directory the prefix names; filter the rest by string.
        head, _, _ = prefix.rpartition("/")
        start = self.root / head if head else self.root
        yield from (
            info for info in self._walk(start, head + "/" if head else "")
            if info.key.startswith(prefix)
        )

    def _walk(self, directory: Path, key_prefix: str) -> Iterator[BlobInfo]:
        try:
            entries = list(os.scandir(directory))
        except (FileNotFoundError, NotADirectoryError):
            return
        # Sort as S3 does, by the full key: a directory "a" sorts as "a/".
        def sort_key(e: os.DirEntry[str]) -> str:
            return e.name + "/" if e.is_dir(follow_symlinks=False) else e.name

        for entry in sorted(entries, key=sort_key):
            key = key_prefix + entry.name
            if entry.is_dir(follow_symlinks=False):
                if key == RESERVED_SEGMENT:
                    continue
                yield from self._walk(Path(entry.path), key + "/")
            elif entry.is_file(follow_symlinks=False):
                st = entry.stat(follow_symlinks=False)
                yield BlobInfo(key, st.st_size, datetime.fromtimestamp(st.st_mtime, UTC))

    def delete(self, key: str) -> bool:
        path = self.path(key)
        try:
            path.unlink()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return False
        # Prune directories left empty, so deleted documents leave no shard dirs behind.
        parent = path.parent
        while parent != self.root:
            try:
                parent.rmdir()
            except OSError:
                break
            parent = parent.parent
        return True

    def cleanup(self, older_than: float = 86400.0) -> int:
        cutoff = time.time() - older_than
        removed = 0
        for entry in os.scandir(self.tmp_dir):
            with contextlib.suppress(FileNotFoundError):
                if entry.stat().st_mtime < cutoff:
                    os.unlink(entry.path)
                    removed += 1
        return removed

    def check(self) -> None:
        if not os.access(self.root, os.W_OK):
            raise ConfigError(f"blob store {self.root} is not writable")
