"""Listing a platform's "download all" zip without extracting it, and refusing hostile zips."""

from __future__ import annotations

import hashlib
import io
import os
import stat
import struct
import tracemalloc
import warnings
import zipfile
import zlib
from pathlib import Path
from typing import Any, BinaryIO

import pytest

from sandcrawler.core.errors import RecordError
from sandcrawler.core.filemeta import file_metadata
from sandcrawler.fileset import bundle
from sandcrawler.fileset.bundle import BundleEntry, BundleError, list_bundle

MiB = 2**20


def make_zip(
    path: Path,
    members: list[tuple[str | zipfile.ZipInfo, bytes]],
    compression: int = zipfile.ZIP_DEFLATED,
) -> Path:
    with zipfile.ZipFile(path, "w", compression) as zf:
        for name, data in members:
            zf.writestr(name, data)
    return path


# the zip format's local file header and central directory record (APPNOTE 4.3.7, 4.3.12)
LOCAL_HEADER = struct.Struct("<4s5H3L2H")
CENTRAL_RECORD = struct.Struct("<4s6H3L5H2L")


def local_header(
    name: bytes, payload: bytes, *, size: int, crc: int, method: int = 0, flags: int = 0
) -> bytes:
    fields = (20, flags, method, 0, 0x21, crc, len(payload), size, len(name), 0)
    return LOCAL_HEADER.pack(b"PK\x03\x04", *fields) + name + payload


def central_record(
    name: bytes,
    *,
    offset: int,
    csize: int,
    size: int,
    crc: int,
    method: int = 0,
    flags: int = 0,
    extra: bytes = b"",
) -> bytes:
    """A central directory record, made by Unix, of a regular file."""
    made_by, mode = 0x031E, (stat.S_IFREG | 0o644) << 16
    fields = (made_by, 20, flags, method, 0, 0x21, crc, csize, size, len(name), len(extra))
    return CENTRAL_RECORD.pack(b"PK\x01\x02", *fields, 0, 0, 0, mode, offset) + name + extra


def end_record(count: int, cd_size: int, cd_offset: int) -> bytes:
    return struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, count, count, cd_size, cd_offset, 0)


def raw_zip(
    path: Path,
    members: list[tuple[bytes, bytes]],
    *,
    method: int = 0,
    flags: int = 0,
    declared_size: int | None = None,
) -> Path:
    """A zip written byte by byte, for what ``zipfile`` refuses to write."""
    body = b""
    directory = b""
    for name, data in members:
        payload = zlib.compress(data)[2:-4] if method == zipfile.ZIP_DEFLATED else data
        size = len(data) if declared_size is None else declared_size
        crc = zlib.crc32(data[:size])  # a liar that also fixes up its CRC
        directory += central_record(
            name,
            offset=len(body),
            csize=len(payload),
            size=size,
            crc=crc,
            method=method,
            flags=flags,
        )
        body += local_header(name, payload, size=size, crc=crc, method=method, flags=flags)
    path.write_bytes(body + directory + end_record(len(members), len(directory), len(body)))
    return path


def refused(path: Path, status: str, **limits: Any) -> BundleError:
    with pytest.raises(BundleError) as caught:
        list_bundle(path, **limits)
    assert caught.value.status == status, str(caught.value)
    assert isinstance(caught.value, RecordError)
    return caught.value


# --- what a good bundle lists ---------------------------------------------------------


