"""A request's form, read as a hostile client may send it (``grobid-serve``):
``multipart/form-data`` (a PDF in ``input``) or ``application/x-www-form-urlencoded``,
within a size limit counted while the body arrives (413), a deadline for the
whole body (408) and a limit on parts; files are spooled to disk as they come,
fields kept in memory. Anything malformed is a ``FormRejected`` with its status
(docs/grobid-service.md, "Limits")."""

from __future__ import annotations

import email.message
import email.utils
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO
from urllib.parse import parse_qsl

import anyio

from sandcrawler.core.spool import spool_file

#: a part's headers may not be longer than this (they are a few lines)
MAX_PART_HEADERS = 16 * 1024
#: fields and parts in one form: processCitationList's citations and GROBID's
#: few parameters
MAX_FIELDS = 100_000
MULTIPART = "multipart/form-data"
URLENCODED = "application/x-www-form-urlencoded"


class FormRejected(Exception):
    """A request whose body cannot be read: ``status`` is what to answer."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class UploadedFile:
    """A file part, spooled: its field name, the file name the client gave."""

    filename: str | None
    path: Path
    size: int = 0


@dataclass
class Form:
    fields: dict[str, list[str]] = field(default_factory=dict)
    files: dict[str, UploadedFile] = field(default_factory=dict)

    def get(self, name: str) -> str | None:
        values = self.fields.get(name)
        return values[0] if values else None

    def getlist(self, name: str) -> list[str]:
        return list(self.fields.get(name, ()))

    def add(self, name: str, value: str) -> None:
        self.fields.setdefault(name, []).append(value)

    def close(self) -> None:
        """Remove the spooled files."""
        for upload in self.files.values():
            upload.path.unlink(missing_ok=True)
        self.files.clear()


@dataclass(frozen=True, slots=True)
class Limits:
    #: bytes of body in all
    max_bytes: int
    #: seconds for the whole body to arrive
    deadline: float
    #: where file parts are spooled (None: the system's temporary directory)
    spool_dir: Path | None = None
    #: parts that are files even without a file name (GROBID's ``input``)
    file_fields: frozenset[str] = frozenset({"input"})


async def read_form(content_type: str | None, content_length: str | None,
                    body: AsyncIterator[bytes], limits: Limits) -> Form:
    """The form a body holds; FormRejected (400, 408, 413) when it cannot be read
    within the limits. The caller closes the form (its spooled files)."""
    kind, params = _content_type(content_type)
    if kind not in (MULTIPART, URLENCODED):
        raise FormRejected(400, f"expected a body of {MULTIPART} or {URLENCODED}, "
                             f"not {(kind or 'none')[:80]}")
    if content_length is not None:
        if not content_length.isdigit():
            raise FormRejected(400, "Content-Length is not a number")
        if int(content_length) > limits.max_bytes:
            raise FormRejected(413, _too_large(limits))
    form = Form()
    try:
        with anyio.fail_after(limits.deadline):
            if kind == URLENCODED:
                await _read_urlencoded(body, limits, form)
            else:
                boundary = params.get("boundary", "")
                if not 1 <= len(boundary) <= 70:
                    raise FormRejected(400, "a multipart body needs a boundary (1 to 70 "
                                            "characters)")
                parser = MultipartParser(boundary.encode("latin-1"), form, limits)
                try:
                    received = 0
                    async for chunk in body:
                        received += len(chunk)
                        if received > limits.max_bytes:
                            raise FormRejected(413, _too_large(limits))
                        parser.feed(chunk)
                    parser.finish()
                finally:
                    parser.close()
    except TimeoutError:
        form.close()
        raise FormRejected(408, f"the request's body did not arrive within {limits.deadline:g} s "
                             "(setting grobid_serve.upload_timeout)") from None
    except BaseException:
        form.close()
        raise
    return form


def _too_large(limits: Limits) -> str:
    return (f"the request's body is over {limits.max_bytes / 2**20:g} MiB "
            "(setting grobid_serve.max_upload_mb)")


def _content_type(value: str | None) -> tuple[str, dict[str, str]]:
    if not value:
        return "", {}
    msg = email.message.Message()
    msg["content-type"] = value
    params = {k.lower(): str(v) for k, v in (msg.get_params(header="content-type") or [])[1:]}
    return msg.get_content_type(), params


async def _read_urlencoded(body: AsyncIterator[bytes], limits: Limits, form: Form) -> None:
    data = bytearray()
    async for chunk in body:
        data += chunk
        if len(data) > limits.max_bytes:
            raise FormRejected(413, _too_large(limits))
    try:
        pairs = parse_qsl(bytes(data).decode("utf-8"), keep_blank_values=True,
                          max_num_fields=MAX_FIELDS, errors="strict")
    except UnicodeDecodeError:
        raise FormRejected(400, "the form is not UTF-8") from None
    except ValueError:
        raise FormRejected(400, f"the form has more than {MAX_FIELDS} fields") from None
    for name, value in pairs:
        form.add(name, value)


class MultipartParser:
    """A streaming ``multipart/form-data`` parser (RFC 7578): ``feed`` it the
    body's chunks as they arrive, then ``finish``. File parts go straight to a
    spool file; the rest stays in memory (the body's own limit bounds it)."""

    _PREAMBLE, _AFTER_DELIMITER, _HEADERS, _BODY, _END = range(5)

    def __init__(self, boundary: bytes, form: Form, limits: Limits) -> None:
        self.delimiter = b"--" + boundary
        self.separator = b"\r\n" + self.delimiter
        self.form = form
        self.limits = limits
        self.buffer = bytearray()
        self.state = self._PREAMBLE
        self.parts = 0
        self._name = ""
        self._text: bytearray | None = None
        self._file: IO[bytes] | None = None
        self._upload: UploadedFile | None = None

    def feed(self, chunk: bytes) -> None:
        self.buffer += chunk
        while self._step():
            pass

    def finish(self) -> None:
        if self.state != self._END:
            raise FormRejected(400, "the multipart body ends before its closing boundary")

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def _step(self) -> bool:
        """One move of the state machine; False when it needs more bytes."""
        buf = self.buffer
        if self.state == self._PREAMBLE:
            at = buf.find(self.delimiter)
            if at < 0:
                # the preamble: keep only what may be the start of the delimiter
                del buf[:max(0, len(buf) - len(self.delimiter) - 2)]
                return False
            if at > 0 and buf[at - 2:at] != b"\r\n":
                del buf[:at + 1]  # the boundary's text inside the preamble
                return True
            del buf[:at + len(self.delimiter)]
            self.state = self._AFTER_DELIMITER
            return True
        if self.state == self._AFTER_DELIMITER:
            if len(buf) < 2:
                return False
            if buf[:2] == b"--":
                self.state = self._END
                buf.clear()
                return False
            end = buf.find(b"\r\n")
            if end < 0:
                if len(buf) > 1024:
                    raise FormRejected(400, "malformed multipart body (after a boundary)")
                return False
            if buf[:end].strip(b" \t"):
                raise FormRejected(400, "malformed multipart body (after a boundary)")
            del buf[:end + 2]
            self.state = self._HEADERS
            return True
        if self.state == self._HEADERS:
            if buf[:2] == b"\r\n":  # a part without headers: no name, no disposition
                raise FormRejected(400, "a multipart part without Content-Disposition: "
                                        "form-data")
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                if len(buf) > MAX_PART_HEADERS:
                    raise FormRejected(400, "a multipart part's headers are too long")
                return False
            self._open_part(bytes(buf[:end]))
            del buf[:end + 4]
            self.state = self._BODY
            return True
        if self.state == self._BODY:
            at = buf.find(self.separator)
            if at < 0:
                keep = len(self.separator) - 1
                if len(buf) > keep:
                    self._write(bytes(buf[:len(buf) - keep]))
                    del buf[:len(buf) - keep]
                return False
            self._write(bytes(buf[:at]))
            del buf[:at + len(self.separator)]
            self._close_part()
            self.state = self._AFTER_DELIMITER
            return True
        buf.clear()  # the epilogue, ignored
        return False

    def _open_part(self, raw: bytes) -> None:
        self.parts += 1
        if self.parts > MAX_FIELDS:
            raise FormRejected(400, f"the form has more than {MAX_FIELDS} parts")
        msg = email.message.Message()
        for line in raw.split(b"\r\n"):
            name, colon, value = line.decode("utf-8", "replace").partition(":")
            if not colon:
                raise FormRejected(400, "malformed multipart part header")
            msg[name.strip()] = value.strip()
        if msg.get_content_disposition() != "form-data":
            raise FormRejected(400, "a multipart part without Content-Disposition: form-data")
        param = msg.get_param("name", header="content-disposition")
        if isinstance(param, tuple):  # RFC 2231 (charset, language, value)
            param = email.utils.collapse_rfc2231_value(param)
        if not isinstance(param, str):
            raise FormRejected(400, "a multipart part without a name")
        name = param
        filename = msg.get_filename()
        self._name = name
        if filename is not None or name in self.limits.file_fields:
            if name in self.form.files:
                raise FormRejected(400, f"more than one file in the field {name[:40]!r}")
            path = spool_file(self.limits.spool_dir, ".upload")
            self._upload = UploadedFile(filename, path)
            self.form.files[name] = self._upload
            self._file = open(path, "wb")  # noqa: SIM115 (closed by _close_part or close)
        else:
            self._text = bytearray()

    def _write(self, data: bytes) -> None:
        if not data:
            return
        if self._file is not None and self._upload is not None:
            self._file.write(data)
            self._upload.size += len(data)
        elif self._text is not None:
            self._text += data

    def _close_part(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
            self._upload = None
        elif self._text is not None:
            try:
                self.form.add(self._name, bytes(self._text).decode("utf-8"))
            except UnicodeDecodeError:
                raise FormRejected(400, f"the field {self._name[:40]!r} is not UTF-8") from None
            self._text = None
