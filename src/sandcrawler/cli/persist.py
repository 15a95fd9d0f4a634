"""``sandcrawler persist``: JSON lines into the database (idempotent upserts)."""

from __future__ import annotations

from typing import Any

import click

from sandcrawler.app.builders.refs import persist_crossref_sink
from sandcrawler.app.services import Services
from sandcrawler.app.settings import load_settings
from sandcrawler.cli.options import (
    input_argument,
    parser_option,
    pipeline_options,
    run_pipeline,
)
from sandcrawler.pipeline.db_sink import DatabaseSink
from sandcrawler.pipeline.sources import JsonLinesSource


@click.group()
def persist() -> None:
    """Load JSON lines into the database. Upserts: re-running is safe.

    PostgreSQL is written with COPY into a staging table, then one
    INSERT ... ON CONFLICT per batch; an older version of a row never replaces a
    newer one.
    """


def database_sink(services: Services) -> DatabaseSink:
    """Batch commands check the database before reading any input."""
    services.check_schema()
    return services.database_sink()


def _persist(name: str, worker: str, options: dict[str, Any], input_file: str, services: Services,
             jobs: int, batch_size: int | None, limit: int | None, progress: bool | None,
             silent: bool, fail_fast: bool) -> None:
    run_pipeline(name, JsonLinesSource(input_file, limit=limit), worker, options,
                 database_sink(services), services, jobs=jobs, batch_size=batch_size,
                 progress=progress, silent=silent, fail_fast=fail_fast)


@persist.command("crossref")
@input_argument
@click.option("--parse-refs", is_flag=True,
              help="Also parse references and fill grobid_refs in the same pass.")
@parser_option
@click.option("--grobid-url", help="GROBID base URL [default: setting grobid.url].")
@pipeline_options("persist-crossref")
def persist_crossref(input_file: str, parse_refs: bool, parser: str | None,
                     grobid_url: str | None, jobs: int, batch_size: int | None,
                     limit: int | None, progress: bool | None, silent: bool,
                     fail_fast: bool) -> None:
    """Upsert Crossref works (JSON lines, envelope or bare) into the crossref table."""
    services = Services.for_process(load_settings(grobid_url=grobid_url))
    if parse_refs:
        services.check_citation_parser(parser)
    services.check_schema()
    # the works written are added to the match index as well (docs/matching.md, "References")
    run_pipeline("persist crossref", JsonLinesSource(input_file, limit=limit), "persist-crossref",
                 {"parse_refs": parse_refs, "parser": parser}, persist_crossref_sink(services),
                 services, jobs=jobs, batch_size=batch_size, progress=progress, silent=silent,
                 fail_fast=fail_fast)


@persist.command("grobid-refs")
@input_argument
@pipeline_options("persist-grobid-refs")
def persist_grobid_refs(input_file: str, jobs: int, batch_size: int | None, limit: int | None,
                        progress: bool | None, silent: bool, fail_fast: bool) -> None:
    """Upsert grobid_refs rows (the output of parse-crossref-refs)."""
    _persist("persist grobid-refs", "persist-grobid-refs", {}, input_file,
             Services.for_process(load_settings()), jobs, batch_size, limit, progress, silent,
             fail_fast)


@persist.command("ingest-file")
@input_argument
@pipeline_options("persist-ingest-file")
def persist_ingest_file(input_file: str, jobs: int, batch_size: int | None, limit: int | None,
                        progress: bool | None, silent: bool, fail_fast: bool) -> None:
    """Upsert file ingest results (the output of `ingest file`, `ingest requests`)
    into ingest_file_result, and their requests into ingest_request (requests
    with link_source and link_source_id)."""
    _persist("persist ingest-file", "persist-ingest-file", {}, input_file,
             Services.for_process(load_settings()), jobs, batch_size, limit, progress, silent,
             fail_fast)


@persist.command("ingest-fileset")
@input_argument
@pipeline_options("persist-ingest-fileset")
def persist_ingest_fileset(input_file: str, jobs: int, batch_size: int | None,
                           limit: int | None, progress: bool | None, silent: bool,
                           fail_fast: bool) -> None:
    """Upsert fileset ingest results (the output of `ingest requests`) and
    ingest-file results into ingest_file_result and, when the platform was
    identified, ingest_fileset_platform."""
    _persist("persist ingest-fileset", "persist-ingest-fileset", {}, input_file,
             Services.for_process(load_settings()), jobs, batch_size, limit, progress, silent,
             fail_fast)
