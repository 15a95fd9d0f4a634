"""``sandcrawler persist``: JSON lines into the database (idempotent upserts)."""

from __future__ import annotations

from functools import partial

import click

from sandcrawler import jobs as factories
from sandcrawler.cli.options import (
    input_argument,
    jsonl_source,
    pipeline_options,
    run_pipeline,
    settings_from,
)
from sandcrawler.cli.refs import check_parser, parser_option
from sandcrawler.db.engine import make_engine
from sandcrawler.db.migrate import ensure_schema
from sandcrawler.db.persist import write_tables
from sandcrawler.pipeline.sinks import DatabaseSink

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


def _db_sink(settings):  # type: ignore[no-untyped-def]
    engine = make_engine(settings)
    ensure_schema(engine)
    return DatabaseSink(engine, write_tables)


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
    settings = settings_from(grobid_url=grobid_url)
    if parse_refs:
        check_parser(settings, parser)
    run_pipeline(
        "persist crossref",
        jsonl_source(input_file, limit),
        partial(factories.persist_crossref, settings, parse_refs, parser),
        _db_sink(settings),
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
    settings = settings_from()
    run_pipeline(
        "persist grobid-refs",
        jsonl_source(input_file, limit),
        partial(factories.persist_grobid_refs, settings),
        _db_sink(settings),
        settings,
        jobs=jobs, batch_size=batch_size or PERSIST_BATCH, progress=progress,
        silent=silent, fail_fast=fail_fast,
    )
