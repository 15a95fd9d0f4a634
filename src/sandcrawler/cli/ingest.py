"""``sandcrawler ingest``: ingest requests → crawled, archived, processed full
text (pdf, xml, html) and archived datasets (dataset)."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import orjson

from sandcrawler.app.demo import default_demo_dir, demo_settings, look_command, run_demo
from sandcrawler.app.settings import load_settings
from sandcrawler.cli.exits import EXIT_FAILED
from sandcrawler.cli.options import input_argument, open_services, pipeline_options, run_pipeline
from sandcrawler.cli.waiting import reporting_waits
from sandcrawler.core.errors import RecordError
from sandcrawler.core.work import json_line
from sandcrawler.demo import EXPECTED as DEMO_EXPECTED
from sandcrawler.demo import REQUESTS, SITE, DemoSite
from sandcrawler.fileset.platforms import PLATFORMS
from sandcrawler.fileset.worker import PersistIngestFilesetWorker
from sandcrawler.ingest.requests import argument_request, doi_requests
from sandcrawler.ingest.worker import PersistIngestFileWorker, record_results
from sandcrawler.pipeline.opening import OPENING, guess
from sandcrawler.pipeline.sinks import StdoutSink
from sandcrawler.pipeline.sources import JsonLinesSource
from sandcrawler.records.fileset import (
    DatasetFileResult,
    FilesetIngestResult,
    IngestRequest,
    IngestStrategy,
)
from sandcrawler.records.ingest import FILE_INGEST_TYPES, FileIngestResult, IngestType
from sandcrawler.records.statuses import IngestFileStatus

strategy_option = click.option(
    "--strategy", type=click.Choice([s.value for s in IngestStrategy]), default=None,
    help="Datasets: archive with this strategy instead of the one the platform helper chooses.")
FILE_TYPES = sorted(t.value for t in FILE_INGEST_TYPES)
PRETTY = orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE


@click.group(help=(
    "Ingest documents and datasets. File ingest (pdf, xml, html) crawls from a URL "
    "(an article's landing page, a DOI link) to its full text, archives every hop in our "
    "web archive (WARC files + the web_cdx index), then processes, stores and catalogues "
    "what it found (docs/ingest.md). Dataset ingest finds the platform of a landing page ("
    + ", ".join(p.title for p in PLATFORMS.values())
    + "), reads the dataset's files from its API and archives them, verified against every "
    "size and checksum the platform gives (docs/fileset.md)."))
def ingest() -> None:
    pass


def _request(arg: str, **fields: Any) -> IngestRequest:
    """The command line's request; one that is not is one line on stderr, exit 1."""
    try:
        return argument_request(arg, source="sandcrawler-cli", **fields)
    except RecordError as e:
        click.echo(f"{arg!r}: {e}", err=True)
        sys.exit(EXIT_FAILED)


def _print(result: FileIngestResult | FilesetIngestResult | DatasetFileResult,
           pretty: bool) -> None:
    # the sinks' one line (json_line: bytes that are not UTF-8 escaped, not refused)
    line = orjson.dumps(orjson.loads(json_line(result)), option=PRETTY) if pretty \
        else json_line(result) + b"\n"
    sys.stdout.buffer.write(line)
    sys.stdout.flush()


def _missed(arg: str, status: str, error: str | None) -> None:
    click.echo(f"{arg}: {status}: {error or ''}".rstrip(": "), err=True)
    sys.exit(EXIT_FAILED)


pretty_option = click.option("--pretty", is_flag=True, help="Print the result indented.")


@ingest.command("file")
@click.argument("url_or_doi", metavar="URL|DOI")
@click.option("--type", "ingest_type", type=click.Choice(FILE_TYPES), default="pdf",
              show_default=True, help="What full text to look for.")
@click.option("--force-recrawl", is_flag=True,
              help="Fetch again even what the web archive holds, and process again.")
@click.option("--doi", help="The work's DOI (the request's ext_ids.doi) when URL is not one.")
@pretty_option
def ingest_file(url_or_doi: str, ingest_type: str, force_recrawl: bool, doi: str | None,
                pretty: bool) -> None:
    """Ingest one URL (a landing page, a DOI link, or the file itself) or DOI
    (10.…, doi:10.…, a doi.org URL: crawled from https://doi.org/), record the
    request and its result in the database (the rows `persist ingest-file`
    writes: `sandcrawler serve` shows them at once) and print the result as
    one JSON line. A request that waits on a slow host says so on stderr.

    \b
    Examples:
      sandcrawler ingest file 10.7717/peerj.4375
      sandcrawler ingest file https://journals.plos.org/plosone/article?id=10.1371/journal.pone.0093949
      sandcrawler ingest file --type xml https://www.scielo.br/j/abc/a/XYZ/
      sandcrawler ingest file --type html --pretty https://www.dlib.org/dlib/may05/vanhyning/05vanhyning.html

    Exit status 0 when the full text was found and archived (success,
    success-existing), 1 otherwise; the status says why (docs/ingest.md).
    """
    request = _request(url_or_doi, ingest_type=ingest_type, force_recrawl=force_recrawl or None,
                       ext_ids={"doi": doi} if doi else None)
    services = open_services()
    ingester = services.file_ingester()
    try:
        with reporting_waits():
            result = ingester.ingest(request)
    finally:
        ingester.close()
    record_results(services.engine, PersistIngestFileWorker(), [result])
    _print(result, pretty)
    if not result.hit:
        _missed(url_or_doi, result.status, result.error_message)


