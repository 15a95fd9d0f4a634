"""The item store: archive.org-style items on the blob store (local or S3).

An item is a name (``zenodo.org-5703112-v1.0``, or an archive.org identifier)
and the files under it, at their dataset paths::

    items/<item>/<path of each file>
    items/<item>/<item>_meta.json     what the item is, its manifest; written last

The metadata file is the commit marker: an item whose metadata is there is
complete and verified, so ``check_existing`` trusts it and nothing else. Paths
come from platforms, so every key is checked (``unsafe-path``) before anything
is written: no ``..``, no absolute paths, no control characters, and not the
metadata file's own name.
"""

from __future__ import annotations

from typing import Any

import orjson

from sandcrawler.errors import InvalidName, NotFound, RecordError
from sandcrawler.storage.blobs import BlobStore, BlobWriter, check_key

ITEMS_PREFIX = "items"
META_SUFFIX = "_meta.json"


class UnsafePath(RecordError):
    status = "unsafe-path"


def check_item_name(name: str) -> str:
    if not name or "/" in name or name in (".", ".."):
        raise UnsafePath(f"item name {name!r} is not a single path segment")
    return name


class ItemStore:
    def __init__(self, store: BlobStore) -> None:
        self.store = store

    def meta_key(self, item: str) -> str:
        check_item_name(item)
        return f"{ITEMS_PREFIX}/{item}/{item}{META_SUFFIX}"

    def file_key(self, item: str, path: str) -> str:
        """The blob key of ``path`` in ``item``; UnsafePath if the path would leave
        the item or is not a clean relative path."""
        check_item_name(item)
        parts = path.split("/")
        if not path or path.startswith("/") or any(p in ("", ".", "..") for p in parts):
            raise UnsafePath(f"{item}: file path {path!r} is not a clean relative path")
        key = f"{ITEMS_PREFIX}/{item}/{path}"
        try:
            check_key(key)
        except InvalidName as e:
            raise UnsafePath(f"{item}: file path {path!r}: {e}") from None
        meta = self.meta_key(item)
        if key == meta or key.startswith(meta + "/"):
            raise UnsafePath(f"{item}: file path {path!r} is (or is under) the item's own "
                             "metadata file")
        return key

    def check_paths(self, item: str, paths: list[str]) -> None:
        """UnsafePath unless every path is a clean key of ``item`` and no two clash:
        the same path twice, or a file that is another file's directory (a local
        store, or a disk the item is extracted to, cannot hold both)."""
        seen: set[str] = set()
        for path in paths:
            self.file_key(item, path)
            if path in seen:
                raise UnsafePath(f"{item}: {path!r} appears more than once")
            seen.add(path)
        directories = {p.rsplit("/", i)[0] for p in paths for i in range(1, p.count("/") + 1)}
        for path in paths:
            if path in directories:
                raise UnsafePath(f"{item}: {path!r} is a file, and a directory of other files")

    def open_file(self, item: str, path: str) -> BlobWriter:
        return self.store.open_write(self.file_key(item, path), hashes=())

    def exists(self, item: str, path: str) -> bool:
        return self.store.exists(self.file_key(item, path))

    def delete(self, item: str, path: str) -> None:
        self.store.delete(self.file_key(item, path))

    def read_meta(self, item: str) -> dict[str, Any] | None:
        try:
            raw = self.store.get(self.meta_key(item))
        except NotFound:
            return None
        try:
            meta = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return None  # a damaged marker is no marker: the item is archived again
        return meta if isinstance(meta, dict) else None

    def write_meta(self, item: str, meta: dict[str, Any]) -> None:
        self.store.put(self.meta_key(item), orjson.dumps(meta, option=orjson.OPT_INDENT_2),
                       hashes=())

    def delete_meta(self, item: str) -> None:
        """Withdraw the commit marker: the item is not known complete any more."""
        self.store.delete(self.meta_key(item))

    def files(self, item: str) -> list[str]:
        """Paths of the files in ``item`` (the metadata file left out)."""
        prefix = f"{ITEMS_PREFIX}/{check_item_name(item)}/"
        meta = self.meta_key(item)
        return [b.key[len(prefix):] for b in self.store.list(prefix) if b.key != meta]
