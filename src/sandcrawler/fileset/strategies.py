"""The six archive strategies: ``{web,archiveorg}-{file,fileset,fileset-bundled}``.

Each has ``check_existing(item)`` (is this dataset already archived, complete
and as the platform describes it?) and ``process(item)`` (archive it now):
into our web archive in one WARC session (``web``), into the item store under
the item's lock (``archiveorg``), or as the platform's one "download all" zip
(``-bundled``). Every download is checked against every size and checksum the
platform gave; the first that does not match decides the status
(docs/fileset.md, "Strategies and how one is chosen").
"""

from __future__ import annotations

import re
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from sandcrawler.config import FilesetSettings
from sandcrawler.core.errors import RecordError
from sandcrawler.core.filemeta import MetaWriter, read_chunks
from sandcrawler.core.spool import spooled
from sandcrawler.core.timestamps import now14
from sandcrawler.fileset.bundle import BundleEntry, list_bundle
from sandcrawler.fileset.checksums import ChecksumWriter, needs_bytes
from sandcrawler.fileset.parallel import in_parallel
from sandcrawler.records.capture import CdxRecord
from sandcrawler.records.files import FileMeta, Terminal
from sandcrawler.records.fileset import (
    ArchiveStrategyResult,
    FilesetManifestFile,
    FilesetPlatformItem,
    IngestStrategy,
)
from sandcrawler.records.statuses import FilesetStatus, Status
from sandcrawler.storage.items import ItemStore, ItemWrite
from sandcrawler.web.archive.captures import WarcSession, WebArchive, WebCapture
from sandcrawler.web.http.fetch import HttpFetcher, TooLarge

DOWNLOAD_ERROR = FilesetStatus.ERROR_PLATFORM_DOWNLOAD
#: status of a file, or a fileset, that was archived and verified
OK = FilesetStatus.SUCCESS


class ArchiveFailure(RecordError):
    """One file could not be archived as the platform describes it."""

    status = DOWNLOAD_ERROR


@dataclass(slots=True)
class ArchiveContext:
    """What strategies archive with."""

    fileset: FilesetSettings  # limits
    fetcher: HttpFetcher
    web: WebArchive
    items: ItemStore
    spool_dir: Path | None = None  # where downloads wait (sandcrawler.core.spool)


_MISMATCH = {"md5": FilesetStatus.MISMATCH_MD5, "sha1": FilesetStatus.MISMATCH_SHA1,
             "sha256": FilesetStatus.MISMATCH_SHA256}


def mismatch(expected: FilesetManifestFile, meta: FileMeta) -> FilesetStatus | None:
    """``mismatch-size`` / ``-md5`` / ``-sha1`` / ``-sha256`` when the bytes are not
    what the platform said; None when every size and checksum it gave agrees."""
    if expected.size is not None and expected.size != meta.size_bytes:
        return FilesetStatus.MISMATCH_SIZE
    for algo, got in (("md5", meta.md5hex), ("sha1", meta.sha1hex), ("sha256", meta.sha256hex)):
        want = getattr(expected, algo)
        if want and want.lower() != got:
            return _MISMATCH[algo]
    return None


def _mismatch_message(expected: FilesetManifestFile, meta: FileMeta,
                      status: FilesetStatus) -> str:
    algo = status.removeprefix("mismatch-")
    if algo == "size":
        return (f"{expected.path}: the platform says {expected.size:,} bytes, "
                f"got {meta.size_bytes:,}")
    got = {"md5": meta.md5hex, "sha1": meta.sha1hex, "sha256": meta.sha256hex}[algo]
    return f"{expected.path}: the platform's {algo} is {getattr(expected, algo)}, got {got}"


