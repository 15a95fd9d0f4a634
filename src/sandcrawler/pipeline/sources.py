"""Where items come from: JSON-lines files or stdin, paths of files, zip archives, Kafka."""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Protocol

import orjson

from sandcrawler.core.errors import ConfigError, RecordError
from sandcrawler.core.work import Item, Outcome, in_batches
from sandcrawler.records.statuses import FileRecordStatus, PipelineStatus


class Source(Protocol):
    #: what the progress bar counts ("B" for bytes of a file, "rec" otherwise) and its total
    progress_unit: str
    progress_total: int | None

    def batches(self, size: int) -> Iterator[list[Item]]:
        """Lists of items; an empty list means "nothing new for now" (idle)."""
        ...

    def progress_position(self) -> int: ...

    def ack(self, items: list[Item]) -> None:
        """Everything in ``items`` is durable downstream; the source may forget it."""
        ...

    def close(self) -> None: ...


class JsonLinesSource:
    """Lines of a file (``-`` is stdin); blank lines are passed over, numbering is kept."""

    #: a line longer than this is a record error (``line-too-long``), never read
    #: into memory: real records (a Crossref work, a request) are kilobytes
    MAX_LINE = 64 * 2**20

    def __init__(self, path: str | Path, *, limit: int | None = None,
                 max_line: int = MAX_LINE) -> None:
        self.max_line = max_line
        #: the input as the user named it, for messages about the whole input
        self.name = "stdin" if str(path) == "-" else str(path)
        self._fh: IO[bytes]
        if str(path) == "-":
            self._fh = sys.stdin.buffer
            self.progress_total = None
            self.progress_unit = "rec"
        else:
            try:
                self._fh = open(path, "rb")  # noqa: SIM115 (closed in close())
            except OSError as e:
                raise ConfigError(f"cannot read input {path}: {e.strerror}") from None
            self.progress_total = os.fstat(self._fh.fileno()).st_size
            self.progress_unit = "B"
        self.limit = limit
        self._bytes = 0
        self._count = 0

    def progress_position(self) -> int:
        return self._bytes if self.progress_unit == "B" else self._count

    def _lines(self) -> Iterator[tuple[bytes, int]]:
        """Each line, and its length; a line over ``max_line`` bytes comes back
        empty-handed (``b""``, its full length): it is never held in memory."""
        while line := self._fh.readline(self.max_line + 1):
            size = len(line)
            if size > self.max_line and not line.endswith(b"\n"):
                while (rest := self._fh.readline(2**20)) and not rest.endswith(b"\n"):
                    size += len(rest)
                yield b"", size + len(rest)
                continue
            yield line, size

    def _items(self) -> Iterator[Item]:
        for line_no, (line, size) in enumerate(self._lines(), start=1):
            self._bytes += size
            if size and not line:
                where = f"line {line_no}"
                yield Item(where, b"", outcome=Outcome(
                    where, PipelineStatus.LINE_TOO_LONG, kind="error",
                    error=f"{size:,} bytes, more than {self.max_line:,}: not read"))
                continue
            if not line.strip():
                continue
            if self.limit is not None and self._count >= self.limit:
                break
            self._count += 1
            yield Item(f"line {line_no}", line.rstrip(b"\r\n"))

    def batches(self, size: int) -> Iterator[list[Item]]:
        return in_batches(self._items(), size)

    def ack(self, items: list[Item]) -> None:
        pass

    def close(self) -> None:
        if self._fh is not sys.stdin.buffer:
            self._fh.close()