def test_lists_files_in_order_with_hashes_and_mimetypes(tmp_path: Path) -> None:
    inner = make_zip(tmp_path / "inner.zip", [("x.txt", b"not opened")])
    members = [
        ("data/", b""),
        ("data/table.csv", b"id,name\n1,alpha\n2,beta\n"),
        ("data/raw/", b""),
        ("data/raw/blob.bin", os.urandom(3 * MiB + 5)),
        ("README.md", b"# A dataset\n" * 1000),
        ("empty.txt", b""),
        ("nested.zip", inner.read_bytes()),
    ]
    path = make_zip(tmp_path / "bundle.zip", members)

    entries = list_bundle(path)

    files = [(name, data) for name, data in members if not name.endswith("/")]
    assert [e.path for e in entries] == [name for name, _ in files]
    for entry, (name, data) in zip(entries, files, strict=True):
        assert entry == BundleEntry(
            path=name,
            size=len(data),
            md5=hashlib.md5(data).hexdigest(),
            sha1=hashlib.sha1(data).hexdigest(),
            sha256=hashlib.sha256(data).hexdigest(),
            mimetype=file_metadata(data).mimetype,
        )
    assert entries[0].mimetype == "text/csv"
    assert entries[-1].mimetype == "application/zip"  # a nested zip is just a file
    assert entries[0].to_manifest() == {
        "path": "data/table.csv",
        "size": len(files[0][1]),
        "md5": hashlib.md5(files[0][1]).hexdigest(),
        "sha1": hashlib.sha1(files[0][1]).hexdigest(),
        "sha256": hashlib.sha256(files[0][1]).hexdigest(),
        "mimetype": "text/csv",
    }


def test_stored_members_and_non_ascii_names(tmp_path: Path) -> None:
    data = "naïve,café\n".encode()
    path = make_zip(tmp_path / "b.zip", [("données/été.csv", data)], zipfile.ZIP_STORED)
    [entry] = list_bundle(path)
    assert (entry.path, entry.size, entry.sha1) == (
        "données/été.csv",
        len(data),
        hashlib.sha1(data).hexdigest(),
    )


class Unseekable(io.RawIOBase):
    def __init__(self, f: BinaryIO) -> None:
        self.f = f

    def writable(self) -> bool:
        return True

    def write(self, b: Any) -> int:
        return self.f.write(b)


def test_streamed_zip_with_data_descriptors_and_zip64(tmp_path: Path) -> None:
    # how platforms stream a "download all": sizes after the data, zip64 extras
    path = tmp_path / "streamed.zip"
    with path.open("wb") as raw, zipfile.ZipFile(Unseekable(raw), "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("a.txt", b"hello " * 1000)
        with zf.open("b.bin", "w", force_zip64=True) as w:
            w.write(b"xyz" * 100_000)
        zf.writestr("c.txt", b"")
    with zipfile.ZipFile(path) as zf:
        assert all(info.flag_bits & 0x8 for info in zf.infolist())
    assert [(e.path, e.size) for e in list_bundle(path)] == [
        ("a.txt", 6000),
        ("b.bin", 300_000),
        ("c.txt", 0),
    ]


def test_empty_zip_lists_nothing(tmp_path: Path) -> None:
    path = make_zip(tmp_path / "empty.zip", [])
    assert list_bundle(path) == []
    assert list_bundle(make_zip(tmp_path / "dirs.zip", [("a/", b""), ("a/b/", b"")])) == []


def test_nothing_is_extracted(tmp_path: Path) -> None:
    path = make_zip(tmp_path / "b.zip", [("evil.txt", b"x"), ("d/f.txt", b"y")])
    before = sorted(tmp_path.rglob("*"))
    assert os.getcwd() == str(tmp_path)  # conftest runs every test in its tmp_path
    assert len(list_bundle(path)) == 2
    assert sorted(tmp_path.rglob("*")) == before


def test_missing_file_is_a_record_error(tmp_path: Path) -> None:
    with pytest.raises(RecordError) as caught:
        list_bundle(tmp_path / "nope.zip")
    assert caught.value.status == "unreadable"


# --- unsafe paths --------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "../evil",
        "a/../../evil",
        "a/..",
        "/etc/passwd",
        "\\evil",
        "C:\\evil",
        "C:/evil",
        "c:evil",
        "a\\b",
        "a//b",
        "./a",
        "a/./b",
        "a\x01b",
        "a\nb",
        "a\x7fb",
    ],
)
def test_unsafe_names(tmp_path: Path, name: str) -> None:
    path = make_zip(tmp_path / "b.zip", [("fine.txt", b"ok"), (name, b"evil")])
    assert repr(name) in str(refused(path, "unsafe-path"))