def archived(expected: FilesetManifestFile, meta: FileMeta, terminal: Terminal,
             unverified: list[str] | None = None) -> FilesetManifestFile:
    """The manifest entry of a verified file: what the platform said, completed
    with every checksum we computed and where the fetch ended; the platform's
    checksums we could not compute are named in ``extra.unverified``."""
    update: dict[str, Any] = {
        "size": meta.size_bytes, "md5": meta.md5hex, "sha1": meta.sha1hex, "sha256": meta.sha256hex,
        "mimetype": expected.mimetype or meta.mimetype or None, "status": OK,
        "terminal_url": terminal.terminal_url, "terminal_dt": terminal.terminal_dt}
    if unverified:
        update["extra"] = (expected.extra or {}) | {"unverified": unverified}
    return expected.model_copy(update=update)


@dataclass(slots=True)
class _Archived:
    """One file archived and verified: its manifest entry, and the result's
    fields that describe it when it is the only file (a ``*-file`` strategy)."""

    entry: FilesetManifestFile
    fields: dict[str, Any]


def _verify_spool(expected: FilesetManifestFile, spool: Path | None) -> list[str]:
    """The checksums beyond md5/sha1/sha256 checked over a captured body kept on
    disk (``fileset.checksums``); the names of those left unverified."""
    sums = ChecksumWriter(expected, lambda chunk: None)
    if sums.hashers and spool is not None:
        with spool.open("rb") as f:
            for chunk in read_chunks(f):
                sums.write(chunk)
    elif sums.hashers:
        return sorted(expected.checksums or {})
    try:
        return sums.check()
    except RecordError as e:
        raise ArchiveFailure(str(e), e.status) from None


def _budget(expected: FilesetManifestFile, left: int) -> int:
    """Bytes a download may have: what the platform declared (one more byte is
    already a mismatch), else what is left of ``max_total_size``."""
    return expected.size if expected.size is not None else max(left, 0)


def _too_large(e: TooLarge, expected: FilesetManifestFile | None) -> ArchiveFailure:
    """A body past its budget: past the size the platform declared is a
    mismatch; past what is left of ``max_total_size``, the dataset is too large."""
    if expected is not None and expected.size is not None:
        return ArchiveFailure(f"{expected.path}: more than the {expected.size:,} bytes "
                              "the platform says", FilesetStatus.MISMATCH_SIZE)
    return ArchiveFailure(str(e), FilesetStatus.TOO_LARGE_SIZE)


def check_bundle(platform: list[FilesetManifestFile], entries: list[BundleEntry],
                 terminal: Terminal) -> list[FilesetManifestFile]:
    """The manifest of a bundle: its interior files. Every file the platform lists
    must be inside, with its size and checksums (``bundle-incomplete``,
    ``mismatch-*``); extra members (a MANIFEST.TXT) are listed too."""
    by_path = {e.path: e for e in entries}
    by_name: dict[str, list[BundleEntry]] = {}
    for e in entries:
        by_name.setdefault(e.path.rsplit("/", 1)[-1], []).append(e)
    matched: dict[str, FilesetManifestFile] = {}
    for want in platform:
        entry = by_path.get(want.path)
        if entry is None:
            candidates = by_name.get(want.path.rsplit("/", 1)[-1], [])
            entry = candidates[0] if len(candidates) == 1 else None
        if entry is None:
            raise ArchiveFailure(f"the bundle has no file {want.path!r}",
                                 FilesetStatus.BUNDLE_INCOMPLETE)
        meta = FileMeta(size_bytes=entry.size, sha1hex=entry.sha1, sha256hex=entry.sha256,
                        md5hex=entry.md5, mimetype=entry.mimetype)
        if status := mismatch(want, meta):
            raise ArchiveFailure(f"in the bundle: {_mismatch_message(want, meta, status)}",
                                 status)
        matched[entry.path] = want
    return [
        FilesetManifestFile(
            path=e.path, size=e.size, md5=e.md5, sha1=e.sha1, sha256=e.sha256,
            mimetype=(matched[e.path].mimetype if e.path in matched else None) or e.mimetype,
            platform_url=matched[e.path].platform_url if e.path in matched else None,
            extra=matched[e.path].extra if e.path in matched else None,
            status=OK, terminal_url=terminal.terminal_url, terminal_dt=terminal.terminal_dt)
        for e in entries
    ]


