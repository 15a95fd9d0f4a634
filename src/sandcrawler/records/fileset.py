"""Dataset (fileset) ingest records, as the fileset-ingest seed defines them.

The seed's Python types (``FilesetManifestFile``, ``FilesetPlatformItem``,
``ArchiveStrategyResult``, the ``IngestStrategy`` names), the ingest request,
and the fileset ingest result with every field of its "Ingest Result Schema".
``to_json()`` gives the seed's JSON: fields that are None are left out, as in
the original system's results, so a consumer tests for presence. The objects
they hold are typed: ``file_meta`` (``FileMeta``), ``terminal`` (``Terminal``),
``cdx`` and ``revisit_cdx`` (``CdxRecord``), each serialised whole.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from sandcrawler.records.base import Record as _Record
from sandcrawler.records.capture import CdxRecord
from sandcrawler.records.files import FileMeta, Terminal
from sandcrawler.records.html_biblio import HtmlBiblio
from sandcrawler.records.ingest import IngestFileResultRow
from sandcrawler.records.ingest import IngestRequest as IngestRequest  # every type's request

# the platform helpers' types: defined apart (start-up), fileset records all the same
from sandcrawler.records.platform_item import FilesetManifestFile as FilesetManifestFile
from sandcrawler.records.platform_item import FilesetPlatformItem as FilesetPlatformItem
from sandcrawler.records.platform_item import IngestStrategy as IngestStrategy
from sandcrawler.records.statuses import FILESET_SUCCESS, Status


class ArchiveStrategyResult(_Record):
    ingest_strategy: IngestStrategy
    status: Status
    manifest: list[FilesetManifestFile] = Field(default_factory=list)
    file_file_meta: FileMeta | None = None
    file_terminal: Terminal | None = None
    file_cdx: CdxRecord | None = None
    # beyond the seed: the result schema has revisit_cdx for both, so they are carried here
    file_revisit_cdx: CdxRecord | None = None
    bundle_file_meta: FileMeta | None = None
    bundle_terminal: Terminal | None = None
    bundle_cdx: CdxRecord | None = None
    bundle_revisit_cdx: CdxRecord | None = None
    bundle_archiveorg_path: str | None = None
    #: beyond the seed: what went wrong, for the result's error_message
    error_message: str | None = None
    #: beyond the seed: the item the files are in, when not the platform item's own
    #: name (a file found in its dataset's item)
    archiveorg_item_name: str | None = None


class FilesetFile(_Record):
    """``fileset_file``: the single file of a ``*-file`` strategy."""

    file_meta: FileMeta | None = None
    terminal: Terminal | None = None
    cdx: CdxRecord | None = None
    revisit_cdx: CdxRecord | None = None


class FilesetBundle(FilesetFile):
    """``fileset_bundle``: the one enclosing file of a ``*-fileset-bundled`` strategy;
    the same fields as a single file, and where an item store keeps it."""

    archiveorg_bundle_path: str | None = None


class FilesetIngestResult(_Record):
    """Built once, when the request's outcome is known (``FilesetIngester``); it
    becomes JSON in the sink. ``hit`` follows from ``status`` (``is_hit``)."""

    # common with file ingest results (mostly about the landing page)
    hit: bool
    #: a FilesetStatus, or one a lower layer gave (fetch-error, unsafe-path, ...):
    #: every status of the table in docs/fileset.md
    status: Status
    #: the request echoed as it came, unknown fields kept (``IngestRequest.to_json``):
    #: a mapping on purpose, since it is any producer's object, not interpreted here
    request: dict[str, Any]
    terminal: Terminal | None = None
    file_meta: FileMeta | None = None
    cdx: CdxRecord | None = None
    revisit_cdx: CdxRecord | None = None
    html_biblio: HtmlBiblio | None = None
    # fileset-specific
    manifest: list[FilesetManifestFile] | None = None
    platform_name: str | None = None
    platform_domain: str | None = None
    platform_id: str | None = None
    platform_base_url: str | None = None
    ingest_strategy: IngestStrategy | None = None
    archiveorg_item_name: str | None = None
    file_count: int | None = Field(None, ge=0)
    total_size: int | None = Field(None, ge=0)
    fileset_bundle: FilesetBundle | None = None
    fileset_file: FilesetFile | None = None
    #: beyond the seed: what went wrong, when the status is not a success
    error_message: str | None = None

    @staticmethod
    def is_hit(status: Status) -> bool:
        """A result's ``hit``: the dataset is archived."""
        return status in FILESET_SUCCESS


