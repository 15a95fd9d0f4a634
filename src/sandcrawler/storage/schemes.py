"""The store URL scheme registry: ``store.url`` -> a blob store.

A new backend is one ``BlobStore`` module with a ``from_url`` class method and
one entry in ``STORE_SCHEMES``. Entries name their class as ``module:Class``,
imported when a store of that scheme is opened: boto3 alone costs a tenth of a
second, which a command on a local store should not pay. A URL without a
scheme is a local directory.
"""

from __future__ import annotations

from typing import Protocol

from sandcrawler.config import S3Settings, StoreSettings
from sandcrawler.errors import ConfigError
from sandcrawler.imports import load_object
from sandcrawler.storage.blobs import BlobStore


class StoreBackend(Protocol):
    @classmethod
    def from_url(cls, rest: str, store: StoreSettings, s3: S3Settings) -> BlobStore:
        """The store named by the URL after ``scheme://``."""
        ...


STORE_SCHEMES: dict[str, str] = {
    "file": "sandcrawler.storage.local:LocalBlobStore",
    "s3": "sandcrawler.storage.s3:S3BlobStore",
}


def store_backend(scheme: str) -> type[StoreBackend] | None:
    path = STORE_SCHEMES.get(scheme)
    if path is None:
        return None
    backend: type[StoreBackend] = load_object(path)
    return backend


def open_blob_store(store: StoreSettings, s3: S3Settings) -> BlobStore:
    """The store ``store.url`` names: a directory, ``file://DIR`` or ``s3://BUCKET/PREFIX``."""
    scheme, sep, rest = store.url.partition("://")
    if not sep:
        scheme, rest = "file", store.url
    backend = store_backend(scheme)
    if backend is None:
        known = ", ".join(f"{s}://" for s in STORE_SCHEMES)
        raise ConfigError(f"unsupported store.url {store.url!r}: use a directory or one of "
                          f"{known}")
    return backend.from_url(rest, store, s3)