class CdxSource(JsonLinesSource):
    """The captures of a CDX file as file records: ``{"warc_path", "warc_offset",
    "warc_csize", "sha1", "name", "cdx": {…}}``, whatever consumes them. Lines that
    name no file (the header, revisits, captures whose status is not 200) and
    malformed ones (``bad-cdx``) come with their outcome already decided."""

    def _items(self) -> Iterator[Item]:
        # here, not above: a JSON-lines source (`citations parse -`) needs no WARC tools
        from sandcrawler.records.pdf import ProcessResult
        from sandcrawler.web.archive.cdx import CaptureSkip, read_capture
        from sandcrawler.web.file_records import cdx_file_record

        for item in super()._items():
            try:
                capture = read_capture(item.data)
            except RecordError as e:
                yield Item(item.where, item.data, outcome=Outcome.failed(item.where, e))
                continue
            if isinstance(capture, CaptureSkip):
                cdx = capture.cdx
                output = (ProcessResult(path=cdx.url, status=capture.status,
                                        sha1hex=cdx.sha1hex) if cdx else None)
                yield Item(item.where, item.data, outcome=Outcome(
                    item.where, capture.status, kind="skip", error=capture.detail,
                    output=output))
                continue
            yield Item(item.where, orjson.dumps(cdx_file_record(capture)))


class _FileItemsSource:
    """What the sources that yield one item per file share: counting, ``--limit``,
    batching. Subclasses yield items from ``_items``, calling ``_take`` first."""

    progress_unit = "rec"
    progress_total: int | None = None

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self._count = 0

    def _take(self) -> bool:
        """Count one more item, unless the limit is reached (then False)."""
        if self.limit is not None and self._count >= self.limit:
            return False
        self._count += 1
        return True

    def _items(self) -> Iterator[Item]:
        raise NotImplementedError

    def progress_position(self) -> int:
        return self._count

    def batches(self, size: int) -> Iterator[list[Item]]:
        return in_batches(self._items(), size)

    def ack(self, items: list[Item]) -> None:
        pass

    def close(self) -> None:
        pass


class PathsSource(_FileItemsSource):
    """Files named on the command line; directories are walked (sorted, hidden
    entries skipped), so a run over the same tree always meets files in one order."""

    def __init__(self, paths: list[str], *, limit: int | None = None) -> None:
        super().__init__(limit)
        self.paths = paths

    def _files(self) -> Iterator[str]:
        for path in self.paths:
            if os.path.isdir(path):
                for root, dirs, files in os.walk(path):
                    dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                    for name in sorted(files):
                        if not name.startswith("."):
                            yield os.path.join(root, name)
            else:
                yield path

    def _items(self) -> Iterator[Item]:
        for path in self._files():
            if not self._take():
                return
            yield Item(path, os.fsencode(path))


class ZipSource(_FileItemsSource):
    """The files inside zip archives, each streamed to a temporary file (memory stays
    flat; disk holds only the batches in flight) and removed once its batch is done.
    Items are ``{"path": <temporary file>, "name": "<archive>!<member>"}``."""

    def __init__(self, archives: list[str], *, limit: int | None = None) -> None:
        super().__init__(limit)
        self.archives = archives
        self._tmp = tempfile.mkdtemp(prefix="sandcrawler-zip-")

    def _items(self) -> Iterator[Item]:
        for archive in self.archives:
            try:
                zf = zipfile.ZipFile(archive)
            except (OSError, zipfile.BadZipFile) as e:
                raise ConfigError(f"cannot read zip archive {archive}: {e}") from None
            with zf:
                for info in zf.infolist():
                    if info.is_dir():
                        continue
                    if not self._take():
                        return
                    name = f"{archive}!{info.filename}"
                    target = os.path.join(self._tmp, f"{self._count}.member")
                    payload = orjson.dumps({"path": target, "name": name})
                    try:
                        with zf.open(info) as src, open(target, "wb") as dst:
                            shutil.copyfileobj(src, dst, 1024 * 1024)
                    except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as e:
                        # A damaged member is that record's error; the run goes on.
                        yield Item(name, payload, outcome=Outcome(
                            name, FileRecordStatus.BAD_ZIP_MEMBER, kind="error",
                            error=f"{name}: damaged in the archive: {e}"))
                        continue
                    yield Item(name, payload)

    def ack(self, items: list[Item]) -> None:
        for item in items:
            with contextlib.suppress(OSError, ValueError):
                os.unlink(orjson.loads(item.data)["path"])

    def close(self) -> None:
        shutil.rmtree(self._tmp, ignore_errors=True)
