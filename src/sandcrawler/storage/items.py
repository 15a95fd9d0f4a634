"""The item store: archive.org-style items on the blob store (local or S3).

An item is a name and the files under it at their dataset paths, with
``<item>_meta.json`` written last as the commit marker: a marker is only ever
present beside every file it lists. Writers take the item's lock
(``writing(item)``), readers of a whole item wait for it (``locked(item)``), and
every path is checked by ``sandcrawler.core.paths`` before anything is written
(docs/fileset.md, "The item store" and "The item store's path checks").
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any, TypedDict, cast

import orjson

from sandcrawler.core.errors import DatabaseUnavailable, InvalidName, NotFound
from sandcrawler.core.paths import UnsafePath, find_clash, safe_relative_path, shown
from sandcrawler.db.locks import Held, NamedLocks
from sandcrawler.storage.blobs import BlobStore, BlobWriter, check_key

log = logging.getLogger("sandcrawler.items")

ITEMS_PREFIX = "items"
META_SUFFIX = "_meta.json"


def check_item_name(name: str) -> str:
    """``name`` (in NFC) if it is one safe path segment, else UnsafePath."""
    name = safe_relative_path(name, what="item name")
    if "/" in name:
        raise UnsafePath(f"item name {shown(name)} is not a single path segment")
    return name


class ItemPlatform(TypedDict):
    """Where an archived item's files came from."""

    name: str
    domain: str | None
    id: str | None
    base_url: str | None


class ItemMarker(TypedDict, total=False):
    """An item's metadata file, written last: the item is complete. A TypedDict:
    it is read back as stored, older markers included; ``result`` is validated
    where it is used."""

    item_name: str
    #: the strategy that archived it (``archiveorg-fileset``, ...)
    ingest_strategy: str
    platform: ItemPlatform
    #: the platform's item metadata, kept as it came
    metadata: dict[str, Any]
    #: 14 digits, UTC
    archived: str
    #: the platform's manifest entries' JSON, as ``FilesetManifestFile.to_json`` gave them
    platform_manifest: list[dict[str, Any]]
    #: the strategy's ``ArchiveStrategyResult.to_json()``
    result: dict[str, Any]


class ItemStore:
    """Items on ``store``; ``locks`` are the database's (``partial(exclusive,
    engine)``), shared by every process that writes to this store."""

    def __init__(self, store: BlobStore, locks: NamedLocks) -> None:
        self.store = store
        self.locks = locks

    @contextmanager
    def locked(self, item: str) -> Iterator[None]:
        """The item's lock, to read the item whole: waits while it is written."""
        with self.locks(_lock_name(item)):
            yield

    @contextmanager
    def writing(self, item: str) -> Iterator[ItemWrite]:
        """One write of ``item``, under its lock: the marker is withdrawn first;
        leaving the block without ``commit`` removes the files this write created."""
        with self.locks(_lock_name(item)) as held:
            write = ItemWrite(self, item, held)
            self.store.delete(self.meta_key(item))
            try:
                yield write
            finally:
                if not write.committed:
                    write.discard()

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

    def exists(self, item: str, path: str) -> bool:
        return self.store.exists(self.file_key(item, path))

    def read_meta(self, item: str) -> ItemMarker | None:
        try:
            raw = self.store.get(self.meta_key(item))
        except NotFound:
            return None
        try:
            meta = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return None  # a damaged marker is no marker: the item is archived again
        return cast(ItemMarker, meta) if isinstance(meta, dict) else None

    def files(self, item: str) -> list[str]:
        """Paths of the files in ``item`` (the metadata file left out)."""
        prefix = f"{ITEMS_PREFIX}/{check_item_name(item)}/"
        meta = self.meta_key(item)
        return [b.key[len(prefix):] for b in self.store.list(prefix) if b.key != meta]


class ItemWrite:
    """A write of one item, made by ``ItemStore.writing`` under the item's lock."""

    def __init__(self, items: ItemStore, item: str, held: Held) -> None:
        self.items = items
        self.item = item
        self.committed = False
        self._held = held
        self._created: list[str] = []  # keys that were not there before this write
        self._lock = threading.Lock()  # files of one item may be written side by side

    def _key(self, path: str) -> str:
        key = self.items.file_key(self.item, path)
        with self._lock:
            if key not in self._created and not self.items.store.exists(key):
                self._created.append(key)
        return key

    def open_file(self, path: str) -> BlobWriter:
        """A writer of the file ``path`` (committed or aborted by the caller)."""
        return self.items.store.open_write(self._key(path), hashes=())

    def put_file(self, path: str, data: bytes | IO[bytes]) -> None:
        self.items.store.put(self._key(path), data, hashes=())

    def commit(self, meta: ItemMarker) -> None:
        """Write the marker, once every file it lists is written. DatabaseUnavailable,
        and no marker, if the lock may be another process's by now."""
        try:
            self._held.check()
        except DatabaseUnavailable as e:
            raise DatabaseUnavailable(f"item {self.item} not marked complete: {e}") from e
        self.items.store.put(self.items.meta_key(self.item),
                             orjson.dumps(meta, option=orjson.OPT_INDENT_2), hashes=())
        self.committed = True

    def discard(self) -> None:
        """Remove the files this write created, while the lock is still ours: with
        the lock lost they may be another writer's now, and are left in place."""
        try:
            self._held.check()
        except DatabaseUnavailable as e:
            log.warning("%s: %d file(s) of a failed write left in place: %s",
                        self.item, len(self._created), e)
            return
        for key in reversed(self._created):
            self.items.store.delete(key)


def _lock_name(item: str) -> str:
    return f"sandcrawler-item:{check_item_name(item)}"
