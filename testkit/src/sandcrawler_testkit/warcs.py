"""WARC files with known captures, and the CDX lines that index them (for tests).

Written with warcio's own writer, so the records are what crawlers write:
gzip-per-record WARC/1.0 (or plain), HTTP response records with the headers
given, optionally a chunked transfer encoding or a gzip content encoding,
and revisit records.
"""

from __future__ import annotations

import gzip
import hashlib
import io
from dataclasses import dataclass, field
from pathlib import Path

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from sandcrawler.core.identifiers import sha1_base32
from sandcrawler.core.timestamps import warc_date
from sandcrawler.web.archive.cdx import surt


@dataclass
class Capture:
    url: str
    payload: bytes
    status: int = 200
    content_type: str = "application/pdf"
    chunked: bool = False  # Transfer-Encoding: chunked on the wire
    gzip_encoded: bool = False  # Content-Encoding: gzip on the wire
    revisit: bool = False
    timestamp: str = "20200102030405"
    #: the digest the CDX line claims; default: sha1 of the payload (decoded)
    digest: str | None = None
    extra_headers: list[tuple[str, str]] = field(default_factory=list)


def _chunked(data: bytes, size: int = 1000) -> bytes:
    out = io.BytesIO()
    for i in range(0, len(data), size):
        part = data[i : i + size]
        out.write(b"%x\r\n" % len(part) + part + b"\r\n")
    out.write(b"0\r\n\r\n")
    return out.getvalue()


def write_warc(path: Path, captures: list[Capture], *, compress: bool = True,
               warc_name: str | None = None) -> list[str]:
    """Write ``captures`` to ``path``; return one 11-column CDX line per capture
    (the WARC file named ``warc_name``, default the file's name)."""
    lines = []
    name = warc_name or path.name
    with open(path, "wb") as fh:
        writer = WARCWriter(fh, gzip=compress)
        for cap in captures:
            digest = cap.digest or sha1_base32(hashlib.sha1(cap.payload).hexdigest())
            headers = [("Content-Type", cap.content_type), *cap.extra_headers]
            body = cap.payload
            if cap.gzip_encoded:
                body = gzip.compress(body, mtime=0)
                headers.append(("Content-Encoding", "gzip"))
            if cap.chunked:
                body = _chunked(body)
                headers.append(("Transfer-Encoding", "chunked"))
            else:
                headers.append(("Content-Length", str(len(body))))
            reason = {200: "OK", 404: "Not Found", 302: "Found"}.get(cap.status, "Status")
            http = StatusAndHeaders(f"{cap.status} {reason}", headers, protocol="HTTP/1.1")
            date = warc_date(cap.timestamp)
            if cap.revisit:
                record = writer.create_revisit_record(
                    cap.url, digest=f"sha1:{digest}", refers_to_uri=cap.url,
                    refers_to_date=date, http_headers=http,
                    warc_headers_dict={"WARC-Date": date})
                mime, status = "warc/revisit", "-"
            else:
                record = writer.create_warc_record(
                    cap.url, "response", payload=io.BytesIO(body), http_headers=http,
                    warc_headers_dict={"WARC-Date": date})
                mime, status = cap.content_type, str(cap.status)
            offset = fh.tell()
            writer.write_record(record)
            size = fh.tell() - offset
            lines.append(" ".join([surt(cap.url), cap.timestamp, cap.url, mime, status, digest, "-",
                                   "-", str(size), str(offset), name]))
    return lines
