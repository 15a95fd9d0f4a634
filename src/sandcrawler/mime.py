"""Normalised MIME types: the form stored in the PDF table's ``file:mime`` and in results.

Crawl records carry whatever the server said (``application/x-pdf``,
``Application/PDF; charset=binary``, ``unk``). Consumers compare MIME types, so
they are reduced to one spelling per kind of content here, and nowhere else.
"""

from __future__ import annotations

import re

OCTET_STREAM = "application/octet-stream"

#: aliases servers send -> the normal form
_ALIASES = {
    "application/x-pdf": "application/pdf",
    "application/acrobat": "application/pdf",
    "applications/pdf": "application/pdf",
    "text/pdf": "application/pdf",
    "text/x-pdf": "application/pdf",
    "application/ps": "application/postscript",
    "application/x-postscript": "application/postscript",
    "text/xml": "application/xml",
    "application/x-xml": "application/xml",
    "application/jats+xml": "application/xml",
    "application/xhtml+xml": "text/html",
    "application/html": "text/html",
    "binary/octet-stream": OCTET_STREAM,
    "application/octetstream": OCTET_STREAM,
    "application/download": OCTET_STREAM,
    "application/x-download": OCTET_STREAM,
    "application/force-download": OCTET_STREAM,
    "application/unknown": OCTET_STREAM,
}

#: placeholders for "no type" in CDX files and headers
_UNKNOWN = {"", "-", "unk", "unknown", "none", "null"}

_TOKEN = re.compile(r"^[a-z0-9][a-z0-9!#$&^_.+-]*/[a-z0-9][a-z0-9!#$&^_.+-]*$")


def normalize_mime(raw: str | None) -> str:
    """Lower-case ``type/subtype`` without parameters, aliases mapped to one form;
    anything unknown or malformed is ``application/octet-stream``."""
    if raw is None:
        return OCTET_STREAM
    base = raw.split(";", 1)[0].strip().lower()
    if base in _UNKNOWN:
        return OCTET_STREAM
    base = _ALIASES.get(base, base)
    return base if _TOKEN.match(base) else OCTET_STREAM
