"""The blob store contract, on the local directory and on a real S3 server (Swift s3api).

Every behaviour of the interface runs on both backends through the ``blob_store``
fixture; the S3 store uses 5 MiB parts, so anything over 5 MiB is a multipart upload.
"""

from __future__ import annotations

import hashlib
import io
import os
import random
import selectors
import signal
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from sandcrawler.core.errors import ConfigError, InvalidName, NotFound, StoreUnavailable
from sandcrawler.storage.blobs import BlobStore
from sandcrawler.storage.local import LocalBlobStore
from sandcrawler.storage.s3 import S3BlobStore

MIB = 1024 * 1024
PART = 5 * MIB  # SANDCRAWLER_S3_PART_SIZE set by the s3_bucket fixture


def _data(size: int, seed: int = 0) -> bytes:
    return random.Random(seed).randbytes(size)


def _keys(store: BlobStore, prefix: str = "") -> list[str]:
    return [info.key for info in store.list(prefix)]


def _uploads(store: S3BlobStore) -> list[dict[str, Any]]:
    """Multipart uploads in progress anywhere in the store's bucket."""
    return store.client.list_multipart_uploads(Bucket=store.bucket).get("Uploads", [])


def _leftovers(store: BlobStore) -> list[str]:
    """What interrupted writers left: temp files (local) or open multipart uploads (S3)."""
    if isinstance(store, LocalBlobStore):
        return sorted(e.name for e in os.scandir(store.tmp_dir))
    assert isinstance(store, S3BlobStore)
    return sorted(u["Key"] for u in _uploads(store))


def _let_leftovers_age(store: BlobStore) -> None:
    """Swift reports an upload's ``Initiated`` time rounded *up* to the second, so an
    upload made under a second ago looks younger than ``cleanup(older_than=0)``'s
    cutoff. Wait until the server's own timestamps are in the past."""
    if isinstance(store, S3BlobStore):
        latest = max(u["Initiated"] for u in _uploads(store))
        delay = (latest - datetime.now(UTC)).total_seconds()
        if delay > 0:
            time.sleep(delay + 0.05)


def _everything_stored(store: BlobStore) -> list[str]:
    """Every object the backend holds, bypassing the store's own key handling."""
    if isinstance(store, LocalBlobStore):
        return sorted(
            str(p.relative_to(store.root)) for p in store.root.rglob("*") if not p.is_dir()
        )
    assert isinstance(store, S3BlobStore)
    answer = store.client.list_objects_v2(Bucket=store.bucket)
    return sorted(obj["Key"] for obj in answer.get("Contents", []))


# -- round trips -------------------------------------------------------------


def test_put_get_bytes_with_hashes(blob_store: BlobStore) -> None:
    data = b"hello blob store\n" * 1000 + b"\x00\xff"
    info = blob_store.put("docs/hello.bin", data)

    assert info.key == "docs/hello.bin"
    assert info.size == len(data)
    assert info.hashes == {
        "sha1": hashlib.sha1(data).hexdigest(),
        "sha256": hashlib.sha256(data).hexdigest(),
    }
    assert blob_store.get("docs/hello.bin") == data