class DatasetFileResult(_Record):
    """The ingest-file result a ``*-file`` strategy's ``success-file`` adds: the
    single file as file ingest reports it (``FileIngestResult``'s fields for a
    file found, without hops), request ingest type ``{type}-file``. Its own
    model because its JSON has its own key order, which consumers have seen."""

    hit: bool
    status: Status
    #: the fileset request's echo, ``ingest_type`` made ``{type}-file``
    request: dict[str, Any]
    file_meta: FileMeta | None = None
    terminal: Terminal | None = None
    cdx: CdxRecord | None = None
    revisit_cdx: CdxRecord | None = None


# --- reading results back: what persisting them needs -----------------------------


class _Lenient(BaseModel):
    """Results from other producers (file ingest, older versions of ours) are read
    too: keys this does not know are ignored, and what it does know may be
    missing or null. What it reads is typed."""

    model_config = ConfigDict(extra="ignore", frozen=True)


class ResultRequest(_Lenient):
    """The request a result answers: its key, (ingest_type, base_url)."""

    ingest_type: str = Field(min_length=1)
    base_url: str = Field(min_length=1)


class ResultTerminal(_Lenient):
    """``terminal`` as any producer writes it: ``Terminal``'s fields, each optional."""

    terminal_url: str | None = None
    terminal_dt: str | None = None
    terminal_status_code: int | None = None
    terminal_sha1hex: str | None = None


class ResultBundle(_Lenient):
    """``fileset_bundle``: where its file ended, and where an item store keeps it."""

    terminal: ResultTerminal | None = None
    archiveorg_bundle_path: str | None = None


class IngestResultView(_Lenient):
    """The parts of an ingest result, fileset or file, that its SQL rows hold
    (``persist ingest-fileset``): ``FilesetIngestResult``'s fields, leniently.
    An ingest-file result has no platform fields, and gets no platform row."""

    hit: bool | None = None
    #: a string, not ``Status``: another producer's (or an older version's)
    #: status is stored as it came, not refused
    status: str
    request: ResultRequest
    terminal: ResultTerminal | None = None
    platform_name: str | None = None
    platform_domain: str | None = None
    platform_id: str | None = None
    ingest_strategy: str | None = None
    archiveorg_item_name: str | None = None
    file_count: int | None = None
    total_size: int | None = None
    fileset_bundle: ResultBundle | None = None
    #: stored as it is (a JSON column): the entries are the producer's
    manifest: list[dict[str, Any]] | None = None

    def file_row(self) -> IngestFileResultRow:
        """The ``ingest_file_result`` row: the status and the landing page's terminal."""
        terminal = self.terminal or ResultTerminal()
        return IngestFileResultRow(
            ingest_type=self.request.ingest_type, base_url=self.request.base_url,
            hit=bool(self.hit), status=self.status or None,
            terminal_url=terminal.terminal_url, terminal_dt=terminal.terminal_dt,
            terminal_status_code=terminal.terminal_status_code,
            terminal_sha1hex=terminal.terminal_sha1hex)

    def platform_row(self) -> IngestFilesetPlatformRow | None:
        """The ``ingest_fileset_platform`` row, when the platform identified the dataset."""
        if not (self.platform_name and self.platform_domain and self.platform_id):
            return None
        bundle = self.fileset_bundle or ResultBundle()
        bundle_terminal = bundle.terminal or ResultTerminal()
        web = (self.ingest_strategy or "").startswith("web-")
        return IngestFilesetPlatformRow(
            ingest_type=self.request.ingest_type, base_url=self.request.base_url,
            hit=bool(self.hit), status=self.status or None,
            platform_name=self.platform_name, platform_domain=self.platform_domain,
            platform_id=self.platform_id, ingest_strategy=self.ingest_strategy,
            total_size=self.total_size, file_count=self.file_count,
            archiveorg_item_name=self.archiveorg_item_name,
            archiveorg_item_bundle_path=bundle.archiveorg_bundle_path,
            web_bundle_url=bundle_terminal.terminal_url if web else None,
            web_bundle_dt=bundle_terminal.terminal_dt if web else None,
            manifest=self.manifest)


@dataclass(frozen=True, slots=True)
class IngestFilesetPlatformRow:
    """An ``ingest_fileset_platform`` row: the platform's item and how it was
    archived, for the request's key (ingest_type, base_url)."""

    table: ClassVar[str] = "ingest_fileset_platform"

    ingest_type: str
    base_url: str
    hit: bool
    status: str | None
    platform_name: str
    platform_domain: str
    platform_id: str
    ingest_strategy: str | None
    total_size: int | None
    file_count: int | None
    archiveorg_item_name: str | None
    archiveorg_item_bundle_path: str | None
    web_bundle_url: str | None
    web_bundle_dt: str | None
    #: the producer's manifest entries, stored as they are (a JSON column)
    manifest: list[dict[str, Any]] | None

    def columns(self) -> dict[str, Any]:
        # a column per field, named alike: the fields above are the one list
        return {f.name: getattr(self, f.name) for f in fields(self)}
