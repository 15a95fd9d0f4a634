"""``sandcrawler process``: files -> metadata, text, thumbnails -> store, PDF table, catalogue."""

from __future__ import annotations

from functools import partial

import click

from sandcrawler import jobs as factories
from sandcrawler.cli.options import pipeline_options, processing_options, run_pipeline
from sandcrawler.config import load_settings
from sandcrawler.pipeline.sinks import StdoutSink
from sandcrawler.pipeline.sources import JsonLinesSource, PathsSource, Source, ZipSource
from sandcrawler.storage import open_pdftable


@click.command()
@click.argument("paths", nargs=-1, metavar="PATH...|-")
@click.option("--zip", "archives", multiple=True, metavar="FILE",
              type=click.Path(exists=True, dir_okay=False),
              help="Process each file inside this zip archive (repeatable).")
@processing_options
@pipeline_options
def process(paths: tuple[str, ...], archives: tuple[str, ...], force: bool, timeout: float,
            memory_limit: int, jobs: int, batch_size: int | None, limit: int | None,
            progress: bool | None, silent: bool, fail_fast: bool) -> None:
    """Process files: metadata, and for PDFs text and thumbnails.

    PATH is a file or a directory (walked recursively); `-` reads paths (or
    {"path": ...} JSON lines) from stdin; --zip processes the files inside zip
    archives (reported as ARCHIVE!MEMBER). For each file: size, sha1, sha256,
    md5 and the MIME type from its bytes; for a PDF, its own metadata, text and
    page-0 thumbnails, extracted in a child process with a time and memory
    limit. Results go to the resource store (the PDF and its thumbnails under
    the document's UUID), the PDF table (file and pdf0 families) and the
    catalogue; one JSON line per file on stdout. Files already processed are
    skipped (status exists) unless --force.
    """
    if bool(paths) == bool(archives):
        raise click.UsageError("give PATH... (or -) or --zip FILE, not both, not neither")
    settings = load_settings()
    _ = open_pdftable(settings).table_id  # checks the database before reading input
    source: Source
    if archives:
        source = ZipSource(list(archives), limit=limit)
    elif paths == ("-",):
        source = JsonLinesSource("-", limit=limit)
    else:
        source = PathsSource(list(paths), limit=limit)
    run_pipeline(
        "process",
        source,
        partial(factories.process_pdf, settings, force, timeout, memory_limit * 2**20),
        StdoutSink(),
        settings,
        jobs=jobs, batch_size=batch_size or 8,
        progress=progress, silent=silent, fail_fast=fail_fast,
    )