def test_writev_and_rewriting(blob_store: BlobStore) -> None:
    """writev gathers buffers (memoryviews of a reused buffer too; more than
    IOV_MAX of them, past an S3 part); a local writer without hashes can also
    overwrite and cut off what it wrote, S3 cannot."""
    data = _data(PART + MIB + 3, seed=30)
    pieces = [memoryview(data)[i:i + 4096] for i in range(0, len(data), 4096)]
    assert len(pieces) > 1024
    with blob_store.open_write("v/a") as w:
        assert w.writev(pieces) == len(data)
    assert w.info is not None and w.info.hashes["sha1"] == hashlib.sha1(data).hexdigest()
    assert blob_store.get("v/a") == data
    writer = blob_store.open_write("v/b", hashes=())
    with writer:
        writer.write(b"0123456789")
        if isinstance(blob_store, S3BlobStore):
            assert not writer.rewritable
            with pytest.raises(io.UnsupportedOperation):
                writer.truncate(4)
            with pytest.raises(io.UnsupportedOperation):
                writer.pwrite(b"x", 0)
        else:
            assert writer.rewritable
            writer.truncate(4)
            writer.writev([b"ab", memoryview(b"cdef")[1:]])
            writer.pwrite(b"XY", 1)
            with pytest.raises(ValueError):
                writer.pwrite(b"XY", 8)  # past what was written
            assert writer.size == 9
    want = b"0123456789" if isinstance(blob_store, S3BlobStore) else b"0XY3abdef"
    assert blob_store.get("v/b") == want
    assert not blob_store.open_write("v/c").rewritable  # running hashes: never


def test_put_stream(blob_store: BlobStore) -> None:
    data = _data(3 * MIB + 17, seed=1)
    info = blob_store.put("streamed", io.BytesIO(data))

    assert info.size == len(data)
    assert info.hashes["sha1"] == hashlib.sha1(data).hexdigest()
    assert info.hashes["sha256"] == hashlib.sha256(data).hexdigest()
    assert blob_store.get("streamed") == data


def test_put_empty_blob(blob_store: BlobStore) -> None:
    info = blob_store.put("empty", b"")
    assert info.size == 0
    assert info.hashes["sha1"] == hashlib.sha1(b"").hexdigest()
    assert blob_store.get("empty") == b""
    stat = blob_store.stat("empty")
    assert stat is not None and stat.size == 0


def test_other_hash_algorithms(blob_store: BlobStore) -> None:
    data = b"md5 please"
    info = blob_store.put("md5", data, hashes=("md5",))
    assert info.hashes == {"md5": hashlib.md5(data).hexdigest()}
    with pytest.raises(ConfigError):
        blob_store.open_write("nohash", hashes=("no-such-hash",))
    assert _keys(blob_store) == ["md5"]


def test_open_read_streams_in_chunks(blob_store: BlobStore) -> None:
    data = _data(2 * MIB + 12345, seed=2)
    blob_store.put("chunks/data", data)

    pieces = []
    with blob_store.open_read("chunks/data") as f:
        while piece := f.read(65536):
            assert len(piece) <= 65536
            pieces.append(piece)
    assert len(pieces) >= len(data) // 65536
    assert b"".join(pieces) == data


def test_stat_and_exists(blob_store: BlobStore) -> None:
    blob_store.put("s/t/at", b"12345")

    info = blob_store.stat("s/t/at")
    assert info is not None
    assert (info.key, info.size) == ("s/t/at", 5)
    assert info.modified is not None and info.modified.tzinfo is not None
    assert blob_store.exists("s/t/at")

    assert blob_store.stat("s/t/missing") is None
    assert blob_store.stat("s/t") is None  # a "directory" is not a blob
    assert not blob_store.exists("s/t/missing")
    with pytest.raises(NotFound):
        blob_store.get("s/t/missing")


@pytest.mark.parametrize("key", ["missing", "a/missing", "s/t"])
def test_missing_blob_is_not_found(blob_store: BlobStore, key: str) -> None:
    blob_store.put("s/t/at", b"x")
    with pytest.raises(NotFound) as excinfo:
        blob_store.open_read(key)
    assert excinfo.value.status == "not-found"
    with pytest.raises(NotFound):
        blob_store.get(key)


def test_delete(blob_store: BlobStore) -> None:
    blob_store.put("d/one", b"1")
    blob_store.put("d/two", b"2")

    assert blob_store.delete("d/one") is True
    assert blob_store.stat("d/one") is None
    with pytest.raises(NotFound):
        blob_store.get("d/one")
    assert blob_store.delete("d/one") is False
    assert blob_store.delete("never/there") is False
    # A name that is only a "directory" of other blobs is no blob.
    assert blob_store.delete("d") is False
    assert blob_store.get("d/two") == b"2"
    assert _keys(blob_store) == ["d/two"]