def test_unsafe_directory_entry(tmp_path: Path) -> None:
    path = make_zip(tmp_path / "b.zip", [("../up/", b""), ("fine.txt", b"ok")])
    assert repr("../up/") in str(refused(path, "unsafe-path"))


def test_nul_in_name(tmp_path: Path) -> None:
    # zipfile cuts names at a NUL both when writing and in .filename, so build it by hand
    path = raw_zip(tmp_path / "b.zip", [(b"a\x00b", b"evil")])
    assert repr("a\x00b") in str(refused(path, "unsafe-path"))


def test_unsafe_unicode_path_extra_field(tmp_path: Path) -> None:
    # the raw name is fine; the UTF-8 name that extractors prefer is not
    name = b"good.txt"
    extra = struct.pack("<2HBL", 0x7075, 5 + 7, 1, zlib.crc32(name)) + b"../evil"
    crc = zlib.crc32(b"x")
    body = local_header(name, b"x", size=1, crc=crc)
    directory = central_record(name, offset=0, csize=1, size=1, crc=crc, extra=extra)
    path = tmp_path / "b.zip"
    path.write_bytes(body + directory + end_record(1, len(directory), len(body)))
    assert repr("../evil") in str(refused(path, "unsafe-path"))
    # the same field naming the same file is fine
    extra = struct.pack("<2HBL", 0x7075, 5 + len(name), 1, zlib.crc32(name)) + name
    directory = central_record(name, offset=0, csize=1, size=1, crc=crc, extra=extra)
    path.write_bytes(body + directory + end_record(1, len(directory), len(body)))
    assert [e.path for e in list_bundle(path)] == ["good.txt"]


def test_symlink_member(tmp_path: Path) -> None:
    link = zipfile.ZipInfo("data/link")
    link.create_system = 3
    link.external_attr = (stat.S_IFLNK | 0o777) << 16
    path = make_zip(tmp_path / "b.zip", [("data/x.txt", b"x"), (link, b"/etc/passwd")])
    assert repr("data/link") in str(refused(path, "unsafe-path"))


def test_special_file_member(tmp_path: Path) -> None:
    fifo = zipfile.ZipInfo("fifo")
    fifo.create_system = 3
    fifo.external_attr = (stat.S_IFIFO | 0o644) << 16
    assert repr("fifo") in str(refused(make_zip(tmp_path / "b.zip", [(fifo, b"")]), "unsafe-path"))


def test_regular_file_modes_are_fine(tmp_path: Path) -> None:
    info = zipfile.ZipInfo("run.sh")
    info.create_system = 3
    info.external_attr = (stat.S_IFREG | 0o755) << 16
    assert [e.path for e in list_bundle(make_zip(tmp_path / "b.zip", [(info, b"#!")]))] == [
        "run.sh"
    ]


