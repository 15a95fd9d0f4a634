"""List the files inside a platform's "download all" zip (a bundle) without extracting it.

The manifest of a bundled fileset is read from the zip itself: each member is
decompressed in bounded chunks straight into the hashers and never written to
disk (zip-slip paths, symlinks and zip bombs are made for whoever extracts).
A dangerous bundle is refused with a ``BundleError`` whose ``status`` says why:
``bad-bundle``, ``unsafe-path``, ``too-many-files``, ``too-large-size``,
``zip-bomb`` (docs/fileset.md, "Bundle checks").
"""

from __future__ import annotations

import io
import itertools
import stat
import struct
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, cast

from sandcrawler.core.errors import RecordError
from sandcrawler.core.filemeta import CHUNK, file_metadata, open_file
from sandcrawler.core.paths import find_clash, path_problem, shown
from sandcrawler.records.statuses import FileRecordStatus, FilesetStatus, StoreStatus

#: a member must be bigger than this (uncompressed) for its ratio to count: tiny
#: files of repetitive text compress far beyond any sane ratio and are harmless
RATIO_FLOOR = 2**20
#: directory entries allowed on top of ``max_files`` when sizing up the central
#: directory before zipfile parses it (it builds an object per entry)
MAX_DIRECTORIES = 10_000
#: generous average size of one central directory record (46 bytes + name + extra)
CD_BYTES_PER_ENTRY = 1024

_EOCD = struct.Struct("<4s4H2LH")
_ZIP64_LOCATOR = struct.Struct("<4sLQL")
_ZIP64_EOCD = struct.Struct("<4sQ2H2L4Q")
_LOCAL_HEADER = struct.Struct("<4s5H3L2H")
_FLAG_ENCRYPTED = 0x1
_FLAG_UTF8 = 0x800
# zipfile's bzip2 and LZMA readers decompress each block of input with no limit
# on the output, so a few KiB can become gigabytes in memory; real bundles are
# stored or deflated, and those two are decompressed here with a bound.
_METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflated"}


class BundleError(RecordError):
    """A bundle we refuse; .status says why."""

    status = FilesetStatus.BAD_BUNDLE


@dataclass(frozen=True, slots=True)
class BundleEntry:
    """One file inside a bundle, as the fileset manifest lists it."""

    path: str
    size: int
    md5: str
    sha1: str
    sha256: str
    mimetype: str

    def to_manifest(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "size": self.size,
            "md5": self.md5,
            "sha1": self.sha1,
            "sha256": self.sha256,
            "mimetype": self.mimetype,
        }


def list_bundle(
    path: str | Path,
    *,
    max_files: int = 200,
    max_total_size: int = 64 * 2**30,
    max_ratio: float = 200.0,
) -> list[BundleEntry]:
    """The files in the zip at ``path``, in central-directory order, each hashed
    and sniffed from its decompressed bytes; directory entries are left out.

    Raises ``BundleError`` for a zip we refuse (see the module docstring), and
    ``RecordError`` (``not-a-file``/``unreadable``) when ``path`` cannot be read.
    """
    with open_file(path) as f:
        _check_directory_size(f, max_files + MAX_DIRECTORIES)
        try:
            with zipfile.ZipFile(f) as zf:
                infos = zf.infolist()
                cd_start = getattr(zf, "start_dir", None)
        except (
            zipfile.BadZipFile,
            EOFError,
            OSError,
            ValueError,
            struct.error,
            NotImplementedError,
            OverflowError,
        ) as e:
            raise BundleError(f"{path}: not a readable zip: {e}") from None
        if len(infos) > max_files + MAX_DIRECTORIES:
            raise BundleError(
                f"{len(infos)} entries in the central directory",
                status=FilesetStatus.TOO_MANY_FILES,
            )
        if not isinstance(cd_start, int):
            cd_start = _size(f)
        files = _check_members(infos)
        _check_limits(
            files, max_files=max_files, max_total_size=max_total_size, max_ratio=max_ratio
        )
        data_offsets = _check_layout(f, infos, cd_start)
        entries = []
        total = 0
        for info in files:
            chunks = _member_chunks(f, info, data_offsets[id(info)])
            meta = file_metadata(cast(IO[bytes], _ChunkStream(chunks)))
            total += meta.size_bytes
            # the sizes were checked as declared; this holds them to it as read
            if total > max_total_size:
                raise BundleError(
                    f"more than {max_total_size} bytes once decompressed",
                    status=FilesetStatus.TOO_LARGE_SIZE,
                )
            entries.append(
                BundleEntry(
                    info.orig_filename,
                    meta.size_bytes,
                    meta.md5hex,
                    meta.sha1hex,
                    meta.sha256hex,
                    meta.mimetype,
                )
            )
        return entries


def _size(f: IO[bytes]) -> int:
    return f.seek(0, io.SEEK_END)