def test_overwrite_is_atomic(blob_store: BlobStore) -> None:
    old = _data(100_000, seed=3)
    new = _data(PART + MIB + 7, seed=4)  # a multipart upload on S3
    blob_store.put("k", old)

    reader = blob_store.open_read("k")
    writer = blob_store.open_write("k")
    writer.write(new[: PART + 1])
    # Mid-write (a multipart upload is under way on S3): the old blob, whole.
    assert blob_store.get("k") == old
    assert blob_store.stat("k").size == len(old)  # type: ignore[union-attr]
    writer.write(new[PART + 1 :])
    assert blob_store.get("k") == old
    info = writer.commit()

    assert info.size == len(new)
    assert info.hashes["sha1"] == hashlib.sha1(new).hexdigest()
    assert blob_store.get("k") == new
    assert blob_store.stat("k").size == len(new)  # type: ignore[union-attr]
    with reader:  # opened before the commit: still the complete old content
        assert reader.read() == old
    assert _keys(blob_store) == ["k"]
    assert _leftovers(blob_store) == []


# -- listing -----------------------------------------------------------------

# In byte order of the UTF-8 keys, as S3 lists them.
ORDERED_KEYS = [
    "A",
    "a-b",
    "a.b",
    "a/b",
    "a/b-c",
    "a/b0",
    "a/c-e",
    "a/c.x",
    "a/c/d",
    "a/c0",
    "a0",
    "ab",
    "b",
    "z",
    "é",
    "\ue000",
    "😀",
]


@pytest.fixture
def listed_store(blob_store: BlobStore) -> BlobStore:
    assert sorted(ORDERED_KEYS, key=lambda k: k.encode("utf-8")) == ORDERED_KEYS
    shuffled = ORDERED_KEYS[:]
    random.Random(5).shuffle(shuffled)
    for key in shuffled:
        blob_store.put(key, key.encode("utf-8") * 2)
    return blob_store


def test_list_is_in_byte_order(listed_store: BlobStore) -> None:
    infos = list(listed_store.list(""))
    assert [i.key for i in infos] == ORDERED_KEYS
    assert [i.size for i in infos] == [len(k.encode("utf-8")) * 2 for k in ORDERED_KEYS]
    assert all(i.modified is not None for i in infos)
    assert [i.key for i in listed_store.list()] == ORDERED_KEYS


PREFIXES = ["", "a", "a/", "a/b", "a/c", "a/c/", "a-", "ab", "abc", "a/b/", "nothing/", "é", "A",
            "\ue000"]


def test_list_string_prefix(listed_store: BlobStore) -> None:
    for prefix in PREFIXES:
        expected = [k for k in ORDERED_KEYS if k.startswith(prefix)]
        assert _keys(listed_store, prefix) == expected, prefix
    # a string prefix, not a directory name
    assert _keys(listed_store, "a/c") == ["a/c-e", "a/c.x", "a/c/d", "a/c0"]
    assert _keys(listed_store, "a/c/") == ["a/c/d"]
    assert "ab" in _keys(listed_store, "a") and "ab" not in _keys(listed_store, "a/")


def test_list_never_shows_reserved_area(blob_store: BlobStore) -> None:
    # Look-alikes of the reserved segment are ordinary keys.
    blob_store.put(".tmpx", b"1")
    blob_store.put("a/.tmp/b", b"2")
    writer = blob_store.open_write("pending")
    writer.write(b"not committed")
    try:
        assert _keys(blob_store) == [".tmpx", "a/.tmp/b"]
        assert _keys(blob_store, ".t") == [".tmpx"]
        assert _keys(blob_store, "a/") == ["a/.tmp/b"]
        assert blob_store.stat("pending") is None
    finally:
        writer.abort()
    assert _keys(blob_store) == [".tmpx", "a/.tmp/b"]


