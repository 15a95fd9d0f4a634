"""Spool files: bodies on their way from the web to the store (a download
being hashed, a page replayed from the archive for parsing).

They live in one directory (``<data_dir>/spool``, moved by ``fileset.tmp_dir``),
not the system's temporary directory, and each name says which process made it,
so that ``sweep`` can remove the files of dead processes of this host, and
``sandcrawler store cleanup`` old files of other hosts (docs/architecture.md,
"Spool files").
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

PREFIX = "sandcrawler-"
_NAME = re.compile(r"^sandcrawler-(?P<host>[A-Za-z0-9_.-]*)-(?P<pid>\d+)-")


def _host() -> str:
    return re.sub(r"[^A-Za-z0-9_.]", "_", socket.gethostname())[:64]


def spool_file(directory: str | Path | None, suffix: str = ".spool") -> Path:
    """A new empty file in ``directory`` (created if missing; None: the system's
    temporary directory), named after this process."""
    if directory is not None:
        Path(directory).mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f"{PREFIX}{_host()}-{os.getpid()}-", suffix=suffix,
                                dir=directory)
    os.close(fd)
    return Path(name)


@contextlib.contextmanager
def spooled(directory: str | Path | None, suffix: str = ".spool") -> Iterator[Path]:
    """A new spool file for the block, removed after it."""
    path = spool_file(directory, suffix)
    try:
        yield path
    finally:
        path.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def sweep(directory: str | Path, *, older_than: float | None = None) -> int:
    """Remove spool files that no live process owns: those of this host's dead
    processes, and, with ``older_than`` (seconds), other hosts' older than that.
    How many were removed."""
    removed = 0
    here = _host()
    now = time.time()
    with contextlib.suppress(FileNotFoundError), os.scandir(directory) as entries:
        for entry in entries:
            match = _NAME.match(entry.name)
            if match is None or not entry.is_file(follow_symlinks=False):
                continue
            if match["host"] == here:  # its owner can be asked
                gone = not _alive(int(match["pid"]))
            else:
                try:
                    gone = older_than is not None and now - entry.stat().st_mtime > older_than
                except FileNotFoundError:
                    continue
            if gone:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry.path)
                    removed += 1
    return removed
