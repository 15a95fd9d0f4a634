"""``sandcrawler pdftable``: the sha1-keyed PDF table (get, scan, delete, backfill from CDX)."""

from __future__ import annotations

import click

from sandcrawler.cli.options import (
    echo_json,
    input_argument,
    open_services,
    pipeline_options,
    run_pipeline,
)
from sandcrawler.core.errors import NotFound
from sandcrawler.core.mime import normalize_mime
from sandcrawler.pipeline.db_sink import DatabaseSink
from sandcrawler.pipeline.sources import JsonLinesSource

columns_option = click.option(
    "-c", "--column", "columns", multiple=True, metavar="FAMILY[:COLUMN]",
    help="Only these families or columns (repeatable), e.g. -c file -c grobid0:status.",
)


@click.group()
def pdftable() -> None:
    """The PDF table: rows keyed by a file's sha1, in column families.

    The table is named wbgrp-journal-extract-<version>-<env> (settings
    pdftable.version and env) and lives in the project database. Keys are
    accepted as 40 hex digits or 32 base32 characters; `pdftable schema`
    lists the families and columns.
    """


@pdftable.command("get")
@click.argument("key")
@columns_option
def get(key: str, columns: tuple[str, ...]) -> None:
    """Print one row as JSON (exit 1 if there is none)."""
    row = open_services().pdftable.get(key, columns)
    if row is None:
        raise NotFound(f"no row {key} in the PDF table")
    echo_json(row.to_json())


@pdftable.command("scan")
@click.option("--start", metavar="KEY", help="First key (inclusive).")
@click.option("--stop", metavar="KEY", help="Last key (exclusive).")
@columns_option
@click.option("--limit", type=click.IntRange(0), default=None, help="At most this many rows.")
def scan(start: str | None, stop: str | None, columns: tuple[str, ...],
         limit: int | None) -> None:
    """Print rows in key order as JSON lines."""
    for row in open_services().pdftable.scan(start, stop, columns, limit):
        echo_json(row.to_json())


@pdftable.command("delete")
@click.argument("key")
@columns_option
def delete(key: str, columns: tuple[str, ...]) -> None:
    """Delete a row, or only some of its families or columns."""
    removed = open_services().pdftable.delete(key, columns)
    click.echo(f"{removed} cell(s) deleted", err=True)


@pdftable.command("schema")
def schema() -> None:
    """List the declared column families and their columns."""
    table = open_services().pdftable
    click.echo(f"table: {table.name}")
    for fam in table.schema.families:
        flags = " (compressed)" if fam.compressed else ""
        click.echo(f"{fam.name}{flags}: {fam.description}")
        for name, col in fam.columns.items():
            plain = "plain " if fam.compressed and not col.deflated(fam) else ""
            click.echo(f"  {fam.name}:{name:<12} {col.type:<5} {plain}{col.description}")


@pdftable.command("backfill-cdx")
@input_argument
@click.option("--mimetype", "mimetypes", multiple=True, metavar="MIME",
              help="Only captures of this MIME type (repeatable; normalised), "
                   "e.g. --mimetype application/pdf.")
@pipeline_options("backfill-cdx")
def backfill_cdx(input_file: str, mimetypes: tuple[str, ...], jobs: int,
                 batch_size: int | None, limit: int | None, progress: bool | None,
                 silent: bool, fail_fast: bool) -> None:
    """Fill file:cdx and file:mime from 11-column CDX lines.

    Revisits, captures with an HTTP status other than 200 and header lines are
    counted and skipped; malformed lines are reported (bad-cdx) and skipped.
    For a sha1 seen on several lines the last one wins. Re-running is safe.
    """
    services = open_services()
    table = services.pdftable
    _ = table.table_id  # checks the database and registers the table before reading input
    sink = DatabaseSink(table.engine, writer=table.write)
    run_pipeline(
        "pdftable backfill-cdx",
        JsonLinesSource(input_file, limit=limit),
        "backfill-cdx", {"mimetypes": frozenset(normalize_mime(m) for m in mimetypes)},
        sink, services,
        jobs=jobs, batch_size=batch_size,
        progress=progress, silent=silent, fail_fast=fail_fast,
    )