BAD_PREFIXES = ["../", "a/../", ".tmp/", ".tmp", "/a", "a//", "..", "a\x00", "a\\"]


def test_list_rejects_bad_prefixes(blob_store: BlobStore) -> None:
    blob_store.put("a/b", b"x")
    pending = blob_store.open_write("c")
    pending.write(b"y")
    try:
        for prefix in BAD_PREFIXES:
            with pytest.raises(InvalidName) as excinfo:
                list(blob_store.list(prefix))
            assert excinfo.value.status == "bad-key", prefix
    finally:
        pending.abort()


# -- large objects, failed writers ---------------------------------------------


def test_large_write_in_odd_chunks(blob_store: BlobStore) -> None:
    chunk_size = 1_000_003
    chunks = [_data(chunk_size, seed=10 + i) for i in range(13)]
    total = chunk_size * len(chunks)
    assert total > 12 * MIB
    sha1, sha256 = hashlib.sha1(), hashlib.sha256()

    with blob_store.open_write("big/object") as writer:
        for chunk in chunks:
            assert writer.write(chunk) == len(chunk)
            sha1.update(chunk)
            sha256.update(chunk)
    info = writer.info
    assert info is not None
    assert info.size == total
    assert info.hashes == {"sha1": sha1.hexdigest(), "sha256": sha256.hexdigest()}

    read_sha1 = hashlib.sha1()
    read_size = 0
    with blob_store.open_read("big/object") as f:
        while piece := f.read(MIB):
            read_sha1.update(piece)
            read_size += len(piece)
    assert read_size == total
    assert read_sha1.hexdigest() == sha1.hexdigest()
    assert blob_store.stat("big/object").size == total  # type: ignore[union-attr]
    if isinstance(blob_store, S3BlobStore):
        head = blob_store.client.head_object(
            Bucket=blob_store.bucket, Key=blob_store.object_key("big/object")
        )
        parts = -(-total // PART)
        assert head["ETag"].strip('"').endswith(f"-{parts}")  # really a multipart upload
    assert _leftovers(blob_store) == []


class _Boom(Exception):
    pass


def test_failed_writer_leaves_no_object(blob_store: BlobStore) -> None:
    with pytest.raises(_Boom), blob_store.open_write("fresh") as writer:
        writer.write(_data(PART + MIB, seed=20))  # past the first part on S3
        raise _Boom

    assert blob_store.stat("fresh") is None
    with pytest.raises(NotFound):
        blob_store.get("fresh")
    assert _keys(blob_store) == []
    assert _leftovers(blob_store) == []  # aborted, nothing for cleanup to find
    assert blob_store.cleanup(older_than=0) == 0


def test_failed_overwrite_keeps_old_content(blob_store: BlobStore) -> None:
    old = _data(PART + 3, seed=21)
    blob_store.put("existing", old)

    with pytest.raises(_Boom), blob_store.open_write("existing") as writer:
        writer.write(_data(2 * PART + 5, seed=22))
        raise _Boom

    assert blob_store.get("existing") == old
    assert blob_store.stat("existing").size == len(old)  # type: ignore[union-attr]
    assert _keys(blob_store) == ["existing"]
    assert _leftovers(blob_store) == []


def test_finished_writer_refuses_writes(blob_store: BlobStore) -> None:
    writer = blob_store.open_write("done")
    writer.write(b"abc")
    first = writer.commit()
    assert writer.commit() is first
    with pytest.raises(ValueError):
        writer.write(b"more")
    assert blob_store.get("done") == b"abc"


# -- bad keys --------------------------------------------------------------------

BAD_KEYS = [
    "../x",
    "a/../b",
    "/abs",
    "a\x00b",
    "a//b",
    "",
    ".tmp/x",
    ".tmp",
    "a\\b",
    "a/",
    "./a",
    "a\nb",
    "k" * 1025,
    "é" * 513,  # 513 characters, 1026 bytes
    "z" * 256,  # one segment longer than a local file name may be
    "s\ud800",  # a lone surrogate: not valid Unicode
    "s\udcff",
]


def _snapshot(root: Path) -> set[str]:
    return {str(p) for p in root.rglob("*")}


def test_bad_keys_are_rejected(blob_store: BlobStore, tmp_path: Path) -> None:
    before = _snapshot(tmp_path)
    for key in BAD_KEYS:
        operations = {
            "put": lambda k=key: blob_store.put(k, b"payload"),
            "put-stream": lambda k=key: blob_store.put(k, io.BytesIO(b"payload")),
            "open_write": lambda k=key: blob_store.open_write(k),
            "open_read": lambda k=key: blob_store.open_read(k),
            "get": lambda k=key: blob_store.get(k),
            "stat": lambda k=key: blob_store.stat(k),
            "exists": lambda k=key: blob_store.exists(k),
            "delete": lambda k=key: blob_store.delete(k),
        }
        for name, operation in operations.items():
            with pytest.raises(InvalidName) as excinfo:
                operation()
            assert excinfo.value.status == "bad-key", (name, key)

    assert _keys(blob_store) == []
    assert _everything_stored(blob_store) == []
    assert _leftovers(blob_store) == []
    assert _snapshot(tmp_path) == before
    assert not Path("/abs").exists()


def test_longest_key_is_accepted_locally(tmp_path: Path) -> None:
    store = LocalBlobStore(tmp_path / "store", fsync=False)
    key = "/".join(["x" * 200] * 5) + "/" + "y" * 19
    assert len(key.encode()) == 1024
    store.put(key, b"long")
    assert store.get(key) == b"long"


# -- killed writers -----------------------------------------------------------------

WRITER_SCRIPT = r"""
import sys, time
from sandcrawler.app.settings import load_settings
from sandcrawler.app.services import Services

key, old_path, total_mib, signal_mib = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
store = Services(load_settings()).blobs
if old_path != "-":
    with open(old_path, "rb") as f:
        store.put(key, f)
    print("stored", flush=True)
chunk = bytes(range(256)) * 4096  # 1 MiB, unlike the old content
writer = store.open_write(key)
for i in range(1, total_mib + 1):
    writer.write(chunk)
    if i == signal_mib:
        print("writing", flush=True)
    if i >= signal_mib:
        time.sleep(0.5)
writer.commit()
print("committed", flush=True)
"""


def _run_and_kill_writer(key: str, old_path: str, *, timeout: float = 60.0) -> list[str]:
    """Start the writer, wait until it is past its first 5 MiB part, SIGKILL it."""
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER_SCRIPT, key, old_path, "30", "7"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=os.environ.copy(),
        bufsize=0,  # unbuffered: select() and readline() must agree on what was read
    )
    lines: list[str] = []
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ)
            while "writing" not in lines:
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    pytest.fail(f"writer did not start writing within {timeout}s: {lines}")
                line = proc.stdout.readline()
                if not line:
                    _, err = proc.communicate()
                    pytest.fail(f"writer exited early ({proc.returncode}): {err.decode()[-2000:]}")
                lines.append(line.decode().strip())
        proc.send_signal(signal.SIGKILL)
        out, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL
    lines += out.decode().split()
    assert "committed" not in lines
    return lines


