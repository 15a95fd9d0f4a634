"""Our capture index as CDXJ, the index format of pywb (and of OutbackCDX's
exports): one line per capture, sorted bytewise (as ``LC_ALL=C sort``), which
pywb's binary search needs.

Each line is ``surt timestamp {json}`` with ``url``, ``mime``, ``status``, ``digest``
(base32 sha1), ``length``, ``offset`` and ``filename`` (the WARC file's key in the
blob store, found by pywb's ``archive_paths``), and ``redirect`` for a redirect; a
revisit's ``mime`` is ``warc/revisit`` (docs/operations.md, "Replaying our
archive").
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