def _read_at(f: IO[bytes], offset: int, n: int, what: str) -> bytes:
    """Exactly ``n`` bytes at ``offset``; fewer means the zip is cut short."""
    if offset < 0:
        raise BundleError(f"{what}: offset {offset} is before the start of the file")
    try:
        f.seek(offset)
        data = f.read(n)
    except OSError as e:
        raise RecordError(f"cannot read the bundle: {e.strerror}",
                          status=FileRecordStatus.UNREADABLE) from None
    if len(data) != n:
        raise BundleError(f"{what}: the file ends {n - len(data)} bytes too early")
    return data


def _check_directory_size(f: IO[bytes], max_entries: int) -> None:
    """Refuse a central directory too big to hold a permitted bundle before zipfile
    parses it, since zipfile keeps an object per record in memory."""
    size = _size(f)
    tail_len = min(size, _EOCD.size + 0xFFFF)  # the end record plus its longest comment
    tail = _read_at(f, size - tail_len, tail_len, "end of central directory")
    pos = tail.rfind(b"PK\x05\x06")
    if pos < 0 or tail_len - pos < _EOCD.size:
        raise BundleError("not a zip: no end of central directory record")
    _, _, _, _, entries, cd_size, _, _ = _EOCD.unpack_from(tail, pos)
    eocd_offset = size - tail_len + pos
    locator_offset = eocd_offset - _ZIP64_LOCATOR.size
    if locator_offset >= 0:
        locator = _read_at(f, locator_offset, _ZIP64_LOCATOR.size, "zip64 locator")
        if locator.startswith(b"PK\x06\x07"):
            # where zipfile looks for it too: right before the locator
            record = _read_at(
                f,
                locator_offset - _ZIP64_EOCD.size,
                _ZIP64_EOCD.size,
                "zip64 end of central directory",
            )
            if not record.startswith(b"PK\x06\x06"):
                raise BundleError("zip64 end of central directory record is missing")
            fields = _ZIP64_EOCD.unpack(record)
            entries, cd_size = fields[7], fields[8]
    if entries > max_entries or cd_size > max_entries * CD_BYTES_PER_ENTRY:
        raise BundleError(
            f"central directory of {entries} entries in {cd_size} bytes",
            status=FilesetStatus.TOO_MANY_FILES,
        )


def _name_problem(name: str) -> str | None:
    """Why the member name ``name`` is unsafe for extraction (``sandcrawler.core.paths``'
    rule; a directory entry ends in ``/``), or None."""
    return path_problem(name[:-1] if name.endswith("/") else name)


def _unicode_path(extra: bytes) -> str | None:
    """The name in an Info-ZIP Unicode Path extra field (0x7075), if there is one."""
    while len(extra) >= 4:
        kind, length = struct.unpack_from("<2H", extra)
        if kind == 0x7075 and length >= 5:
            return extra[4 + 5 : 4 + length].decode("utf-8", errors="replace")
        extra = extra[4 + length :]
    return None


def _check_members(infos: list[zipfile.ZipInfo]) -> list[zipfile.ZipInfo]:
    """Check every member's names, then every member's header; the file members,
    in order."""
    for info in infos:
        # orig_filename: zipfile's .filename is cut at a NUL, hiding it
        name = info.orig_filename
        problem = _name_problem(name)
        if problem is None:
            mode = info.external_attr >> 16
            if stat.S_ISLNK(mode):
                problem = "is a symbolic link"
            elif stat.S_IFMT(mode) not in (0, stat.S_IFREG, stat.S_IFDIR):
                problem = "is a special file"
        if problem:
            raise BundleError(f"member {shown(name)} {problem}", status=StoreStatus.UNSAFE_PATH)
        for other in {info.filename, _unicode_path(info.extra)} - {name, None}:
            # extractors that honour the Info-ZIP Unicode Path field (as zipfile's
            # .filename does from Python 3.12) would write the file under this name
            problem = _name_problem(other) if other is not None else None
            if problem:
                raise BundleError(
                    f"member {shown(name)} has another name {shown(other)} that {problem}",
                    status=StoreStatus.UNSAFE_PATH,
                )
    # macOS writes NFD, most others NFC: one path on disk, two names in the zip
    clash = find_clash(info.orig_filename for info in infos)
    if clash is not None:
        raise BundleError(clash.describe("member"), status=StoreStatus.UNSAFE_PATH)
    files = []
    for info in infos:
        name = info.orig_filename
        if name.endswith("/"):
            continue
        if info.flag_bits & _FLAG_ENCRYPTED:
            raise BundleError(f"member {name!r} is encrypted")
        if info.compress_type not in _METHODS:
            raise BundleError(
                f"member {name!r}: unsupported compression method {info.compress_type}"
            )
        if info.compress_type == zipfile.ZIP_STORED and info.compress_size != info.file_size:
            raise BundleError(
                f"member {name!r} is stored as {info.compress_size} bytes "
                f"but declares {info.file_size}"
            )
        files.append(info)
    return files