@pytest.mark.parametrize(
    ("first", "second", "named"),
    [
        ("a.txt", "a.txt", "a.txt"),
        ("\u00e9.txt", "e\u0301.txt", "e\u0301.txt"),  # NFC vs NFD
        ("d/", "d/", "d/"),
        ("a", "a/b", "a"),
        ("a/b", "a", "a"),
        ("a/b/c", "a/b", "a/b"),
        ("a", "a/", "a/"),
    ],
)
def test_clashing_names(tmp_path: Path, first: str, second: str, named: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # zipfile warns of duplicate names
        path = make_zip(tmp_path / "b.zip", [(first, b"1"), (second, b"2")])
    assert repr(named) in str(refused(path, "unsafe-path"))


def test_directory_entries_and_their_files_do_not_clash(tmp_path: Path) -> None:
    path = make_zip(tmp_path / "b.zip", [("a/", b""), ("a/b", b"1"), ("a/c/", b""), ("a/c/d", b"")])
    assert [e.path for e in list_bundle(path)] == ["a/b", "a/c/d"]


# --- broken zips ---------------------------------------------------------------------


def test_not_a_zip(tmp_path: Path) -> None:
    path = tmp_path / "random.zip"
    path.write_bytes(os.urandom(100_000))
    refused(path, "bad-bundle")
    (tmp_path / "nothing.zip").write_bytes(b"")
    refused(tmp_path / "nothing.zip", "bad-bundle")


def test_truncated_zip(tmp_path: Path) -> None:
    path = make_zip(tmp_path / "b.zip", [(f"f{i}.bin", os.urandom(10_000)) for i in range(5)])
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    refused(path, "bad-bundle")


def test_truncated_member_data(tmp_path: Path) -> None:
    # the central directory survives, but it points past the end of the data
    path = make_zip(tmp_path / "b.zip", [("a.bin", os.urandom(10_000))], zipfile.ZIP_STORED)
    data = path.read_bytes()
    cd = data.rindex(b"PK\x01\x02")
    path.write_bytes(data[: cd - 5000] + data[cd:])
    fixed = bytearray(path.read_bytes())
    struct.pack_into("<L", fixed, len(fixed) - 6, cd - 5000)  # the directory's new offset
    path.write_bytes(bytes(fixed))
    refused(path, "bad-bundle")


@pytest.mark.parametrize("compression", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_corrupted_member_byte(tmp_path: Path, compression: int) -> None:
    path = make_zip(tmp_path / "b.zip", [("a.txt", b"hello world " * 5000)], compression)
    data = bytearray(path.read_bytes())
    data[30 + len("a.txt") + 40] ^= 0xFF  # a byte of the member's data
    path.write_bytes(bytes(data))
    refused(path, "bad-bundle")


def test_encrypted_member(tmp_path: Path) -> None:
    path = make_zip(tmp_path / "b.zip", [("a.txt", b"secret")])
    data = bytearray(path.read_bytes())
    data[6] |= 0x1  # general purpose flags: local header ...
    data[data.index(b"PK\x01\x02") + 8] |= 0x1  # ... and central directory record
    path.write_bytes(bytes(data))
    assert "encrypted" in str(refused(path, "bad-bundle"))


def test_unsupported_compression_method(tmp_path: Path) -> None:
    path = make_zip(tmp_path / "b.zip", [("a.txt", b"x" * 1000)], zipfile.ZIP_BZIP2)
    assert "compression method" in str(refused(path, "bad-bundle"))


@pytest.mark.parametrize("method", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
@pytest.mark.parametrize("declared", [500, 1500])
def test_member_size_differs_from_header(tmp_path: Path, method: int, declared: int) -> None:
    # The CRC matches the declared prefix, so only the size gives the lie away
    # (ZipFile.open would return the first 500 bytes and call it good).
    data = os.urandom(500) + b"tail " * 100
    path = raw_zip(tmp_path / "b.zip", [(b"a.bin", data)], method=method, declared_size=declared)
    refused(path, "bad-bundle")


def test_understated_size_of_a_bomb_is_caught_while_streaming(tmp_path: Path) -> None:
    # 30 MiB of zeros that claims to be 1 MiB, under the ratio check's floor
    path = raw_zip(
        tmp_path / "b.zip",
        [(b"z", bytes(30 * MiB))],
        method=zipfile.ZIP_DEFLATED,
        declared_size=MiB,
    )
    tracemalloc.start()
    try:
        refused(path, "bad-bundle")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * MiB


def test_local_header_names_another_file(tmp_path: Path) -> None:
    path = make_zip(tmp_path / "b.zip", [("good.txt", b"x")])
    data = path.read_bytes()
    path.write_bytes(data[:30] + b"../x.txt" + data[38:])
    refused(path, "bad-bundle")


def test_raw_builder_makes_valid_zips(tmp_path: Path) -> None:
    data = b"some text\n" * 100
    for method in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        path = raw_zip(
            tmp_path / f"{method}.zip", [(b"a.txt", data), (b"b.txt", b"")], method=method
        )
        with zipfile.ZipFile(path) as zf:
            assert zf.read("a.txt") == data
        assert [(e.path, e.size) for e in list_bundle(path)] == [("a.txt", 1000), ("b.txt", 0)]


# --- zip bombs -----------------------------------------------------------------------


def zeros_zip(path: Path, size: int) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf, zf.open("zeros.bin", "w") as w:
        for _ in range(size // MiB):
            w.write(bytes(MiB))
    return path


def test_deflate_bomb(tmp_path: Path) -> None:
    path = zeros_zip(tmp_path / "bomb.zip", 30 * MiB)
    assert repr("zeros.bin") in str(refused(path, "zip-bomb"))
    [entry] = list_bundle(path, max_ratio=2000)
    assert (entry.size, entry.sha1) == (30 * MiB, hashlib.sha1(bytes(30 * MiB)).hexdigest())


def test_small_members_compress_as_they_like(tmp_path: Path) -> None:
    path = make_zip(tmp_path / "b.zip", [("zeros", bytes(MiB))])
    assert [e.size for e in list_bundle(path)] == [MiB]


def test_overlapping_members_full_overlap(tmp_path: Path) -> None:
    # Fifield's non-recursive bomb: one compressed kernel, many directory records
    data = os.urandom(100_000)
    crc = zlib.crc32(data)
    body = local_header(b"kernel", data, size=len(data), crc=crc)
    directory = b"".join(
        central_record(f"f{i}".encode(), offset=0, csize=len(data), size=len(data), crc=crc)
        for i in range(5)
    )
    path = tmp_path / "overlap.zip"
    path.write_bytes(body + directory + end_record(5, len(directory), len(body)))
    assert "overlap" in str(refused(path, "zip-bomb"))


def test_overlapping_members_quoted_overlap(tmp_path: Path) -> None:
    # member "a" stores, as its own data, the local header and data of member "b"
    inner_data = os.urandom(1000)
    inner = local_header(b"b", inner_data, size=len(inner_data), crc=zlib.crc32(inner_data))
    outer = local_header(b"a", inner, size=len(inner), crc=zlib.crc32(inner))
    directory = central_record(
        b"a", offset=0, csize=len(inner), size=len(inner), crc=zlib.crc32(inner)
    ) + central_record(
        b"b", offset=30 + 1, csize=len(inner_data), size=len(inner_data), crc=zlib.crc32(inner_data)
    )
    path = tmp_path / "quoted.zip"
    path.write_bytes(outer + directory + end_record(2, len(directory), len(outer)))
    refused(path, "zip-bomb")


# --- limits --------------------------------------------------------------------------


def test_too_many_files(tmp_path: Path) -> None:
    path = make_zip(tmp_path / "b.zip", [("d/", b"")] + [(f"d/{i}", b"x") for i in range(4)])
    refused(path, "too-many-files", max_files=3)
    assert len(list_bundle(path, max_files=4)) == 4


def test_too_many_directory_records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # refused from the end record alone, before zipfile parses the directory
    monkeypatch.setattr(bundle, "MAX_DIRECTORIES", 10)
    path = make_zip(tmp_path / "b.zip", [(f"d{i}/", b"") for i in range(20)])
    refused(path, "too-many-files", max_files=5)
    monkeypatch.setattr(bundle, "MAX_DIRECTORIES", 15)
    assert list_bundle(path, max_files=5) == []


def test_too_large_size(tmp_path: Path) -> None:
    path = make_zip(tmp_path / "b.zip", [("a", b"x" * 600), ("b", b"y" * 600)])
    refused(path, "too-large-size", max_total_size=1000)
    assert len(list_bundle(path, max_total_size=1200)) == 2


# --- memory --------------------------------------------------------------------------


def test_memory_stays_bounded_for_a_large_member(tmp_path: Path) -> None:
    path = tmp_path / "big.zip"
    block = os.urandom(MiB)
    sha1 = hashlib.sha1()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf, zf.open("big.bin", "w") as w:
        for i in range(200):
            chunk = i.to_bytes(4, "big") + block[4:]
            w.write(chunk)
            sha1.update(chunk)
    tracemalloc.start()
    try:
        [entry] = list_bundle(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (entry.size, entry.sha1) == (200 * MiB, sha1.hexdigest())
    assert peak < 32 * MiB, f"peak {peak / MiB:.1f} MiB"
