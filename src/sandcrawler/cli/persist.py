"""``sandcrawler persist``: JSON lines into the database (idempotent upserts)."""

from __future__ import annotations

from functools import partial

import click

from sandcrawler.app import workers as factories
from sandcrawler.citations import check_citation_parser
from sandcrawler.cli.options import (
    input_argument,
    parser_option,
    pipeline_options,
    run_pipeline,
)
from sandcrawler.config import Settings, load_settings
from sandcrawler.db.sink import DatabaseSink
from sandcrawler.pipeline.sources import JsonLinesSource

#: Rows per transaction when nothing slow (a parser) is in the loop: large batches
#: amortise the COPY and the upsert statement.
PERSIST_BATCH = 2000


@click.group()
def persist() -> None:
    """Load JSON lines into the database. Upserts: re-running is safe.

    PostgreSQL is written with COPY into a staging table, then one
    INSERT ... ON CONFLICT per batch; an older version of a row never replaces a
    newer one.
    """


def database_sink(settings: Settings) -> DatabaseSink:
    """Batch commands check the database before reading any input."""
    sink = DatabaseSink.from_settings(settings)
    sink.prepare()
    return sink


@persist.command("crossref")
@input_argument
@click.option("--parse-refs", is_flag=True,
              help="Also parse references and fill grobid_refs in the same pass.")
@parser_option
@click.option("--grobid-url", help="GROBID base URL [default: setting grobid_url].")
@pipeline_options
def persist_crossref(input_file: str, parse_refs: bool, parser: str | None,
                     grobid_url: str | None, jobs: int, batch_size: int | None,
                     limit: int | None, progress: bool | None, silent: bool,
                     fail_fast: bool) -> None:
    """Upsert Crossref works (JSON lines, envelope or bare) into the crossref table."""
    settings = load_settings(grobid_url=grobid_url)
    if parse_refs:
        check_citation_parser(settings, parser)
    run_pipeline(
        "persist crossref",
        JsonLinesSource(input_file, limit=limit),
        partial(factories.persist_crossref, settings, parse_refs, parser),
        database_sink(settings),
        settings,
        jobs=jobs, batch_size=batch_size or (None if parse_refs else PERSIST_BATCH),
        progress=progress, silent=silent, fail_fast=fail_fast,
    )


@persist.command("grobid-refs")
@input_argument
@pipeline_options
def persist_grobid_refs(input_file: str, jobs: int, batch_size: int | None, limit: int | None,
                        progress: bool | None, silent: bool, fail_fast: bool) -> None:
    """Upsert grobid_refs rows (the output of parse-crossref-refs)."""
    settings = load_settings()
    run_pipeline(
        "persist grobid-refs",
        JsonLinesSource(input_file, limit=limit),
        partial(factories.persist_grobid_refs, settings),
        database_sink(settings),
        settings,
        jobs=jobs, batch_size=batch_size or PERSIST_BATCH, progress=progress,
        silent=silent, fail_fast=fail_fast,
    )


@persist.command("ingest-fileset")
@input_argument
@pipeline_options
def persist_ingest_fileset(input_file: str, jobs: int, batch_size: int | None,
                           limit: int | None, progress: bool | None, silent: bool,
                           fail_fast: bool) -> None:
    """Upsert fileset ingest results (the output of `ingest requests`) and
    ingest-file results into ingest_file_result and, when the platform was
    identified, ingest_fileset_platform."""
    settings = load_settings()
    run_pipeline(
        "persist ingest-fileset",
        JsonLinesSource(input_file, limit=limit),
        partial(factories.persist_ingest_fileset, settings),
        database_sink(settings),
        settings,
        jobs=jobs, batch_size=batch_size or PERSIST_BATCH,
        progress=progress, silent=silent, fail_fast=fail_fast,
    )
