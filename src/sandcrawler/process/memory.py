"""This process's memory, as the PDF readers watch it (PDFium keeps what each
loaded page drew until its document closes: a reader reopens the document when
its memory has grown too much)."""

from __future__ import annotations

import os


def anon_rss() -> int:
    """Bytes of this process's resident memory that are not file-backed (Linux;
    0 elsewhere, where a reader then never reopens its document)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            fields = f.read().split()
        return (int(fields[1]) - int(fields[2])) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, IndexError, ValueError):
        return 0
