"""Our capture index as CDXJ, the index format of pywb (and of OutbackCDX's
exports): one line per capture, sorted bytewise,

    surt timestamp {"url": …, "mime": …, "status": …, "digest": …,
                    "length": …, "offset": …, "filename": …}     (on one line)

``digest`` is the payload's sha1 in base32, as CDX files have it; ``length`` and
``offset`` are the record's (compressed) bytes in its WARC file; ``filename`` is
the WARC file's key in the blob store (``warcs/YYYY/MM/DD/SANDCRAWLER-….warc.gz``):
pywb finds the files when its ``archive_paths`` is the store's directory (or a
URL serving it). A redirect also has ``redirect`` (its target); a revisit's
``mime`` is ``warc/revisit``. Lines with the same key and timestamp are in the
order of their JSON, so the whole output is sorted as ``LC_ALL=C sort`` sorts,
which pywb's binary search needs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import orjson
from sqlalchemy import Engine, select

from sandcrawler.db.engine import begin
from sandcrawler.db.schema import web_cdx
from sandcrawler.records.capture import CdxRecord

#: rows between two progress reports
PROGRESS_EVERY = 10_000


def cdxj_line(row: CdxRecord) -> str:
    """One capture as a CDXJ line (no newline)."""
    fields: dict[str, str] = {"url": row.url, "mime": row.mimetype or "unk"}
    if row.status_code is not None:
        fields["status"] = str(row.status_code)
    if row.sha1b32:
        fields["digest"] = row.sha1b32
    if row.location:
        fields["redirect"] = row.location
    fields |= {"length": str(row.warc_csize), "offset": str(row.warc_offset),
               "filename": row.warc_path}
    return f"{row.surt} {row.datetime} {orjson.dumps(fields).decode()}"


def _rows(engine: Engine, batch: int) -> Iterator[CdxRecord]:
    """Every row of ``web_cdx`` by key and timestamp, in bytewise order of the key
    (PostgreSQL's collation would otherwise sort by the locale), streamed."""
    key = web_cdx.c.surt.collate("C") if engine.dialect.name == "postgresql" else web_cdx.c.surt
    query = select(web_cdx).order_by(key, web_cdx.c.datetime)
    with begin(engine) as conn:
        result = conn.execution_options(stream_results=True, yield_per=batch).execute(query)
        for row in result:
            yield CdxRecord.from_row(row._mapping)


def write_cdxj(engine: Engine, write: Callable[[str], object], *,
               on_progress: Callable[[int], None] | None = None,
               batch: int = 2000) -> int:
    """Write every capture as a CDXJ line (with its newline) through ``write``,
    sorted; ``on_progress(count)`` every ``PROGRESS_EVERY`` lines. Returns how
    many lines were written."""
    count = 0
    group: list[str] = []  # the lines of one key and timestamp, sorted before written
    last: tuple[str, str] | None = None
    for row in _rows(engine, batch):
        if (row.surt, row.datetime) != last:
            for line in sorted(group):
                write(line + "\n")
            group, last = [], (row.surt, row.datetime)
        group.append(cdxj_line(row))
        count += 1
        if on_progress is not None and count % PROGRESS_EVERY == 0:
            on_progress(count)
    for line in sorted(group):
        write(line + "\n")
    return count