def test_sigkill_during_overwrite_keeps_old_content(blob_store: BlobStore, tmp_path: Path) -> None:
    old = _data(PART + 12_345, seed=30)
    old_file = tmp_path / "old.bin"
    old_file.write_bytes(old)

    lines = _run_and_kill_writer("doc/k", str(old_file))
    assert lines[:2] == ["stored", "writing"]

    assert blob_store.get("doc/k") == old
    assert blob_store.stat("doc/k").size == len(old)  # type: ignore[union-attr]
    assert _keys(blob_store) == ["doc/k"]
    leftovers = _leftovers(blob_store)
    assert len(leftovers) == 1
    if isinstance(blob_store, LocalBlobStore):
        assert (blob_store.tmp_dir / leftovers[0]).stat().st_size >= 7 * MIB
    else:
        assert leftovers == [blob_store.object_key("doc/k")]

    assert blob_store.cleanup() == 0  # younger than a day: kept
    assert _leftovers(blob_store) == leftovers
    _let_leftovers_age(blob_store)
    assert blob_store.cleanup(older_than=0) >= 1
    assert _leftovers(blob_store) == []
    assert blob_store.cleanup(older_than=0) == 0
    assert blob_store.get("doc/k") == old
    assert _keys(blob_store) == ["doc/k"]


