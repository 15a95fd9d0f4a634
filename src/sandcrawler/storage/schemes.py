"""The store URL scheme registry: ``store.url`` -> a blob store.

A new backend is one ``BlobStore`` module with a ``from_url`` class method and one
line in ``STORE_SCHEMES`` (or the ``store.schemes`` setting, outside the package),
resolved by ``imports.load_object`` when a store of that scheme is opened (boto3
alone costs a tenth of a second). ``from_url`` gets only the settings sections
its parameters name. A URL without a scheme is a local directory
(docs/architecture.md, "Adding a citation parser, a worker, a store backend").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from sandcrawler.core.errors import ConfigError
from sandcrawler.core.imports import call_builder, load_object
from sandcrawler.storage.blobs import BlobStore

#: scheme -> ``package.module:Class``, a BlobStore with ``from_url``
STORE_SCHEMES: dict[str, str] = {
    "file": "sandcrawler.storage.local:LocalBlobStore",
    "s3": "sandcrawler.storage.s3:S3BlobStore",
}


def store_schemes(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The registry with the ``store.schemes`` setting's entries (which may add a
    scheme, never replace one of ours)."""
    clash = sorted(set(extra or ()) & set(STORE_SCHEMES))
    if clash:
        raise ConfigError(f"store.schemes: {', '.join(clash)} is a built-in scheme")
    return {**STORE_SCHEMES, **(extra or {})}


def open_blob_store(url: str, offers: Mapping[str, Callable[[], object]],
                    extra: Mapping[str, str] | None = None) -> BlobStore:
    """The store ``url`` names: a directory, ``file://DIR``, ``s3://BUCKET/PREFIX``
    or a scheme of ``extra``. ``offers``: the settings sections (and services) a
    backend's ``from_url`` may ask for by name."""
    schemes = store_schemes(extra)
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, rest = "file", url
    path = schemes.get(scheme)
    if path is None:
        known = ", ".join(f"{s}://" for s in schemes)
        raise ConfigError(f"unsupported store.url {url!r}: use a directory or one of {known}")
    backend = load_object(path)
    from_url: Callable[..., object] | None = getattr(backend, "from_url", None)
    if from_url is None:
        raise ConfigError(f"store scheme {scheme}:// names {path!r}, which has no from_url")
    store = call_builder(from_url, offers, rest)
    if not isinstance(store, BlobStore):
        raise ConfigError(f"store scheme {scheme}:// names {path!r}, whose from_url made "
                          f"{type(store).__name__}, not a BlobStore")
    return store
