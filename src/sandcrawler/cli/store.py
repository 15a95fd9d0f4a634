"""``sandcrawler store``: the blob store (local directory or S3) and documents in it."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click
import orjson

from sandcrawler.cli.options import echo_json, open_services
from sandcrawler.core.errors import NotFound, RecordError
from sandcrawler.core.spool import sweep
from sandcrawler.core.timestamps import iso_utc
from sandcrawler.storage.resources import KINDS, resource_key

if TYPE_CHECKING:
    from sandcrawler.storage.blobs import BlobStore
    from sandcrawler.storage.catalogue import Catalogue


@click.group()
def store() -> None:
    """The blob store where documents and their resources live.

    Setting store.url picks it: a directory (default: data_dir/store) or
    s3://BUCKET[/PREFIX] with s3.endpoint_url and the s3.* credentials. Documents are
    laid out as 98/da/17/ff/<uuid>/<uuid>.<ext>; `store kinds` lists the
    resource kinds.
    """


@store.command("init")
def init() -> None:
    """Create the store (directory, or S3 bucket) if missing and check access."""
    blobs = open_services().blobs
    created = blobs.create()
    blobs.check()
    click.echo(f"{blobs.url}: {'created' if created else 'ready'}", err=True)


@store.command("add")
@click.argument("files", nargs=-1, required=True,
                type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--kind", type=click.Choice([k.name for k in KINDS.values() if k.primary]),
              default="pdf", show_default=True, help="Primary resource kind of the files.")
@click.option("--metadata", "metadata_file", type=click.File("rb"),
              help="JSON object of metadata (Crossref style) for a single FILE.")
def add(files: tuple[Path, ...], kind: str, metadata_file: object) -> None:
    """Store files as documents' primary files and catalogue them.

    The document UUID comes from the file's sha1 (or an identifier already in
    the catalogue), so adding the same file again changes nothing. Prints one
    JSON line per file."""
    metadata = None
    if metadata_file is not None:
        if len(files) != 1:
            raise click.UsageError("--metadata goes with exactly one FILE")
        try:
            metadata = orjson.loads(metadata_file.read())  # type: ignore[attr-defined]
        except orjson.JSONDecodeError as e:
            raise click.BadParameter(f"not JSON: {e}", param_hint="--metadata") from None
        if not isinstance(metadata, dict):
            raise click.BadParameter("must be a JSON object", param_hint="--metadata")
    cat = open_services().catalogue
    failed = 0
    for path in files:
        try:
            entry = cat.add_file(path, kind=kind, metadata=metadata)
        except RecordError as e:
            failed += 1
            click.echo(f"{path}: {e.status}: {e}", err=True)
            continue
        echo_json({"path": str(path), **entry.to_json(cat.paths(entry))})
    if failed:
        raise SystemExit(1)


@store.command("ls")
@click.argument("prefix", default="")
def ls(prefix: str) -> None:
    """List blobs whose key starts with PREFIX, as JSON lines (key, size, modified)."""
    for info in open_services().blobs.list(prefix):
        echo_json({"key": info.key, "size": info.size, "modified": iso_utc(info.modified)})


@store.command("cat")
@click.argument("what")
@click.argument("resource", required=False)
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
              help="Write to FILE instead of stdout.")
@click.option("--raw", is_flag=True, help="A .gz resource as stored, not decompressed.")
def cat_blob(what: str, resource: str | None, output: Path | None, raw: bool) -> None:
    """Write a document's resource (or a blob's bytes) to stdout.

    WHAT is a document, as `catalogue get` takes it (a UUID, a DOI, sha1:…,
    pmid:…, …), and RESOURCE one of the kinds `store kinds` lists (default:
    the document's primary file); or WHAT is a blob's key, written as stored.
    A .gz resource is decompressed unless --raw. Binary content is not written
    to a terminal: redirect it or use --output.

    \b
    Examples:
      sandcrawler store cat doi:10.5555/sandcrawler.example > paper.pdf
      sandcrawler store cat doi:10.5555/sandcrawler.example text
      sandcrawler store cat 3f1c2a9e-…-uuid thumb-small -o thumb.png
    """
    services = open_services()
    key, doc_resource = _blob_key(services.catalogue, services.blobs, what, resource)
    # a document's resource through the resource store, which decompresses what it
    # stored compressed (and says so when the bytes are damaged); a key as stored
    opened = (services.catalogue.resources.open(*doc_resource)
              if doc_resource is not None and not raw else services.blobs.open_read(key))
    with opened as stream:
        first = stream.read(64 * 1024)
        if output is None and sys.stdout.isatty() and _binary(first):
            raise click.ClickException(
                f"{key} is binary: not written to a terminal (redirect it, > FILE, "
                "or use --output FILE)")
        with (output.open("wb") if output else contextlib.nullcontext(sys.stdout.buffer)) as out:
            out.write(first)
            while chunk := stream.read(1024 * 1024):
                out.write(chunk)


def _blob_key(cat: Catalogue, blobs: BlobStore, what: str,
              resource: str | None) -> tuple[str, tuple[str, str] | None]:
    """(the key to read, and (document, resource kind) when it is a document's)."""
    if resource is None and "/" in what and blobs.exists(what):
        return what, None  # a blob's key (a DOI has a '/' too, but is no key)
    try:
        uuids = cat.resolve(what)
    except RecordError as e:
        if "/" in what:  # meant as a key
            raise NotFound(f"no blob {what} in the store (and {e})") from None
        raise
    if not uuids:
        raise NotFound(f"no document for {what} in the catalogue, and no blob with that key")
    if len(uuids) > 1:
        raise click.ClickException(f"{what} names {len(uuids)} documents "
                                   f"({', '.join(uuids[:3])}): give a UUID")
    entry = cat.get(uuids[0])
    assert entry is not None
    held = [name for name in entry.resources if name in KINDS]
    if resource is None:
        primary = [name for name in held if KINDS[name].primary]
        if not primary:
            raise NotFound(f"document {entry.uuid} has no primary file (it has "
                           f"{', '.join(held) or 'nothing'})")
        resource = primary[0]
    if resource not in KINDS:
        raise click.BadParameter(f"{resource!r} is not a resource kind (`store kinds` "
                                 "lists them)", param_hint="RESOURCE")
    if resource not in held:
        raise NotFound(f"document {entry.uuid} has no {resource} (it has {', '.join(held)})")
    return resource_key(entry.uuid, resource), (entry.uuid, resource)


def _binary(head: bytes) -> bool:
    """Whether the start of a file is not text (a NUL, or not UTF-8 but for a
    character cut at the end)."""
    if b"\0" in head:
        return True
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as e:
        return e.start < len(head) - 3
    return False


@store.command("cleanup")
@click.option("--older-than", type=click.FloatRange(0), default=24.0, show_default=True,
              help="Hours: leftovers younger than this may belong to a running writer.")
def cleanup(older_than: float) -> None:
    """Remove what interrupted writes left behind: temporary files and S3 uploads
    never completed (never visible as blobs), WARC files of the web archive
    that no index row refers to (a crawl stopped between storing a WARC file and
    indexing it), and downloads spooled by other hosts sharing the spool
    directory (those of this host's processes that are gone are removed whenever
    a command starts using it)."""
    services = open_services()
    removed = services.blobs.cleanup(older_than * 3600)
    warcs = services.web_archive.remove_unindexed(older_than * 3600)
    spooled = sweep(services.spool_dir, older_than=older_than * 3600)
    click.echo(f"{removed} leftover(s) removed, {warcs} unindexed WARC file(s), "
               f"{spooled} spool file(s) of other hosts", err=True)


@store.command("kinds")
def kinds() -> None:
    """List the resource kinds and their file names."""
    for k in KINDS.values():
        role = "primary" if k.primary else "secondary"
        click.echo(f"{k.name:<16} <uuid>{k.stored_suffix:<24} {role:<9} {k.description}")