def test_sigkill_during_fresh_write_leaves_nothing(blob_store: BlobStore) -> None:
    lines = _run_and_kill_writer("doc/fresh", "-")
    assert lines[0] == "writing"

    assert blob_store.stat("doc/fresh") is None
    assert not blob_store.exists("doc/fresh")
    with pytest.raises(NotFound):
        blob_store.get("doc/fresh")
    assert _keys(blob_store) == []
    assert len(_leftovers(blob_store)) == 1

    _let_leftovers_age(blob_store)
    assert blob_store.cleanup(older_than=0) >= 1
    assert _leftovers(blob_store) == []
    assert _keys(blob_store) == []


# -- S3 only -------------------------------------------------------------------------


def _s3_store() -> S3BlobStore:
    from sandcrawler.app.services import Services
    from sandcrawler.app.settings import load_settings

    store = Services(load_settings()).blobs
    assert isinstance(store, S3BlobStore)
    return store


def test_s3_store_from_settings(s3_bucket: str) -> None:
    store = _s3_store()
    try:
        assert (store.bucket, store.prefix, store.part_size) == (s3_bucket, "pre/", PART)
        store.check()
        store.put("x/y", b"z")
        answer = store.client.list_objects_v2(Bucket=s3_bucket)
        assert [o["Key"] for o in answer["Contents"]] == ["pre/x/y"]
    finally:
        store.close()


