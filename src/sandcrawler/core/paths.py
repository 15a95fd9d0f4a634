"""The one rule for relative paths from outside, and the one clash check.

Blob keys, item store paths, zip bundle member names and the WARC file names of
file records come from input we do not control and are joined under a root.
``safe_relative_path`` returns a path in NFC when it can never name anything
outside the root it is joined to; ``find_clash`` reports paths that cannot sit
on one disk together. Each caller adds only what is its own and chooses the
status it reports (docs/architecture.md, "Safe relative paths").
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from sandcrawler.core.errors import InvalidName
from sandcrawler.records.statuses import StoreStatus

MAX_PATH_BYTES = 1024
MAX_SEGMENT_BYTES = 255
_DRIVE = re.compile(r"[A-Za-z]:")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")  # exactly Unicode's category Cc
_SHOWN = 120  # characters of an over-long path quoted in a message


class UnsafePath(InvalidName):
    """A path that breaks the rule above, or clashes with another; callers that
    report another status (``bad-key``, ``bad-name``) pass it as ``status``."""

    status = StoreStatus.UNSAFE_PATH


def path_problem(path: str) -> str | None:
    """Why ``path`` is not a safe relative path, or None when it is."""
    if not isinstance(path, str):
        return f"is not a string but {type(path).__name__}"
    if not path:
        return "is empty"
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return "is not valid Unicode"
    nfc = unicodedata.normalize("NFC", path)
    if len(nfc.encode("utf-8")) > MAX_PATH_BYTES:
        return f"is longer than {MAX_PATH_BYTES} bytes"
    if _CONTROL.search(nfc):
        return "contains a control character"
    if "\\" in nfc:
        return "contains a backslash"
    if nfc.startswith("/"):
        return "is absolute"
    if _DRIVE.match(nfc):
        return "starts with a drive letter"
    for segment in nfc.split("/"):
        if segment in ("", ".", ".."):
            return "has an empty, '.' or '..' segment"
        if len(segment.encode("utf-8")) > MAX_SEGMENT_BYTES:
            return f"has a segment longer than {MAX_SEGMENT_BYTES} bytes"
    return None


def safe_relative_path(path: str, *, what: str = "path",
                       status: StoreStatus | None = None) -> str:
    """``path`` in NFC if it is a safe relative path, else UnsafePath saying why
    (``what`` names it in the message; ``status`` overrides ``unsafe-path``)."""
    problem = path_problem(path)
    if problem is not None:
        raise UnsafePath(f"{what} {shown(path)} {problem}", status=status)
    return unicodedata.normalize("NFC", path)


def shown(path: object) -> str:
    """``repr(path)``, cut short for over-long paths."""
    text = repr(path)
    return text if len(text) <= _SHOWN else text[:_SHOWN] + "..."


@dataclass(frozen=True, slots=True)
class Clash:
    """Two paths that cannot both be written under one root."""

    path: str  # as given: the later duplicate, or the file that others need as a directory
    other: str  # as given: the earlier duplicate, or a path inside ``path``
    kind: Literal["duplicate", "file-is-directory"]

    def describe(self, what: str = "path") -> str:
        if self.kind == "file-is-directory":
            return (f"{what} {shown(self.path)} is a file, but {what} {shown(self.other)} "
                    "is inside it as a directory")
        how = ""
        if unicodedata.normalize("NFC", self.path) == unicodedata.normalize("NFC", self.other) \
                and self.path != self.other:
            how = " after Unicode normalisation"
        return f"{what} {shown(self.path)} duplicates {what} {shown(self.other)}{how}"


def find_clash(paths: Iterable[str]) -> Clash | None:
    """The first clash among ``paths`` (each already safe by the rule; a trailing
    ``/`` marks a directory): a duplicate after NFC, else a file that another
    path needs as a directory. None when they can all be written together."""
    seen: dict[str, str] = {}  # NFC path without its trailing "/" -> the path as given
    files: list[tuple[str, str]] = []  # (NFC key, as given)
    needed: dict[str, str] = {}  # NFC directory -> the first path inside it (or itself)
    for path in paths:
        is_dir = path.endswith("/")
        key = unicodedata.normalize("NFC", path[:-1] if is_dir else path)
        if key in seen:
            return Clash(path, seen[key], "duplicate")
        seen[key] = path
        parts = key.split("/")
        for i in range(1, len(parts)):
            needed.setdefault("/".join(parts[:i]), path)
        if not is_dir:
            files.append((key, path))
    for key, path in files:
        if key in needed:
            return Clash(path, needed[key], "file-is-directory")
    return None
