"""``sandcrawler process``: files -> metadata, text, thumbnails -> store, PDF table, catalogue."""

from __future__ import annotations

import click

from sandcrawler.cli.options import (
    open_services,
    pipeline_options,
    processing_options,
    run_pipeline,
)
from sandcrawler.pipeline.sinks import StdoutSink
from sandcrawler.pipeline.sources import (
    CdxSource,
    JsonLinesSource,
    PathsSource,
    Source,
    ZipSource,
)
from sandcrawler.web.file_records import check_warc_source


@click.command()
@click.argument("paths", nargs=-1, metavar="PATH...|-")
@click.option("--zip", "archives", multiple=True, metavar="FILE",
              type=click.Path(exists=True, dir_okay=False),
              help="Process each file inside this zip archive (repeatable).")
@click.option("--cdx", "cdx_file", metavar="FILE|-",
              type=click.Path(exists=True, dir_okay=False, allow_dash=True),
              help="Process the captures listed in this CDX file (- for stdin), reading "
                   "their bytes from the WARC source (--source).")
@processing_options
@pipeline_options("process-pdf")
def process(paths: tuple[str, ...], archives: tuple[str, ...], cdx_file: str | None,
            source: str | None, force: bool, timeout: float | None, memory_limit: int | None,
            jobs: int,
            batch_size: int | None, limit: int | None, progress: bool | None, silent: bool,
            fail_fast: bool) -> None:
    """Process files: metadata, and for PDFs text and thumbnails.

    PATH is a file or a directory (walked recursively); `-` reads file records
    from stdin: paths, or JSON lines with "path", "url" (fetched), "sha1" (a
    file already in the store) or "warc_path"/"warc_offset"/"warc_csize" (a
    capture in the WARC source). --zip processes the files inside zip archives
    (reported as ARCHIVE!MEMBER). --cdx processes the 200 captures of a CDX
    file, read from the WARCs in --source (a directory, where a file named by
    its sha1 also serves, or an http(s) URL prefix answering Range requests);
    the capture is also recorded in file:cdx. For each file: size, sha1, sha256,
    md5 and the MIME type from its bytes; for a PDF, its own metadata, text and
    page-0 thumbnails, extracted in a child process with a time and memory
    limit. Results go to the resource store (the PDF and its thumbnails under
    the document's UUID), the PDF table (file, pdf0 and grobid0) and the
    catalogue; one JSON line per record on stdout (a record whose file cannot
    be read too: its status and error). Files already processed are skipped
    (status exists) unless --force.
    """
    if sum(map(bool, (paths, archives, cdx_file))) != 1:
        raise click.UsageError("give one of PATH... (or -), --zip FILE or --cdx FILE")
    services = open_services(warc_source=source)
    warc_source = check_warc_source(services.settings.warc.source)
    if cdx_file and not warc_source:
        raise click.UsageError("--cdx needs --source DIR|URL (or SANDCRAWLER_WARC_SOURCE): "
                               "where the WARC files are")
    _ = services.pdftable.table_id  # checks the database before reading input
    items: Source
    if archives:
        items = ZipSource(list(archives), limit=limit)
    elif cdx_file:
        items = CdxSource(cdx_file, limit=limit)
    elif paths == ("-",):
        items = JsonLinesSource("-", limit=limit)
    else:
        items = PathsSource(list(paths), limit=limit)
    run_pipeline(
        "process",
        items,
        "process-pdf",
        {"force": force, "timeout": timeout, "memory_limit_mb": memory_limit},
        StdoutSink(),
        services,
        jobs=jobs, batch_size=batch_size,
        progress=progress, silent=silent, fail_fast=fail_fast,
    )