class FilesetStrategy(ABC):
    """``check_existing`` and ``process`` for one strategy."""

    def __init__(self, strategy: IngestStrategy, ctx: ArchiveContext) -> None:
        self.strategy = strategy
        self.ctx = ctx

    @abstractmethod
    def check_existing(self, item: FilesetPlatformItem) -> ArchiveStrategyResult | None: ...

    @abstractmethod
    def process(self, item: FilesetPlatformItem) -> ArchiveStrategyResult: ...

    @property
    def success(self) -> FilesetStatus:
        return FilesetStatus.SUCCESS_FILE if self.strategy.entity == "file" else OK

    def _result(self, status: Status, manifest: list[FilesetManifestFile],
                **fields: Any) -> ArchiveStrategyResult:
        return ArchiveStrategyResult(ingest_strategy=self.strategy, status=status,
                                     manifest=manifest, **fields)

    def _failed(self, item: FilesetPlatformItem, done: Mapping[int, FilesetManifestFile],
                failure: RecordError, failed: int | None = None) -> ArchiveStrategyResult:
        """A failure: the files verified (``done``, by their place in the
        manifest), the one that failed (``failed``) with its status, and the rest
        as the platform described them."""
        manifest = [
            done[i] if i in done
            else f.model_copy(update={"status": failure.status}) if i == failed else f
            for i, f in enumerate(item.manifest or [])
        ]
        return self._result(failure.status, manifest, error_message=str(failure))

    def _archive_files(self, item: FilesetPlatformItem,
                       one: Callable[[FilesetManifestFile, int], _Archived],
                       ) -> ArchiveStrategyResult:
        """Every file of the manifest through ``one(expected, budget)``, several at
        once (``fileset.parallel_downloads``; ``sandcrawler.fileset.parallel``):
        the result, or the failure of the earliest file that failed. A file of
        undeclared size may have what is left of ``max_total_size`` when it
        starts; the sum is checked again at the end."""
        manifest = item.manifest or []
        limit = self.ctx.fileset.max_total_size
        spent = [0]
        lock = threading.Lock()  # the workers add to one running total

        def job(expected: FilesetManifestFile) -> _Archived:
            with lock:
                left = limit - spent[0]
            got = one(expected, _budget(expected, left))
            with lock:
                spent[0] += got.entry.size or 0
            return got

        results, failure = in_parallel(manifest, self.ctx.fileset.parallel_downloads, job)
        done = {i: got.entry for i, got in results.items()}
        if failure is not None:
            return self._failed(item, done, failure[1], failure[0])
        total = sum(got.entry.size or 0 for got in results.values())
        if total > limit:
            return self._failed(item, done, ArchiveFailure(
                f"{total:,} bytes downloaded, more than max_total_size {limit:,}",
                FilesetStatus.TOO_LARGE_SIZE))
        fields: dict[str, Any] = {}
        if self.strategy.entity == "file" and results:
            fields = results[0].fields
        return self._result(self.success, [done[i] for i in range(len(manifest))], **fields)

    def _list_bundle(self, path: str | Path) -> list[BundleEntry]:
        """``list_bundle`` within the configured limits."""
        s = self.ctx.fileset
        return list_bundle(path, max_files=s.max_file_count, max_total_size=s.max_total_size,
                           max_ratio=s.bundle_max_ratio)