@ingest.command("fileset")
@click.argument("url", metavar="URL|DOI")
@click.option("--ingest-type", default="dataset", show_default=True,
              help="Ingest type of the request.")
@click.option("--force-recrawl", is_flag=True,
              help="Archive again even if the dataset is already archived.")
@strategy_option
@click.option("--file-result", is_flag=True,
              help="Also print the ingest-file result a single-file dataset produces.")
@pretty_option
def ingest_fileset(url: str, ingest_type: str, force_recrawl: bool, strategy: str | None,
                   file_result: bool, pretty: bool) -> None:
    """Ingest one dataset landing page URL or DOI (10.…, doi:10.…, a doi.org
    URL), record its result in the database (the rows `persist ingest-fileset`
    writes) and print it as one JSON line.

    \b
    Examples:
      sandcrawler ingest fileset https://zenodo.org/records/5703112
      sandcrawler ingest fileset --strategy archiveorg-fileset https://doi.org/10.5281/zenodo.5703112

    Exit status 0 when it is archived (success, success-file, success-existing),
    1 otherwise; the status says why.
    """
    request = _request(url, ingest_type=ingest_type, force_recrawl=force_recrawl or None)
    services = open_services()
    ingester = services.fileset_ingester(IngestStrategy(strategy) if strategy else None)
    with reporting_waits():
        out = ingester.ingest(request)
    record_results(services.engine, PersistIngestFilesetWorker(), [out.result])
    _print(out.result, pretty)
    if file_result and out.file_result is not None:
        _print(out.file_result, pretty)
    if not out.result.hit:
        _missed(url, out.status, out.error)


@ingest.command("requests")
@input_argument
@strategy_option
@pipeline_options("ingest")
def ingest_requests(input_file: str, strategy: str | None, jobs: int, batch_size: int | None,
                    limit: int | None, progress: bool | None, silent: bool,
                    fail_fast: bool) -> None:
    """Ingest requests (JSON lines, the original system's ingest requests:
    {"ingest_type": "pdf", "base_url": ..., "link_source": ..., "ext_ids": {...}})
    and print one result per line: a file ingest result for pdf, xml and html,
    a fileset result for dataset.

    \b
    Examples:
      sandcrawler ingest requests requests.json > results.json
      sandcrawler ingest requests-from-dois dois.txt | sandcrawler ingest requests -j 4 -

    Requests of other ingest types get skip-ingest-type. A request that is not
    a hit still gives its result line; its status and message also go to
    stderr. Feed the results to `persist ingest-file` (and `persist
    ingest-fileset`) to record them; a recorded hit is not crawled again.
    """
    run_pipeline(
        "ingest requests",
        JsonLinesSource(input_file, limit=limit),
        "ingest", {"strategy": IngestStrategy(strategy) if strategy else None},
        StdoutSink(),
        open_services(),
        jobs=jobs, batch_size=batch_size, progress=progress, silent=silent,
        fail_fast=fail_fast,
    )


@ingest.command("requests-from-dois")
@input_argument
@click.option("--type", "ingest_type", type=click.Choice([t.value for t in IngestType]),
              default="pdf", show_default=True, help="Ingest type of the requests.")
@click.option("--resolver", default="https://doi.org/", show_default=True,
              help="DOI resolver the base URLs go through.")
@click.option("--source", "request_source", default="sandcrawler-cli", show_default=True,
              help="ingest_request_source of the requests.")
