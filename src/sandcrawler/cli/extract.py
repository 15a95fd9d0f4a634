"""``sandcrawler extract``: PDFs -> header and references (and with ``--full``
the body), with the embedded extraction cascade (docs/extraction.md); nothing
is stored."""

from __future__ import annotations

import click

from sandcrawler.cli.options import open_services, pipeline_options, run_pipeline
from sandcrawler.pipeline.sinks import StdoutSink
from sandcrawler.pipeline.sources import PathsSource


@click.command()
@click.argument("paths", nargs=-1, required=True, metavar="PATH...",
                type=click.Path(exists=True, readable=False))
@click.option("--reader", type=click.Choice(["pdfalto", "pdfium"]), default=None,
              help="The layout reader tried first; the other is the fallback "
                   "[default: setting extract.reader, pdfalto].")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=None,
              help="Seconds one PDF may take; then its process is killed (status timeout) "
                   "[default: setting extract.timeout, 60].")
@click.option("--memory-limit", type=click.IntRange(min=64), default=None, metavar="MIB",
              help="Address space of the extracting process, in MiB "
                   "[default: setting extract.memory_limit_mb, 2048].")
@click.option("--full", is_flag=True,
              help="Also read the body: sections with their paragraphs and the citations "
                   "in each, figures and tables (the `body` key).")
@click.option("--header-only", is_flag=True,
              help="Only the header, from the first two pages, as GROBID's "
                   "processHeaderDocument reads it: no references, no body.")
@click.option("--consolidate", is_flag=True,
              help="Match each header against the catalog (the match index over the "
                   "persisted Crossref works) and fill in what the page did not say from "
                   "the matched work: DOI, authors' given names, journal, volume, issue, "
                   "pages, date. What the page said is kept; `consolidation` says which "
                   "fields were filled and where the two differ.")
@pipeline_options("extract-pdf")
def extract(paths: tuple[str, ...], reader: str | None, timeout: float | None,
            memory_limit: int | None, full: bool, header_only: bool, consolidate: bool,
            jobs: int,
            batch_size: int | None, limit: int | None, progress: bool | None, silent: bool,
            fail_fast: bool) -> None:
    """Extract the header and the references of PDFs, without a GROBID server.

    PATH is a PDF or a directory (walked recursively, in name order). For each
    file, one JSON line: `path`, `status` (success, partial, no-text, not-pdf,
    bad-pdf, encrypted, empty-pdf, layout-failed, timeout, memory-limit,
    crashed), `header` (title, authors with full_name and affiliation, date,
    journal, volume, issue, pages, doi, arxiv_id, keywords), `abstract` and
    `references` (each with `unstructured` and its parsed fields), and how the
    run went (pages, pages_read, reader, models, seconds). With --full, `body`
    holds `sections` (each with `head`, `number` and `paragraphs`: `text` and
    the `citations` in it, each with its `type`, `text`, offsets and `target`,
    the xml:id of the reference "b<n>" in `references` order, or of a figure
    "fig_<n>", table "tab_<n>" or formula), `figures` and `footnotes`. With
    --consolidate, `consolidation` (null when no work matched) gives the matched
    work's `doi`, the fields it `filled` and those where it `differs` from the
    page (the page's are kept). Each PDF runs in a
    child process with a time and a memory limit. Nothing is written to the
    store: `process` and file ingest run the same extraction and store it.

    \b
      sandcrawler extract paper.pdf
      sandcrawler extract -j 2 papers/ > extracted.jsonl
      sandcrawler extract paper.pdf | jq '.header.title, (.references | length)'
      sandcrawler extract --full paper.pdf | jq '.body.sections[].head'
      sandcrawler extract --header-only papers/ | jq -c '[.path, .header.title]'
      sandcrawler extract --consolidate paper.pdf | jq '.header.doi, .consolidation'
    """
    if full and header_only:
        raise click.UsageError("--full and --header-only ask for different things; give one")
    services = open_services(**{"extract.reader": reader})
    run_pipeline(
        "extract",
        PathsSource(list(paths), limit=limit),
        "extract-pdf",
        {"timeout": timeout, "memory_limit_mb": memory_limit, "full": full,
         "header_only": header_only, "consolidate": consolidate},
        StdoutSink(),
        services,
        jobs=jobs, batch_size=batch_size, progress=progress, silent=silent,
        fail_fast=fail_fast,
    )