def _check_limits(
    files: list[zipfile.ZipInfo], *, max_files: int, max_total_size: int, max_ratio: float
) -> None:
    if len(files) > max_files:
        raise BundleError(f"{len(files)} files, more than {max_files}",
                          status=FilesetStatus.TOO_MANY_FILES)
    declared = sum(info.file_size for info in files)
    if declared > max_total_size:
        raise BundleError(
            f"{declared} bytes uncompressed, more than {max_total_size}",
            status=FilesetStatus.TOO_LARGE_SIZE,
        )
    for info in files:
        if info.file_size <= RATIO_FLOOR:
            continue
        ratio = info.file_size / info.compress_size if info.compress_size else float("inf")
        if ratio > max_ratio:
            raise BundleError(
                f"member {info.orig_filename!r} expands {ratio:.0f} times "
                f"({info.compress_size} -> {info.file_size} bytes)",
                status=FilesetStatus.ZIP_BOMB,
            )


def _check_layout(f: IO[bytes], infos: list[zipfile.ZipInfo], cd_start: int) -> dict[int, int]:
    """Check where each member's bytes lie; the offset of each one's data, by id().

    A member's extent runs from its local header to the end of its compressed
    data, with the header's length taken from the local header itself, as an
    extractor would read it. Extents that overlap are how a small zip names the
    same compressed bytes many times over (Fifield's non-recursive zip bomb).
    """
    extents = []
    for info in infos:
        name = info.orig_filename
        header = _read_at(f, info.header_offset, _LOCAL_HEADER.size, f"member {name!r}")
        fields = _LOCAL_HEADER.unpack(header)
        if fields[0] != b"PK\x03\x04":
            raise BundleError(f"member {name!r}: no local header at offset {info.header_offset}")
        name_len, extra_len = fields[9], fields[10]
        data_offset = info.header_offset + _LOCAL_HEADER.size + name_len + extra_len
        end = data_offset + info.compress_size
        extents.append((info.header_offset, end, data_offset, name_len, info))
    extents.sort(key=lambda extent: extent[:2])
    for (_, end, _, _, first), (start, *_, second) in itertools.pairwise(extents):
        if start < end:
            raise BundleError(
                f"members {first.orig_filename!r} and {second.orig_filename!r} overlap",
                status=FilesetStatus.ZIP_BOMB,
            )
    offsets = {}
    for start, end, data_offset, name_len, info in extents:
        name = info.orig_filename
        if end > cd_start:
            raise BundleError(
                f"member {name!r} runs into the central directory or past the end of the file"
            )
        # An extractor that walks the local headers goes by the name there, so
        # it has to be the name that was checked.
        local_name = _read_at(f, start + _LOCAL_HEADER.size, name_len, f"member {name!r}")
        encoding = "utf-8" if info.flag_bits & _FLAG_UTF8 else "cp437"
        if local_name != name.encode(encoding):
            raise BundleError(f"member {name!r}: its local header names it {local_name!r}")
        offsets[id(info)] = data_offset
    return offsets


def _member_chunks(f: IO[bytes], info: zipfile.ZipInfo, data_offset: int) -> Iterator[bytes]:
    """The member's bytes, at most ``CHUNK`` at a time, held to its declared size
    and CRC as they come.

    Decompressed here rather than by ``ZipFile.open``, which stops at the
    declared size and so cannot see a header that understates it. Never more
    than one byte past the declared size is decompressed.
    """
    name = info.orig_filename
    inflater = zlib.decompressobj(-zlib.MAX_WBITS) if info.compress_type else None
    position, left = data_offset, info.compress_size
    pending = b""  # compressed input the inflater has not consumed yet
    produced = crc = 0
    try:
        while True:
            if inflater is not None and inflater.eof:
                break
            if not pending:
                if left == 0:
                    if inflater is None:
                        break
                    raise BundleError(f"member {name!r}: its deflate stream is cut short")
                pending = _read_at(f, position, min(CHUNK, left), f"member {name!r}")
                position += len(pending)
                left -= len(pending)
            if inflater is None:
                out, pending = pending, b""
            else:
                out = inflater.decompress(pending, min(CHUNK, info.file_size - produced + 1))
                pending = inflater.unconsumed_tail
            produced += len(out)
            if produced > info.file_size:
                raise BundleError(
                    f"member {name!r} decompresses to more than the "
                    f"{info.file_size} bytes its header declares"
                )
            crc = zlib.crc32(out, crc)
            if out:
                yield out
    except zlib.error as e:
        raise BundleError(f"member {name!r}: corrupt deflate data: {e}") from None
    if inflater is not None and (inflater.unused_data or pending or left):
        raise BundleError(
            f"member {name!r}: compressed data continues after its deflate stream ends"
        )
    if produced != info.file_size:
        raise BundleError(
            f"member {name!r} decompresses to {produced} bytes; its header "
            f"declares {info.file_size}"
        )
    if crc != info.CRC:
        raise BundleError(f"member {name!r}: CRC-32 mismatch (bad data)")


class _ChunkStream(io.RawIOBase):
    """A read-only stream over an iterator of chunks, for ``file_metadata``."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        super().__init__()
        self._chunks = chunks
        self._buffer = b""

    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1, /) -> bytes:
        if not self._buffer:
            self._buffer = next(self._chunks, b"")
        if size is None or size < 0 or size >= len(self._buffer):
            out, self._buffer = self._buffer, b""
        else:
            out, self._buffer = self._buffer[:size], self._buffer[size:]
        return out