def requests_from_dois(input_file: str, ingest_type: str, resolver: str,
                       request_source: str) -> None:
    """Turn a list of DOIs (one per line; doi:, https://doi.org/ prefixes and
    case are normalised) into ingest requests through the DOI resolver, one
    JSON line each: base_url is the resolver's URL for the DOI, link_source
    "doi", ext_ids.doi the DOI. Blank lines and # comments are skipped.

    A line that is not a DOI is reported on stderr (FILE:LINE: why) and
    skipped, and a summary says how many. Exit status: 0 when at least one
    request was made (as batch commands, the summary says what was skipped);
    1 when none was, or when the first 5 lines are all not DOIs (one line says
    so, rather than one per line of a file that is not a DOI list).

    \b
    Example:
      sandcrawler ingest requests-from-dois dois.txt > requests.json
    """
    source = "stdin" if input_file == "-" else input_file
    first: list[bytes] = []  # the input's first line, to say what it is when it is no list

    def lines() -> Iterator[bytes]:
        for raw in click.open_file(input_file, "rb"):
            if not first:
                first.append(raw)
            yield raw

    made = skipped = 0
    held: list[str] = []  # the first bad lines, until a DOI shows the input is a DOI list
    for number, outcome in doi_requests(lines(), ingest_type=ingest_type, resolver=resolver,
                                        source=request_source):
        if isinstance(outcome, str):
            skipped += 1
            report = f"{source}:{number}: {outcome}"
            if made:
                click.echo(report, err=True)
                continue
            held.append(report)
            if len(held) >= OPENING:
                what = guess(first[0] if first else b"")
                raise click.ClickException(
                    f"{source}: the first {OPENING} lines are not DOIs: this command reads "
                    "DOIs, one per line" + (f"; is it {what}?" if what else ""))
            continue
        for report in held:
            click.echo(report, err=True)
        held = []
        made += 1
        sys.stdout.buffer.write(orjson.dumps(outcome.to_json(),
                                             option=orjson.OPT_APPEND_NEWLINE))
    for report in held:
        click.echo(report, err=True)
    click.echo(f"requests-from-dois: {made:,} request(s), {skipped:,} line(s) skipped "
               "(not DOIs)", err=True)
    if not made:
        sys.exit(EXIT_FAILED)


@ingest.command("demo")
@click.option("--dir", "demo_dir", type=click.Path(file_okay=False, path_type=Path),
              default=None,
              help="The demo's own data directory: its SQLite database and store "
                   "[default: beside the data directory, named <data_dir>-demo: "
                   "~/.local/share/sandcrawler-demo when nothing is configured].")
def ingest_demo(demo_dir: Path | None) -> None:
    """The offline demo: file ingest of five real open-access articles (PLOS ONE,
    PeerJ, eLife, First Monday, SciELO; CC BY). Their landing pages, in their
    publishers' markup, and their full texts (PDF, HTML, JATS XML), rendered
    from the articles' metadata, ship with sandcrawler; they are served on
    loopback at their own URLs and ingested end to end: every hop archived, the
    full text processed, stored, catalogued, its references parsed, the results
    persisted. Prints a summary per status, where everything is, and how to
    look at it.

    It runs in a data directory of its own (--dir), never in the configured
    one: the demo's documents carry real DOIs and URLs. A second run finds
    everything there already: success-existing, nothing fetched again.

    Exit status 0 when every request ended as the demo expects (one honest
    miss: no-pdf-link for an article published as HTML only).
    """
    directory = demo_dir or default_demo_dir(load_settings().data_dir)
    with DemoSite() as site:
        # the demo hosts are reached on loopback; no delay between requests to them
        services = open_services(**demo_settings(directory), http_routes=site.routes(),
                                 crawl_host_delay=0)
        settings = services.settings
        click.echo(f"demo: {len(REQUESTS)} requests to {len(site.origins)} sites served "
                   f"at {site.url} from {SITE}", err=True)
        click.echo(f"demo: everything goes to the demo's own data directory "
                   f"{settings.data_dir}", err=True)
        report = run_demo(services)
    for result in report.results:
        sys.stdout.buffer.write(orjson.dumps(result.to_json(), option=orjson.OPT_APPEND_NEWLINE))
    click.echo("\nstatus summary:", err=True)
    for status, count in sorted(report.statuses.items()):
        click.echo(f"  {status:<20} {count}", err=True)
    if existing := report.statuses.get("success-existing"):
        click.echo(f"  ({existing} already archived and processed in {settings.data_dir} by an "
                   "earlier run: nothing fetched again; remove the directory to start afresh)",
                   err=True)
    click.echo("\nwhere to look:", err=True)
    for block in report.hits:
        click.echo("\n".join(block), err=True)
    click.echo(f"\nresults persisted to ingest_file_result and ingest_request in "
               f"{settings.database.url}", err=True)
    click.echo(f"\nto look at it (pages on http://{settings.serve.host}:{settings.serve.port}):\n"
               f"  {look_command(settings, 'sandcrawler serve')}\n"
               f"  {look_command(settings, 'sandcrawler db status')}\n"
               "with internet, a real article into your own data directory:\n"
               "  sandcrawler ingest file https://doi.org/10.7717/peerj.4375", err=True)
    expected = Counter(DEMO_EXPECTED)
    got = Counter(r.status for r in report.results)
    # a rerun finds everything archived and processed: success-existing
    got_hits = got.pop(IngestFileStatus.SUCCESS, 0) + got.pop(IngestFileStatus.SUCCESS_EXISTING, 0)
    if got_hits != expected.pop(IngestFileStatus.SUCCESS) or got != expected:
        sys.exit(EXIT_FAILED)
