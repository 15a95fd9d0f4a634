"""The item store: archive.org-style items on the blob store (local or S3).

An item is a name (``zenodo.org-5703112-v1.0``, or an archive.org identifier)
and the files under it, at their dataset paths::

    items/<item>/<path of each file>
    items/<item>/<item>_meta.json     what the item is, its manifest; written last

The metadata file is the commit marker: an item whose metadata is there is
complete and verified, so ``check_existing`` trusts it and nothing else. Paths
come from platforms, so every path is checked (``unsafe-path``) before anything
is written: the rule of ``sandcrawler.paths`` (no ``..``, no absolute paths, no
control characters, ...; stored in NFC), the whole key within the blob store's
limits, and not the metadata file's own name; ``check_paths`` also refuses
paths that clash (``paths.find_clash``).
"""

from __future__ import annotations

from typing import Any

import orjson

from sandcrawler.errors import InvalidName, NotFound
from sandcrawler.paths import UnsafePath, find_clash, safe_relative_path, shown
from sandcrawler.storage.blobs import BlobStore, BlobWriter, check_key

ITEMS_PREFIX = "items"
META_SUFFIX = "_meta.json"


def check_item_name(name: str) -> str:
    """``name`` (in NFC) if it is one safe path segment, else UnsafePath."""
    name = safe_relative_path(name, what="item name")
    if "/" in name:
        raise UnsafePath(f"item name {shown(name)} is not a single path segment")
    return name


class ItemStore:
    def __init__(self, store: BlobStore) -> None:
        self.store = store

    def meta_key(self, item: str) -> str:
        item = check_item_name(item)
        return f"{ITEMS_PREFIX}/{item}/{item}{META_SUFFIX}"

    def file_key(self, item: str, path: str) -> str:
        """The blob key of ``path`` in ``item``; UnsafePath if the path would leave
        the item or is not a safe relative path."""
        item = check_item_name(item)
        path = safe_relative_path(path, what=f"{item}: file path")
        key = f"{ITEMS_PREFIX}/{item}/{path}"
        try:
            check_key(key)
        except InvalidName as e:
            raise UnsafePath(f"{item}: file path {shown(path)}: {e}") from None
        meta = self.meta_key(item)
        if key == meta or key.startswith(meta + "/"):
            raise UnsafePath(f"{item}: file path {shown(path)} is (or is under) the item's own "
                             "metadata file")
        return key

    def check_paths(self, item: str, paths: list[str]) -> None:
        """UnsafePath unless every path is a safe key of ``item`` and no two clash:
        the same path twice (after NFC), or a file that is another file's directory
        (a local store, or a disk the item is extracted to, cannot hold both)."""
        for path in paths:
            self.file_key(item, path)
        clash = find_clash(paths)
        if clash is not None:
            raise UnsafePath(f"{item}: {clash.describe('file')}")

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