class WebStrategy(FilesetStrategy):
    """``web-file``, ``web-fileset``, ``web-fileset-bundled``: our web archive."""

    def check_existing(self, item: FilesetPlatformItem) -> ArchiveStrategyResult | None:
        web = self.ctx.web
        if self.strategy.bundled:
            chain = web.lookup(item.web_bundle_url or "")
            if chain is None:
                return None
            terminal = chain[-1]
            with spooled(self.ctx.spool_dir) as spool:
                with spool.open("wb") as f:
                    web.read_payload(terminal, f)
                try:
                    entries = self._list_bundle(spool)
                    manifest = check_bundle(item.manifest or [], entries, terminal.to_terminal())
                except RecordError:
                    return None  # the capture we hold is not this dataset: archive again
            return self._result(FilesetStatus.SUCCESS_EXISTING, manifest,
                                bundle_file_meta=web.payload_meta(terminal),
                                bundle_terminal=terminal.to_terminal(), bundle_cdx=terminal,
                                bundle_revisit_cdx=_revisit_cdx(web, terminal))
        manifest = []
        rows = []
        for expected in item.manifest or []:
            chain = web.lookup(expected.platform_url or "")
            meta = web.payload_meta(chain[-1]) if chain else None
            if chain is None or meta is None or mismatch(expected, meta):
                return None  # not captured, or not as the platform describes it now
            rows.append(chain[-1])
            manifest.append(archived(expected, meta, chain[-1].to_terminal()))
        fields = {}
        if self.strategy.entity == "file" and rows:
            meta = web.payload_meta(rows[0])
            assert meta is not None
            fields = {"file_file_meta": meta, "file_terminal": rows[0].to_terminal(),
                      "file_cdx": rows[0],
                      "file_revisit_cdx": _revisit_cdx(web, rows[0])}
        return self._result(FilesetStatus.SUCCESS_EXISTING, manifest, **fields)

    def process(self, item: FilesetPlatformItem) -> ArchiveStrategyResult:
        with self.ctx.web.session() as session:
            if self.strategy.bundled:
                result = self._bundle(session, item)
            else:
                result = self._files(session, item)
            if result.status in (OK, FilesetStatus.SUCCESS_FILE):
                session.commit()
            return result  # leaving the block unfinished aborts the session

    def _capture(self, session: WarcSession, url: str | None, max_bytes: int,
                 expected: FilesetManifestFile | None, *, keep_body: bool) -> WebCapture:
        if not url:
            raise ArchiveFailure("no download URL")
        try:
            capture = session.capture(url, max_bytes=max_bytes, keep_body=keep_body)
        except TooLarge as e:
            raise _too_large(e, expected) from None
        except RecordError as e:
            raise ArchiveFailure(f"{url}: {e}") from None
        if capture.status_code != 200:
            capture.close()
            raise ArchiveFailure(f"{url}: HTTP {capture.status_code} at {capture.terminal.url}")
        return capture

    def _files(self, session: WarcSession, item: FilesetPlatformItem) -> ArchiveStrategyResult:
        # files fetched side by side stream into spool files of their own (a body
        # that may go straight into the WARC file holds the file while it streams)
        side_by_side = self.ctx.fileset.parallel_downloads > 1 and len(item.manifest or []) > 1

        def one(expected: FilesetManifestFile, budget: int) -> _Archived:
            capture = self._capture(session, expected.platform_url, budget, expected,
                                    keep_body=side_by_side or needs_bytes(expected))
            try:
                meta = capture.file_meta
                assert meta is not None
                if status := mismatch(expected, meta):
                    raise ArchiveFailure(_mismatch_message(expected, meta, status), status)
                unverified = _verify_spool(expected, capture.spool)
            finally:
                capture.close()
            return _Archived(
                archived(expected, meta, capture.terminal.to_terminal(), unverified),
                {"file_file_meta": meta, "file_terminal": capture.terminal.to_terminal(),
                 "file_cdx": capture.terminal, "file_revisit_cdx": capture.revisit_of})

        return self._archive_files(item, one)

    def _bundle(self, session: WarcSession, item: FilesetPlatformItem) -> ArchiveStrategyResult:
        try:
            capture = self._capture(session, item.web_bundle_url,
                                    self.ctx.fileset.max_total_size, None, keep_body=True)
        except ArchiveFailure as e:
            return self._failed(item, {}, e)
        try:
            assert capture.spool is not None and capture.file_meta is not None
            entries = self._list_bundle(capture.spool)
            manifest = check_bundle(item.manifest or [], entries, capture.terminal.to_terminal())
        except RecordError as e:
            return self._failed(item, {}, e)
        finally:
            capture.close()
        return self._result(
            OK, manifest, bundle_file_meta=capture.file_meta,
            bundle_terminal=capture.terminal.to_terminal(), bundle_cdx=capture.terminal,
            bundle_revisit_cdx=capture.revisit_of)


