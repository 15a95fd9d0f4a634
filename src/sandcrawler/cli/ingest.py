"""``sandcrawler ingest``: dataset (fileset) ingest requests → archived files and results."""

from __future__ import annotations

import sys

import click
import orjson

from sandcrawler.cli.exits import EXIT_FAILED
from sandcrawler.cli.options import input_argument, open_services, pipeline_options, run_pipeline
from sandcrawler.fileset.platforms import PLATFORMS
from sandcrawler.models.fileset import IngestRequest, IngestStrategy
from sandcrawler.pipeline.sinks import StdoutSink
from sandcrawler.pipeline.sources import JsonLinesSource

strategy_option = click.option(
    "--strategy", type=click.Choice([s.value for s in IngestStrategy]), default=None,
    help="Archive with this strategy instead of the one the platform helper chooses.")


@click.group(help=(
    "Ingest datasets: find the platform of a landing page ("
    + ", ".join(p.title for p in PLATFORMS.values())
    + "), read the dataset's files from its API, and archive them, verified against every "
    "size and checksum the platform gives, in our web archive (WARC files + the web_cdx "
    "index) or the item store; see docs/fileset.md for strategies and statuses."))
def ingest() -> None:
    pass


@ingest.command("fileset")
@click.argument("url")
@click.option("--ingest-type", default="dataset", show_default=True,
              help="Ingest type of the request.")
@click.option("--force-recrawl", is_flag=True,
              help="Archive again even if the dataset is already archived.")
@strategy_option
@click.option("--file-result", is_flag=True,
              help="Also print the ingest-file result a single-file dataset produces.")
def ingest_fileset(url: str, ingest_type: str, force_recrawl: bool, strategy: str | None,
                   file_result: bool) -> None:
    """Ingest one dataset landing page URL and print its result (indented JSON).

    Exit status 0 when it is archived (success, success-file, success-existing),
    1 otherwise; the status says why.
    """
    ingester = open_services().fileset_ingester(IngestStrategy(strategy) if strategy else None)
    out = ingester.ingest(IngestRequest(ingest_type=ingest_type, base_url=url,
                                        force_recrawl=force_recrawl))
    pretty = orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE
    sys.stdout.buffer.write(orjson.dumps(out.result, option=pretty))
    if file_result and out.file_result is not None:
        sys.stdout.buffer.write(orjson.dumps(out.file_result, option=pretty))
    if not out.result["hit"]:
        click.echo(f"{url}: {out.status}: {out.error or out.status}", err=True)
        sys.exit(EXIT_FAILED)


@ingest.command("requests")
@input_argument
@strategy_option
@pipeline_options("ingest-fileset")
def ingest_requests(input_file: str, strategy: str | None, jobs: int, batch_size: int | None,
                    limit: int | None, progress: bool | None, silent: bool,
                    fail_fast: bool) -> None:
    """Ingest requests (JSON lines: {"ingest_type": "dataset", "base_url": ...})
    and print one fileset result per line.

    Requests of other ingest types are skipped (skip-ingest-type). A request
    that is not archived still gives its result line; its status and message
    also go to stderr.
    """
    run_pipeline(
        "ingest requests",
        JsonLinesSource(input_file, limit=limit),
        "ingest-fileset", {"strategy": IngestStrategy(strategy) if strategy else None},
        StdoutSink(),
        open_services(),
        jobs=jobs, batch_size=batch_size, progress=progress, silent=silent,
        fail_fast=fail_fast,
    )
