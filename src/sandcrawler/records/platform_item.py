"""What a platform helper makes of a dataset: the seed's ``FilesetPlatformItem``
with its manifest (``FilesetManifestFile``), and the ``IngestStrategy`` names.

Apart from the rest of the fileset records (``records/fileset.py``, which holds
the results, their captures and files, and re-exports these) so that the
platform modules, which the settings read for their sections, import no more
than this: every command reads the settings at start-up.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import Field

from sandcrawler.records.base import Record as _Record
from sandcrawler.records.statuses import FilesetStatus


class IngestStrategy(StrEnum):
    """``{storage_backend}-{fatcat_entity}``, ``-bundled`` when one enclosing file
    (a platform's "download all" zip) is stored for many."""

    WEB_FILE = "web-file"
    WEB_FILESET = "web-fileset"
    WEB_FILESET_BUNDLED = "web-fileset-bundled"
    ARCHIVEORG_FILE = "archiveorg-file"
    ARCHIVEORG_FILESET = "archiveorg-fileset"
    ARCHIVEORG_FILESET_BUNDLED = "archiveorg-fileset-bundled"

    @property
    def backend(self) -> str:
        """``web`` (our web archive: WARC + CDX) or ``archiveorg`` (an item store)."""
        return self.value.split("-", 1)[0]

    @property
    def entity(self) -> str:
        """``file`` or ``fileset``: what the result describes."""
        return self.value.split("-")[1]

    @property
    def bundled(self) -> bool:
        return self.value.endswith("-bundled")


class FilesetManifestFile(_Record):
    path: str = Field(min_length=1)
    size: int | None = Field(None, ge=0)
    md5: str | None = None
    sha1: str | None = None
    sha256: str | None = None
    #: beyond the seed: every other checksum the platform gives, by algorithm
    #: (lower case, no dashes: ``sha512``, ``crc32``; a git blob id is ``git-sha1``).
    #: Verified when the algorithm is one we compute (``fileset.checksums``); kept,
    #: unverified, when it is not
    checksums: dict[str, str] | None = None
    mimetype: str | None = None
    extra: dict[str, Any] | None = None
    status: str | None = None
    platform_url: str | None = None
    terminal_url: str | None = None
    terminal_dt: str | None = None


class FilesetPlatformItem(_Record):
    platform_name: str
    platform_status: FilesetStatus
    platform_domain: str | None = None
    platform_id: str | None = None
    manifest: list[FilesetManifestFile] | None = None
    archiveorg_item_name: str | None = None
    archiveorg_item_meta: dict[str, Any] | None = None
    web_base_url: str | None = None
    web_bundle_url: str | None = None
    #: beyond the seed: for a file-level request (one file of a dataset), the item
    #: the whole dataset is archived under; ``archiveorg_item_name`` is then the
    #: file's own item, so archiving the file never replaces the dataset's
    archiveorg_dataset_item: str | None = None