def _revisit_cdx(web: WebArchive, row: CdxRecord) -> CdxRecord | None:
    return web.original(row) if row.is_revisit else None


@dataclass(slots=True)
class _Fetched:
    meta: FileMeta
    terminal: Terminal


def download(fetcher: HttpFetcher, url: str | None, write: Callable[[bytes], Any],
             max_bytes: int, expected: FilesetManifestFile | None) -> _Fetched:
    """GET ``url`` (redirects followed) into ``write``; the file's metadata and
    terminal. ArchiveFailure for anything that keeps it from us."""
    if not url:
        raise ArchiveFailure("no download URL")
    dt = now14()
    writer = MetaWriter(write)
    try:
        got = fetcher.download(url, writer, max_bytes)
    except TooLarge as e:
        raise _too_large(e, expected) from None
    except RecordError as e:
        raise ArchiveFailure(f"{url}: {e}") from None
    finally:
        meta, _ = writer.finish()
    return _Fetched(meta, Terminal(terminal_url=got.url, terminal_dt=dt,
                                   terminal_status_code=got.status_code,
                                   terminal_sha1hex=meta.sha1hex))


_BUNDLE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


def bundle_name(item_name: str, url: str) -> str:
    """The bundle's file name in its item: the URL's last segment if it names a
    zip, else ``<item>.zip``."""
    last = _BUNDLE_NAME.sub("_", unquote(urlsplit(url).path.rsplit("/", 1)[-1])).strip("._")
    return last if last.lower().endswith(".zip") else f"{item_name}.zip"