def test_s3_missing_bucket_is_a_config_error(
    s3_bucket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = f"t-missing-{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv("SANDCRAWLER_STORE_URL", f"s3://{missing}/pre")
    store = _s3_store()
    try:
        with pytest.raises(ConfigError, match=missing):
            store.check()
        with pytest.raises(ConfigError):
            store.put("k", b"v")
        with pytest.raises(ConfigError):
            store.open_read("k")
    finally:
        store.close()


def test_s3_create_bucket(s3_bucket: str, monkeypatch: pytest.MonkeyPatch) -> None:
    name = f"t-new-{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv("SANDCRAWLER_STORE_URL", f"s3://{name}")
    store = _s3_store()
    try:
        assert store.create() is True
        store.check()
        assert store.create() is False
        store.put("k", b"v")
        assert store.get("k") == b"v"
        assert _keys(store) == ["k"]
    finally:
        store.close()


def test_s3_unreachable_endpoint(s3_bucket: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A closed port is StoreUnavailable, with the store's own retry settings."""
    from sandcrawler_testkit.postgres import free_port

    monkeypatch.setenv("SANDCRAWLER_S3_ENDPOINT_URL", f"http://127.0.0.1:{free_port()}")
    store = _s3_store()
    try:
        with pytest.raises(StoreUnavailable):
            store.put("k", b"v")
        with pytest.raises(StoreUnavailable):
            store.stat("k")
        with pytest.raises(StoreUnavailable):
            store.open_read("k")
        with pytest.raises(StoreUnavailable):
            list(store.list(""))
        with pytest.raises(StoreUnavailable):
            store.check()
    finally:
        store.close()


# -- local only ----------------------------------------------------------------------


def test_local_temp_files_live_under_reserved_dir(tmp_path: Path) -> None:
    root = tmp_path / "store"
    store = LocalBlobStore(root)
    assert store.tmp_dir == root / ".tmp"

    writer = store.open_write("x/y/z")
    writer.write(b"a" * 1000)
    temps = list((root / ".tmp").iterdir())
    assert len(temps) == 1 and temps[0].stat().st_size == 1000
    assert sorted(p.name for p in root.iterdir()) == [".tmp"]
    assert _keys(store) == []

    writer.commit()
    assert list((root / ".tmp").iterdir()) == []
    assert (root / "x" / "y" / "z").read_bytes() == b"a" * 1000
    assert _keys(store) == ["x/y/z"]


UMASK_SCRIPT = r"""
import os, sys
os.umask(int(sys.argv[2], 8))
from sandcrawler.storage.local import LocalBlobStore
store = LocalBlobStore(sys.argv[1], fsync=False)
store.put("d/e/f.bin", b"x")
writer = store.open_write("pending")
writer.write(b"y")
(temp,) = [e.path for e in os.scandir(store.tmp_dir)]
modes = [store.path("d/e/f.bin"), temp, store.path("d/e")]
print(" ".join(oct(os.stat(p).st_mode & 0o777) for p in modes))
"""


@pytest.mark.parametrize(
    ("umask", "expected"), [("022", "0o644 0o644 0o755"), ("027", "0o640 0o640 0o750")]
)
def test_local_file_mode_respects_umask(tmp_path: Path, umask: str, expected: str) -> None:
    result = subprocess.run(
        [sys.executable, "-c", UMASK_SCRIPT, str(tmp_path / "store"), umask],
        capture_output=True,
        env=os.environ.copy(),
        timeout=60,
    )
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout.decode().strip() == expected


def test_local_delete_prunes_empty_directories(tmp_path: Path) -> None:
    root = tmp_path / "store"
    store = LocalBlobStore(root, fsync=False)
    store.put("98/da/17/ff/doc/doc.pdf", b"pdf")
    store.put("98/da/17/ff/doc/doc.xml.gz", b"gz")
    store.put("98/db/other", b"o")

    assert store.delete("98/da/17/ff/doc/doc.pdf")
    assert (root / "98/da/17/ff/doc").is_dir()  # still holds doc.xml.gz

    assert store.delete("98/da/17/ff/doc/doc.xml.gz")
    assert not (root / "98" / "da").exists()
    assert (root / "98" / "db" / "other").is_file()

    assert store.delete("98/db/other")
    assert sorted(p.name for p in root.iterdir()) == [".tmp"]
    assert root.is_dir() and store.tmp_dir.is_dir()
    store.put("98/da/17/ff/doc/doc.pdf", b"again")  # directories come back on demand
    assert store.get("98/da/17/ff/doc/doc.pdf") == b"again"


def test_local_key_conflicts_are_invalid_names(tmp_path: Path) -> None:
    """A local file cannot also be a directory (an S3 key can): a clear error, not OSError."""
    store = LocalBlobStore(tmp_path / "store", fsync=False)
    store.put("a/b", b"1")
    with pytest.raises(InvalidName) as e:
        store.put("a", b"2")
    assert e.value.status == "key-conflict"
    with pytest.raises(InvalidName):
        store.put("a/b/c", b"3")
    assert store.get("a/b") == b"1"
    assert [i.key for i in store.list()] == ["a/b"]
    assert list((tmp_path / "store" / ".tmp").iterdir()) == []  # temp files removed


def test_s3_prefix_counts_towards_key_length(s3_bucket: str) -> None:
    store = _s3_store()  # prefix "pre/"
    key = "/".join(["x" * 200] * 5) + "/" + "y" * 19  # 1024 bytes: fine locally
    with pytest.raises(InvalidName) as e:
        store.put(key, b"v")
    assert e.value.status == "bad-key" and "prefix" in str(e.value)
