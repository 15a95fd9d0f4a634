"""``testgcs://BUCKET[/PREFIX]``: a GCS-style blob store whose buckets are
directories, to show that a third store backend is one module plus one line.

The line is a ``store.schemes`` entry (``SANDCRAWLER_STORE_SCHEMES``). It finds
its "server" in ``TESTGCS_ROOT``, as a GCS client finds its emulator, so it asks
for no settings section; a bucket must exist before use. Objects are files of a
``LocalBlobStore``, with that store's guarantees (docs/architecture.md, "A store
backend outside the product").
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO

from sandcrawler.core.errors import ConfigError
from sandcrawler.storage.blobs import DEFAULT_HASHES, BlobInfo, BlobStore, BlobWriter
from sandcrawler.storage.local import LocalBlobStore

#: the directory the buckets are in, as an emulator's address would be
ROOT_VARIABLE = "TESTGCS_ROOT"
#: GCS's bucket names, without the dotted (domain) form
_BUCKET = re.compile(r"[a-z0-9][a-z0-9_-]{1,61}[a-z0-9]")
SCHEME_ENTRY = "sandcrawler_testkit.gcs_store:TestGcsBlobStore"


class TestGcsBlobStore(BlobStore):
    __test__ = False  # a store, not a pytest test class

    def __init__(self, root: Path, bucket: str, prefix: str = "") -> None:
        if not _BUCKET.fullmatch(bucket):
            raise ConfigError(f"testgcs:// bucket {bucket!r} is not a bucket name "
                              "(3-63 of a-z, 0-9, - and _)")
        self.bucket = bucket
        self.bucket_dir = root / bucket
        self.prefix = prefix.strip("/")
        self.url = f"testgcs://{bucket}/{self.prefix}"
        self._objects: LocalBlobStore | None = None

    @classmethod
    def from_url(cls, rest: str) -> TestGcsBlobStore:
        """``BUCKET[/PREFIX]``, in the buckets of ``$TESTGCS_ROOT``."""
        root = os.environ.get(ROOT_VARIABLE)
        if not root:
            raise ConfigError(f"testgcs:// needs {ROOT_VARIABLE}: the directory its "
                              "buckets are in")
        bucket, _, prefix = rest.partition("/")
        return cls(Path(root), bucket, prefix)

    def objects(self) -> LocalBlobStore:
        """The bucket's objects (ConfigError while the bucket does not exist)."""
        if self._objects is None:
            if not self.bucket_dir.is_dir():
                raise ConfigError(f"{self.url}: no bucket {self.bucket!r} (sandcrawler "
                                  "store init creates it)")
            where = self.bucket_dir / self.prefix if self.prefix else self.bucket_dir
            self._objects = LocalBlobStore(where, fsync=False)
        return self._objects

    def create(self) -> bool:
        if self.bucket_dir.is_dir():
            return False
        self.bucket_dir.mkdir(parents=True)
        return True

    def check(self) -> None:
        self.objects().check()

    def open_write(self, key: str, *, hashes: Iterable[str] = DEFAULT_HASHES) -> BlobWriter:
        return self.objects().open_write(key, hashes=hashes)

    def open_read(self, key: str) -> IO[bytes]:
        return self.objects().open_read(key)

    def open_range(self, key: str, offset: int, length: int) -> IO[bytes]:
        return self.objects().open_range(key, offset, length)

    def stat(self, key: str) -> BlobInfo | None:
        return self.objects().stat(key)

    def list(self, prefix: str = "") -> Iterator[BlobInfo]:
        return self.objects().list(prefix)

    def delete(self, key: str) -> bool:
        return self.objects().delete(key)

    def cleanup(self, older_than: float = 86400.0) -> int:
        return self.objects().cleanup(older_than)
