"""The one safe-relative-path rule and the one clash check (sandcrawler.core.paths)."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest

from sandcrawler.core.errors import InvalidName, RecordError
from sandcrawler.core.paths import (
    MAX_PATH_BYTES,
    MAX_SEGMENT_BYTES,
    UnsafePath,
    find_clash,
    path_problem,
    safe_relative_path,
)
from sandcrawler.db.engine import make_engine
from sandcrawler.db.locks import exclusive
from sandcrawler.storage.items import ItemStore
from sandcrawler.storage.local import LocalBlobStore
from sandcrawler.web.file_records import FileLocator, FileRecord, WarcRef

NFC_E = "\u00e9"  # é, one code point
NFD_E = "e\u0301"  # e + combining acute


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("a", "a"),
        ("a/b/c.txt", "a/b/c.txt"),
        (".hidden", ".hidden"),
        ("a/.b/c", "a/.b/c"),
        ("...", "..."),
        ("a..b/c..", "a..b/c.."),
        ("with space/and-dash_.csv", "with space/and-dash_.csv"),
        ("ü/日本語.txt", "ü/日本語.txt"),
        (f"{NFD_E}.txt", f"{NFC_E}.txt"),  # returned in NFC
        (f"d/{NFD_E}/x", f"d/{NFC_E}/x"),
        ("ab:c", "ab:c"),  # a colon later on is no drive letter
        ("data/c:x", "data/c:x"),
        ("1:x", "1:x"),
        ("x" * MAX_SEGMENT_BYTES, "x" * MAX_SEGMENT_BYTES),
        ("/".join(["x" * 200] * 5) + "/" + "y" * 19, "/".join(["x" * 200] * 5) + "/" + "y" * 19),
        # lengths are measured in NFC, the form stored: 1,203 bytes (300 a segment) in NFD
        ("/".join([NFD_E * 100] * 4), "/".join([NFC_E * 100] * 4)),
    ],
)
def test_safe_paths(path: str, expected: str) -> None:
    assert path_problem(path) is None
    assert safe_relative_path(path) == expected


@pytest.mark.parametrize(
    ("path", "problem"),
    [
        ("", "is empty"),
        ("/abs", "is absolute"),
        ("/", "is absolute"),
        ("C:/evil", "starts with a drive letter"),
        ("c:evil", "starts with a drive letter"),
        ("C:\\evil", "contains a backslash"),
        ("\\evil", "contains a backslash"),
        ("a\\b", "contains a backslash"),
        ("..", "segment"),
        ("../x", "segment"),
        ("a/../b", "segment"),
        ("a/..", "segment"),
        (".", "segment"),
        ("./a", "segment"),
        ("a/./b", "segment"),
        ("a//b", "segment"),
        ("a/", "segment"),
        ("a\x00b", "control character"),
        ("a\nb", "control character"),
        ("a\x01b", "control character"),
        ("a\x7fb", "control character"),
        ("a\x85b", "control character"),  # C1 (NEL)
        ("s\ud800", "not valid Unicode"),  # a lone surrogate
        ("s\udcff", "not valid Unicode"),
        ("k" * (MAX_PATH_BYTES + 1), f"longer than {MAX_PATH_BYTES} bytes"),
        (NFC_E * 513, f"longer than {MAX_PATH_BYTES} bytes"),  # 1,026 bytes of UTF-8
        ("z" * (MAX_SEGMENT_BYTES + 1), f"longer than {MAX_SEGMENT_BYTES} bytes"),
        ("ok/" + NFC_E * 128, f"longer than {MAX_SEGMENT_BYTES} bytes"),  # 256 bytes
        ("\u212a:x", "starts with a drive letter"),  # KELVIN SIGN is K in NFC
    ],
)
def test_unsafe_paths(path: str, problem: str) -> None:
    assert problem in (path_problem(path) or "")
    with pytest.raises(UnsafePath) as caught:
        safe_relative_path(path, what="member")
    assert caught.value.status == "unsafe-path"
    assert str(caught.value).startswith("member ")
    assert problem in str(caught.value)


def test_not_a_string() -> None:
    with pytest.raises(UnsafePath, match="not a string"):
        safe_relative_path(None)  # type: ignore[arg-type]


def test_status_is_the_callers() -> None:
    with pytest.raises(UnsafePath) as caught:
        safe_relative_path("../x", what="blob key", status="bad-key")
    assert caught.value.status == "bad-key"
    assert isinstance(caught.value, InvalidName) and isinstance(caught.value, RecordError)
    assert str(caught.value) == "blob key '../x' has an empty, '.' or '..' segment"


def test_long_paths_are_cut_short_in_messages() -> None:
    with pytest.raises(UnsafePath) as caught:
        safe_relative_path("k" * 5000)
    assert len(str(caught.value)) < 200


@pytest.mark.parametrize(
    ("paths", "clash"),
    [
        (["a", "b", "c/d"], None),
        (["a/b", "a/c", "a/d/e"], None),
        (["a/", "a/b", "a/c/", "a/c/d"], None),  # directory entries and their files
        (["A", "a"], None),  # case is kept apart
        ([f"{NFC_E}", f"{NFC_E}x"], None),
        (["a.txt", "a.txt"], ("a.txt", "a.txt", "duplicate")),
        ([f"{NFC_E}.txt", f"{NFD_E}.txt"], (f"{NFD_E}.txt", f"{NFC_E}.txt", "duplicate")),
        ([f"d/{NFD_E}/x", f"d/{NFC_E}/x"], (f"d/{NFC_E}/x", f"d/{NFD_E}/x", "duplicate")),
        (["d/", "d/"], ("d/", "d/", "duplicate")),
        (["a", "a/"], ("a/", "a", "duplicate")),
        (["x", "a", "a/b"], ("a", "a/b", "file-is-directory")),
        (["a/b", "a"], ("a", "a/b", "file-is-directory")),
        (["a/b/c", "a/b"], ("a/b", "a/b/c", "file-is-directory")),
        ([f"{NFD_E}/x", f"{NFC_E}"], (f"{NFC_E}", f"{NFD_E}/x", "file-is-directory")),
        (["a/b", "a/b", "a"], ("a/b", "a/b", "duplicate")),  # duplicates are reported first
    ],
)
def test_find_clash(paths: list[str], clash: tuple[str, str, str] | None) -> None:
    found = find_clash(paths)
    if clash is None:
        assert found is None
        return
    assert found is not None
    assert (found.path, found.other, found.kind) == clash
    assert repr(found.path) in found.describe() and repr(found.other) in found.describe()


def test_clash_messages() -> None:
    nfd = find_clash([f"{NFC_E}.txt", f"{NFD_E}.txt"])
    assert nfd is not None
    assert nfd.describe("member").endswith("after Unicode normalisation")
    same = find_clash(["a.txt", "a.txt"])
    assert same is not None and same.describe("file") == "file 'a.txt' duplicates file 'a.txt'"
    nested = find_clash(["a", "a/b"])
    assert nested is not None
    assert nested.describe("member") == (
        "member 'a' is a file, but member 'a/b' is inside it as a directory"
    )


def test_find_clash_takes_any_iterable() -> None:
    assert find_clash(p for p in ["a", "a"]) is not None
    assert find_clash([]) is None


# --- the callers: one name whichever Unicode form it came in ------------------------------


def test_blob_keys_are_stored_in_nfc(tmp_path: Path) -> None:
    store = LocalBlobStore(tmp_path / "store", fsync=False)
    info = store.put(f"d/{NFD_E}.txt", b"x")
    assert info.key == f"d/{NFC_E}.txt"
    assert store.get(f"d/{NFC_E}.txt") == store.get(f"d/{NFD_E}.txt") == b"x"
    assert [i.key for i in store.list(f"d/{NFD_E}")] == [f"d/{NFC_E}.txt"]
    stat = store.stat(f"d/{NFD_E}.txt")
    assert stat is not None and stat.key == f"d/{NFC_E}.txt"


def test_item_paths_that_are_one_after_nfc_clash(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'db.sqlite3'}")
    items = ItemStore(LocalBlobStore(tmp_path / "store", fsync=False), partial(exclusive, engine))
    with pytest.raises(UnsafePath) as caught:
        items.check_paths("item", [f"{NFC_E}.csv", f"{NFD_E}.csv"])
    assert caught.value.status == "unsafe-path"
    assert "after Unicode normalisation" in str(caught.value)
    assert items.file_key("item", f"{NFD_E}.csv") == f"items/item/{NFC_E}.csv"


@pytest.mark.parametrize("source", ["dir", "http://127.0.0.1:9/warcs"])
def test_warc_names_are_checked_for_every_source(tmp_path: Path, source: str) -> None:
    locator = FileLocator(warc_source=str(tmp_path) if source == "dir" else source)
    record = FileRecord("capture", warc=WarcRef("a/../../secret.warc.gz", 0, 10))
    with pytest.raises(UnsafePath) as caught, locator.local_file(record):
        pass
    assert caught.value.status == "bad-name"
    assert "'a/../../secret.warc.gz'" in str(caught.value)
    locator.close()
