"""The store URL scheme registry: ``store.url`` -> a blob store.

A new backend is one ``BlobStore`` module and one entry in ``STORE_SCHEMES``.
A URL without a scheme is a local directory.
"""

from __future__ import annotations

from collections.abc import Callable

from sandcrawler.config import S3Settings, StoreSettings
from sandcrawler.errors import ConfigError
from sandcrawler.storage.blobs import BlobStore
from sandcrawler.storage.local import LocalBlobStore
from sandcrawler.storage.s3 import S3BlobStore

#: (the URL after "scheme://", the store section, the S3 section) -> a store
StoreBuilder = Callable[[str, StoreSettings, S3Settings], BlobStore]


def _local(path: str, store: StoreSettings, _s3: S3Settings) -> BlobStore:
    return LocalBlobStore(path, fsync=store.fsync)


def _s3(rest: str, _store: StoreSettings, s3: S3Settings) -> BlobStore:
    bucket, _, prefix = rest.partition("/")
    return S3BlobStore(
        bucket, prefix, endpoint_url=s3.endpoint_url, region=s3.region,
        access_key_id=s3.access_key_id, secret_access_key=s3.secret_access_key,
        part_size=s3.part_size, upload_concurrency=s3.upload_concurrency,
    )


STORE_SCHEMES: dict[str, StoreBuilder] = {"file": _local, "s3": _s3}


def open_blob_store(store: StoreSettings, s3: S3Settings) -> BlobStore:
    """The store ``store.url`` names: a directory, ``file://DIR`` or ``s3://BUCKET/PREFIX``."""
    scheme, sep, rest = store.url.partition("://")
    if not sep:
        scheme, rest = "file", store.url
    builder = STORE_SCHEMES.get(scheme)
    if builder is None:
        known = ", ".join(f"{s}://" for s in STORE_SCHEMES)
        raise ConfigError(f"unsupported store.url {store.url!r}: use a directory or one of "
                          f"{known}")
    return builder(rest, store, s3)
