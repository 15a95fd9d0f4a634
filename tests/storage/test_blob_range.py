"""``BlobStore.open_range``: a part of a blob by offset and length, on both backends."""

from __future__ import annotations

import pytest

from sandcrawler.core.errors import InvalidName, NotFound
from sandcrawler.storage.blobs import BlobStore

DATA = bytes(range(256)) * 40  # 10,240 bytes


@pytest.mark.parametrize(("offset", "length", "expected"), [
    (0, 10, DATA[:10]),
    (1000, 256, DATA[1000:1256]),
    (10_000, 10_000, DATA[10_000:]),  # cut at the end
    (10_239, 1, DATA[-1:]),
    (10_240, 5, b""),  # starts at the end
    (50_000, 5, b""),  # starts past it
])
def test_open_range(blob_store: BlobStore, offset: int, length: int, expected: bytes) -> None:
    blob_store.put("a/blob.bin", DATA)
    with blob_store.open_range("a/blob.bin", offset, length) as f:
        assert f.read() == expected


def test_open_range_reads_in_chunks(blob_store: BlobStore) -> None:
    blob_store.put("a/blob.bin", DATA)
    with blob_store.open_range("a/blob.bin", 100, 1000) as f:
        parts = []
        while chunk := f.read(333):
            parts.append(chunk)
    assert b"".join(parts) == DATA[100:1100]


@pytest.mark.parametrize(("offset", "length"), [(-1, 5), (0, 0), (3, -2)])
def test_open_range_bad_range(blob_store: BlobStore, offset: int, length: int) -> None:
    blob_store.put("a/blob.bin", DATA)
    with pytest.raises(ValueError, match="bad byte range"):
        blob_store.open_range("a/blob.bin", offset, length)


def test_open_range_missing_and_bad_keys(blob_store: BlobStore) -> None:
    with pytest.raises(NotFound):
        blob_store.open_range("no/such.bin", 0, 10)
    with pytest.raises(InvalidName):
        blob_store.open_range("../etc/passwd", 0, 10)
