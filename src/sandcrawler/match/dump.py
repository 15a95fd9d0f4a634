"""The match index loaded straight from a Crossref dump, without the crossref table.

A dump is JSON lines (plain or gzip), a directory in the layout of Crossref's
public data file, or the same files in a tar archive, read in place. A dump cut
short loads what it holds, then stops with ``DamagedDump``. Loading resumes
after each file's last mark (``dump:<file>``, written with the works), and bad
lines are counted and passed over (docs/matching.md, "Loading the index from a dump").
"""

from __future__ import annotations

import gzip
import io
import logging
import tarfile
import time
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any, TypeVar

import orjson

from sandcrawler.core.errors import RecordError, SandcrawlerError
from sandcrawler.core.identifiers import normalize_doi
from sandcrawler.match.index import IndexWriter
from sandcrawler.match.records import CatalogRecord, from_crossref
from sandcrawler.match.sync import SyncStats

log = logging.getLogger(__name__)
T = TypeVar("T")

BATCH = 5000
SUFFIXES = (".json.gz", ".jsonl.gz", ".json", ".jsonl")
#: the longest line (or pretty-printed object) read whole
MAX_TEXT = 256 * 2**20


class DamagedDump(SandcrawlerError):
    """A dump that cannot be read to its end (cut short, or not gzip or tar
    where it says so): the load stops, keeping what it read before."""


class _TooLong(ValueError):
    """A line or object longer than ``MAX_TEXT``."""


#: what reading a cut-short or damaged gzip stream or tar archive raises
_DAMAGED = (EOFError, zlib.error, tarfile.TarError, OSError, _TooLong)


def _guarded(where: str, items: Iterator[T]) -> Iterator[T]:
    """``items``, a read error while producing them raised as DamagedDump
    (an error in the caller's own loop body is not caught here)."""
    try:
        yield from items
    except _DAMAGED as e:
        raise DamagedDump(f"{where} cannot be read to its end, damaged or cut short ({e}): "
                          "the works before that "
                          "point are in the index; run again on a whole copy to go on "
                          "from there") from None


def dump_parts(root: Path) -> Iterator[tuple[str, IO[bytes]]]:
    """Each file of the dump, named as its mark is kept, opened (gunzipped when
    it is gzip, whatever its name says): a directory's files in name order; a
    tar archive's members in the archive's order (Crossref ships its public data
    file as a tar of ``*.json.gz``, and Plus snapshots as ``all.json.tar.gz``:
    read as they are, never unpacked to disk); or the file itself. Each is read
    before the next is opened."""
    if root.is_dir():
        for path in sorted(p for p in root.rglob("*")
                           if p.is_file() and p.name.endswith(SUFFIXES)):
            with path.open("rb") as raw, _gunzipped(raw) as f:
                yield path.relative_to(root).as_posix(), f
    elif tarfile.is_tarfile(root):
        # streamed ("r|*"): a compressed archive cannot be sought in, and a member
        # done (or passed over) is only read past
        with tarfile.open(root, "r|*") as tar:
            for member in tar:
                if not (member.isfile() and member.name.endswith(SUFFIXES)):
                    continue
                packed = tar.extractfile(member)
                if packed is not None:
                    with packed, _gunzipped(packed) as f:
                        yield f"{root.name}/{member.name}", f
    else:
        with root.open("rb") as raw, _gunzipped(raw) as f:
            yield root.name, f


def _gunzipped(raw: IO[bytes]) -> IO[bytes]:
    if isinstance(raw, io.BufferedReader) and raw.peek(2)[:2] == b"\x1f\x8b":
        return gzip.open(raw, "rb")  # type: ignore[return-value]
    return raw


def _read(f: IO[bytes], reader: Callable[[int], bytes]) -> bytes:
    """At most ``MAX_TEXT`` bytes from ``reader``: a line or an object longer
    than that (a gzip bomb of one endless line) is not a Crossref dump."""
    data = reader(MAX_TEXT + 1)
    if len(data) > MAX_TEXT:
        raise _TooLong(f"a line or object over {MAX_TEXT // 2**20:,} MiB, where a file of "
                       "Crossref's public data file holds some tens of MiB")
    return data


def works_in(f: IO[bytes]) -> Iterator[Any]:
    """Every work object of one file, in order (None for a line that is not
    JSON): JSON lines of works, API answers or ``{"items": [...]}`` objects, or
    one such object spread over many lines."""
    first = True
    while line := _read(f, f.readline):
        if not line.strip():
            continue
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            if first and line.lstrip().startswith(b"{"):
                # one object over many lines (pretty-printed)
                try:
                    obj = orjson.loads(line + _read(f, f.read))
                except orjson.JSONDecodeError:
                    yield None
                    return
                yield from _unwrap(obj)
                return
            yield None
            continue
        first = False
        yield from _unwrap(obj)


def _unwrap(obj: Any) -> list[Any]:
    """The works in one JSON value: an API answer's ``message`` (a work, or a
    list's ``items``), a public data file's ``items``, or the work itself."""
    if isinstance(obj, dict) and isinstance(obj.get("message"), dict):
        obj = obj["message"]
    if isinstance(obj, dict) and isinstance(obj.get("items"), list):
        return list(obj["items"])
    return [obj]


def record_of_work(work: Any) -> CatalogRecord | None:
    """A work's record; None for what is not a work with a DOI."""
    if not isinstance(work, dict):
        return None
    try:
        doi = normalize_doi(work.get("DOI"))
    except RecordError:
        return None
    return from_crossref(doi, work)


def load_dump(index: IndexWriter, dump: str | Path, *, rebuild: bool = False,
              progress: Callable[[int], object] | None = None,
              batch: int = BATCH) -> SyncStats:
    """Load every work of ``dump`` not loaded yet into ``index``."""
    started = time.monotonic()
    if rebuild:
        index.clear()
    read = indexed = bad = 0
    root = Path(dump).resolve()
    for name, f in _guarded(f"the dump {root}", dump_parts(root)):
        key = "dump:" + name
        done = int(index.meta(key) or 0)
        if done < 0:
            continue  # the whole file is in (marked -1)
        position = 0
        records: list[CatalogRecord] = []
        for work in _guarded(f"the dump's file {name}", works_in(f)):
            position += 1
            if position <= done:
                continue
            record = record_of_work(work)
            if record is None:
                bad += 1
            else:
                records.append(record)
            if position - done >= batch:
                indexed += _write(index, records, key, position)
                read += position - done
                if progress:
                    progress(position - done)
                done, records = position, []
        indexed += _write(index, records, key, -1)
        read += position - done
        if progress:
            progress(position - done)
    if rebuild or read > 50_000:
        index.optimize()  # a long load leaves many segments (embedded: FTS5's)
    if bad:
        log.warning("match index: %d entries of %s were not works with a DOI; passed over",
                    bad, root)
    return SyncStats(read, indexed, time.monotonic() - started, index.size(), 0)


def _write(index: IndexWriter, records: list[CatalogRecord], key: str, mark: int) -> int:
    """A batch and its file's mark in one update (-1: the file is done)."""
    with index.transaction():
        n = index.upsert(records)
        index.set_meta(key, str(mark))
    return n
