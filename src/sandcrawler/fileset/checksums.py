"""Checksums beyond md5, sha1 and sha256 (``FilesetManifestFile.checksums``):
which we can verify, worked out while a file streams, and the verdict.

A platform may give a checksum in any algorithm. The SHA-2 and SHA-3 family and
BLAKE2 are computed with hashlib; a git blob id (``git-sha1``: the sha1 of
``b"blob <size>\\0"`` and the content, as Hugging Face lists its files outside
LFS) needs the size first, which the manifest gives. Anything else (``crc32``, a
platform's own scheme) is kept in the manifest unverified: a checksum we cannot
compute says nothing against the file.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from sandcrawler.core.errors import RecordError
from sandcrawler.core.filemeta import Hasher
from sandcrawler.records.platform_item import FilesetManifestFile
from sandcrawler.records.statuses import FilesetStatus

#: checksum names (``platforms.base.checksums`` spelling) -> hashlib's names
HASHLIB = {"sha224": "sha224", "sha384": "sha384", "sha512": "sha512",
           "sha3224": "sha3_224", "sha3256": "sha3_256", "sha3384": "sha3_384",
           "sha3512": "sha3_512", "blake2b": "blake2b", "blake2s": "blake2s"}
GIT_SHA1 = "git-sha1"


def _hasher(name: str, size: int | None) -> Hasher | None:
    if name in HASHLIB:
        return hashlib.new(HASHLIB[name])
    if name == GIT_SHA1 and size is not None:
        return hashlib.sha1(f"blob {size}\0".encode())
    return None


class ChecksumWriter:
    """Passes each chunk on to ``write`` and through a hasher for every checksum
    of ``expected.checksums`` we can compute."""

    def __init__(self, expected: FilesetManifestFile, write: Callable[[bytes], Any]) -> None:
        self.expected = expected
        self._write = write
        self.hashers: dict[str, Hasher] = {}
        for name in expected.checksums or {}:
            hasher = _hasher(name, expected.size)
            if hasher is not None:
                self.hashers[name] = hasher

    def write(self, chunk: bytes) -> None:
        for hasher in self.hashers.values():
            hasher.update(chunk)
        self._write(chunk)

    def check(self) -> list[str]:
        """ArchiveFailure-worthy RecordError (``mismatch-checksum``) when a checksum
        disagrees; else the names of the checksums left unverified."""
        given = self.expected.checksums or {}
        for name, hasher in self.hashers.items():
            if hasher.hexdigest() != given[name].lower():
                raise RecordError(
                    f"{self.expected.path}: the platform's {name} is {given[name]}, got "
                    f"{hasher.hexdigest()}", FilesetStatus.MISMATCH_CHECKSUM)
        return sorted(set(given) - set(self.hashers))


def needs_bytes(expected: FilesetManifestFile) -> bool:
    """Has ``expected`` a checksum we compute beyond what every capture computes?"""
    return any(_hasher(name, expected.size) is not None for name in expected.checksums or {})