class ArchiveorgStrategy(FilesetStrategy):
    """``archiveorg-file``, ``-fileset``, ``-fileset-bundled``: the item store."""

    def check_existing(self, item: FilesetPlatformItem) -> ArchiveStrategyResult | None:
        name = item.archiveorg_item_name or ""
        with self.ctx.items.locked(name):  # an item being written is not read half done
            meta = self.ctx.items.read_meta(name)
        if meta is None or meta.get("ingest_strategy") != self.strategy.value:
            return self._in_dataset_item(item)
        if meta.get("platform_manifest") != _platform_manifest(item):
            return None  # the platform describes the files differently now: archive again
        try:
            result = ArchiveStrategyResult.model_validate(meta["result"])
        except (KeyError, ValueError):
            return None
        return result.model_copy(update={"status": FilesetStatus.SUCCESS_EXISTING})

    def _in_dataset_item(self, item: FilesetPlatformItem) -> ArchiveStrategyResult | None:
        """A file-level request whose dataset's item is archived (complete: its
        metadata file exists) and holds the file as a file of its own (not inside
        a bundle), with the very manifest entry the platform gives now: the file
        is there, nothing to do."""
        parent, manifest = item.archiveorg_dataset_item, item.manifest or []
        if not parent or len(manifest) != 1 or self.strategy.bundled:
            return None
        wanted = manifest[0]
        with self.ctx.items.locked(parent):  # after the item's own lock, not inside it
            meta = self.ctx.items.read_meta(parent)
            if (meta is None or str(meta.get("ingest_strategy", "")).endswith("-bundled")
                    or wanted.to_json() not in (meta.get("platform_manifest") or [])
                    or not self.ctx.items.exists(parent, wanted.path)):
                return None
        try:
            result = ArchiveStrategyResult.model_validate(meta["result"])
        except (KeyError, ValueError):
            return None
        held = [f for f in result.manifest if f.path == wanted.path and f.status == OK]
        if len(held) != 1:
            return None
        f = held[0]
        if not (f.sha1 and f.terminal_url and f.terminal_dt):
            return None
        file_meta = FileMeta(size_bytes=f.size or 0, sha1hex=f.sha1, sha256hex=f.sha256 or "",
                             md5hex=f.md5 or "", mimetype=f.mimetype or "")
        terminal = Terminal(terminal_url=f.terminal_url, terminal_dt=f.terminal_dt,
                            terminal_status_code=200, terminal_sha1hex=f.sha1)
        return self._result(FilesetStatus.SUCCESS_EXISTING, [f], file_file_meta=file_meta,
                            file_terminal=terminal, archiveorg_item_name=parent)

    def process(self, item: FilesetPlatformItem) -> ArchiveStrategyResult:
        name = item.archiveorg_item_name or ""
        # One writer of the item at a time; its marker withdrawn until every file is
        # verified again, and the files a failure created removed on the way out.
        with self.ctx.items.writing(name) as write:
            archive = self._bundle if self.strategy.bundled else self._files
            result = archive(item, write)
            if result.status in (OK, FilesetStatus.SUCCESS_FILE):
                write.commit({
                    "item_name": name, "ingest_strategy": self.strategy.value,
                    "platform": {"name": item.platform_name, "domain": item.platform_domain,
                                 "id": item.platform_id, "base_url": item.web_base_url},
                    "metadata": item.archiveorg_item_meta or {},
                    "archived": now14(),
                    "platform_manifest": _platform_manifest(item),
                    "result": result.to_json()})
        return result

    def _files(self, item: FilesetPlatformItem, write: ItemWrite) -> ArchiveStrategyResult:
        def one(expected: FilesetManifestFile, budget: int) -> _Archived:
            # committed on a clean exit only: verified bytes, or nothing
            with write.open_file(expected.path) as writer:
                sums = ChecksumWriter(expected, writer.write)
                got = download(self.ctx.fetcher, expected.platform_url, sums.write, budget,
                               expected)
                if status := mismatch(expected, got.meta):
                    raise ArchiveFailure(_mismatch_message(expected, got.meta, status), status)
                unverified = sums.check()
            return _Archived(archived(expected, got.meta, got.terminal, unverified),
                             {"file_file_meta": got.meta, "file_terminal": got.terminal})

        return self._archive_files(item, one)

    def _bundle(self, item: FilesetPlatformItem, write: ItemWrite) -> ArchiveStrategyResult:
        with spooled(self.ctx.spool_dir) as spool:
            try:
                with spool.open("wb") as f:
                    got = download(self.ctx.fetcher, item.web_bundle_url, f.write,
                                   self.ctx.fileset.max_total_size, None)
                entries = self._list_bundle(spool)
                manifest = check_bundle(item.manifest or [], entries, got.terminal)
                path = bundle_name(write.item, got.terminal.terminal_url)
                with spool.open("rb") as f:
                    write.put_file(path, f)
            except RecordError as e:
                return self._failed(item, {}, e)
        return self._result(OK, manifest, bundle_file_meta=got.meta,
                            bundle_terminal=got.terminal, bundle_archiveorg_path=path)


def _platform_manifest(item: FilesetPlatformItem) -> list[dict[str, Any]]:
    """What the platform said about the files (paths, sizes, checksums, URLs):
    an archived item is current only while the platform still says the same."""
    return [f.to_json() for f in item.manifest or []]


#: archive backend (the strategy name's first part) -> its strategies
BACKENDS: dict[str, type[FilesetStrategy]] = {"web": WebStrategy, "archiveorg": ArchiveorgStrategy}


def make_strategy(strategy: IngestStrategy, ctx: ArchiveContext) -> FilesetStrategy:
    return BACKENDS[strategy.backend](strategy, ctx)
