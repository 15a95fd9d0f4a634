"""The match index loaded straight from a Crossref dump, without the crossref table.

A dump is one of:

* JSON lines: one work per line, or one API answer (``{"message": work}``);
* the same, gzip-compressed (``.gz``);
* a directory in the layout of Crossref's public data file: many ``*.json.gz``
  (or ``*.jsonl.gz``, ``*.json``, ``*.jsonl``), each a JSON object
  ``{"items": [work, ...]}`` or JSON lines.

Resuming: the index remembers, under marks of its own (``dump:<file>``), how
many works of each file it has loaded, written in the same update as those
works (``IndexWriter.transaction``). A run killed at any point starts each file
again after its last mark; a file done is passed over. Loading a work twice
changes nothing (works are keyed by DOI), so a batch loaded but not marked is
only loaded again. Bad lines (not JSON, not a work, no DOI) are counted and
passed over: one bad line never stops a load.
"""

from __future__ import annotations

import gzip
import logging
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import orjson

from sandcrawler.errors import RecordError
from sandcrawler.identifiers import normalize_doi
from sandcrawler.match.index import IndexWriter
from sandcrawler.match.records import CatalogRecord, from_crossref
from sandcrawler.match.sync import SyncStats

log = logging.getLogger(__name__)

BATCH = 5000
SUFFIXES = (".json.gz", ".jsonl.gz", ".json", ".jsonl")


def dump_files(path: Path) -> list[Path]:
    """The dump's files, in name order (a directory), or the file itself."""
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.is_file() and p.name.endswith(SUFFIXES))
    return [path]


def _open(path: Path) -> IO[bytes]:
    raw = path.open("rb")
    if raw.read(2) == b"\x1f\x8b":  # gzip, whatever the name says
        raw.seek(0)
        return gzip.open(raw, "rb")  # type: ignore[return-value]
    raw.seek(0)
    return raw


def works_of(path: Path) -> Iterator[Any]:
    """Every work object of one file, in order (None for a line that is not
    JSON): JSON lines of works, API answers or ``{"items": [...]}`` objects, or
    one such object spread over many lines."""
    with _open(path) as f:
        first = True
        for line in f:
            if not line.strip():
                continue
            try:
                obj = orjson.loads(line)
            except orjson.JSONDecodeError:
                if first and line.lstrip().startswith(b"{"):
                    # one object over many lines (pretty-printed)
                    try:
                        obj = orjson.loads(line + f.read())
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
    for path in dump_files(root):
        key = "dump:" + (path.relative_to(root).as_posix() if root.is_dir() else path.name)
        done = int(index.meta(key) or 0)
        if done < 0:
            continue  # the whole file is in (marked -1)
        position = 0
        records: list[CatalogRecord] = []
        for work in works_of(path):
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
