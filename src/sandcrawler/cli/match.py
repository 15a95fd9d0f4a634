"""``sandcrawler match``: identify biblios and references against the catalog of
Crossref works (docs/matching.md)."""

from __future__ import annotations

import sys

import click

from sandcrawler.app.services import Services
from sandcrawler.app.settings import load_settings
from sandcrawler.cli.options import input_argument, pipeline_options, run_pipeline


@click.group()
def match() -> None:
    """Match biblios and references against the catalog of Crossref works.

    The catalog is the crossref table (`sandcrawler persist crossref`); matching
    reads an embedded index of it, built and kept current by `match index`
    (and by `persist crossref` as it writes).

    \b
      sandcrawler persist crossref works.jsonl
      sandcrawler match index
      echo '{"id": 1, "unstructured": "Smith J. A title. Nature. 2001;409:1-5."}' \\
        | sandcrawler match biblio -
    """


@match.command("index")
@click.option("--rebuild", is_flag=True,
              help="Start again from nothing: the embedded index emptied; on the engine, a "
                   "new collection loaded, then put behind the alias (no downtime).")
@click.option("--engine", "use_engine", is_flag=True,
              help="Load the search engine of match.engine (solr) instead of the embedded "
                   "index.")
@click.option("--dump", "dump", type=click.Path(exists=True, dir_okay=True),
              help="Load from a Crossref dump instead of the crossref table: JSON lines "
                   "(a work, or an API answer, per line), gzip, a directory of the "
                   "public data file's *.json.gz, or a tar of them as Crossref ships it "
                   "(the public data file's .tar, a Plus snapshot's all.json.tar.gz).")
@click.option("--progress/--no-progress", default=None,
              help="A progress bar on stderr [default: when stderr is a terminal].")
def index(rebuild: bool, use_engine: bool, dump: str | None, progress: bool | None) -> None:
    """Build the match index from the crossref table (or a dump), or bring it up to date.

    Only the works written since the last run are read (the table's `updated`
    column; a dump's files and lines done); a run killed part-way resumes where
    it stopped, and a work read twice changes nothing. Prints one line: works
    read, works in the index, time, and the index's size.

    \b
      sandcrawler match index
      sandcrawler match index --rebuild
      SANDCRAWLER_MATCH_ENGINE=solr sandcrawler match index --engine
      sandcrawler match index --engine --dump crossref-2025/ --rebuild
    """
    from tqdm import tqdm

    from sandcrawler.match.dump import load_dump
    from sandcrawler.match.sync import behind, sync

    settings = load_settings()
    engine_name = settings.match.engine
    if use_engine and engine_name == "embedded":
        raise click.UsageError("--engine loads a search engine: set match.engine = solr and "
                               "match.engine_urls (SANDCRAWLER_MATCH_ENGINE, "
                               "SANDCRAWLER_MATCH_ENGINE_URLS)")
    if not use_engine and engine_name != "embedded":
        raise click.UsageError(f"match.engine is {engine_name}: say --engine to load it")
    services = Services.for_process(settings)
    writer, finish = services.match_index_writer(rebuild=rebuild)
    show = sys.stderr.isatty() if progress is None else progress
    try:
        if dump is not None:
            with tqdm(unit=" works", disable=not show, file=sys.stderr,
                      desc="match index") as bar:
                stats = load_dump(writer, dump, rebuild=rebuild, progress=bar.update)
        else:
            services.check_schema()
            todo = behind(services.engine, writer) if not rebuild else None
            with tqdm(total=todo, unit=" works", disable=not show, file=sys.stderr,
                      desc="match index") as bar:
                stats = sync(services.engine, writer, rebuild=rebuild, progress=bar.update)
        if use_engine and show:
            # the bar has ended; a new collection's merge and copies can take minutes
            click.echo("match index: committing (a new collection is then merged into one "
                       "segment a shard and copied before the alias moves)", err=True)
        finish()
        # counted after finish: a search engine counts only what a commit made
        # searchable (the load's own count, taken before, may be 0)
        size = writer.size()
    finally:
        writer.close()
    rate = stats.read / stats.seconds if stats.seconds > 0 else 0.0
    click.echo(f"match index: {stats.read:,} works read ({rate:,.0f}/s), {size:,} in the "
               f"index, {stats.seconds:.1f}s; {_where(services, size)}", err=True)
    services.close()


def _where(services: Services, works: int) -> str:
    """Where the index is, and (embedded) its size on disk and per work."""
    match = services.settings.match
    if match.engine != "embedded":
        return f"{match.engine} {match.engine_collection}"
    path = match.index
    assert path is not None
    size = sum(p.stat().st_size for p in path.parent.glob(path.name + "*") if p.is_file())
    per = size / works if works else 0.0
    return f"{path} {size / 2**20:,.1f} MiB ({per:,.0f} bytes per work)"


def _index_size(services: Services) -> int:
    """The index's works (0 when it is missing), without building a matcher:
    under -j N each process builds its own."""
    from sandcrawler.match.index import IndexMissing

    try:
        index = services.match_index_reader()
    except IndexMissing:
        return 0
    try:
        return index.size()
    finally:
        index.close()


@match.command("biblio")
@input_argument
@pipeline_options("match-biblio")
def biblio(input_file: str, jobs: int, batch_size: int | None, limit: int | None,
           progress: bool | None, silent: bool, fail_fast: bool) -> None:
    """Match biblios, one JSON object per line of FILE (or stdin: -).

    A line is a biblio with the field names of grobid_refs `refs_json` objects
    (title, authors, date, journal, volume, issue, pages, doi, pmid, pmcid,
    arxiv_id, ...), or only `unstructured`: a reference string, parsed first.
    Its `id` is echoed. Output: one JSON line per input line, in order, with
    `id`, `status` (exact, strong, weak, ambiguous, no-match, too-little, ...),
    `doi` (lower-case; null unless exact or strong), `score` and `reasons`;
    `runner_up` when ambiguous. A bad line gets a status of its own.

    \b
      sandcrawler match biblio refs.jsonl > matches.jsonl
      jq -c '{id: .key, unstructured: .}' refs.json | sandcrawler match biblio - -j 2
    """
    from sandcrawler.pipeline.sinks import StdoutSink
    from sandcrawler.pipeline.sources import JsonLinesSource

    services = Services.for_process(load_settings())
    services.check_schema()
    # once, here, before any child opens the index: the children find it current
    if services.settings.match.update:
        services.sync_match_index()
    if _index_size(services) == 0:
        click.echo("match biblio: the catalog is empty, every answer will be empty-catalog: "
                   "load Crossref works with `sandcrawler persist crossref FILE` first",
                   err=True)
    if input_file == "-" and sys.stdin.isatty():
        click.echo("reading biblios from stdin, one JSON object per line (Ctrl-D to end)",
                   err=True)
    run_pipeline("match biblio", JsonLinesSource(input_file, limit=limit), "match-biblio", {},
                 StdoutSink(), services, jobs=jobs, batch_size=batch_size, progress=progress,
                 silent=silent, fail_fast=fail_fast)


#: ``--source`` -> the grobid_refs sources it reads
REFS_SOURCES = {"crossref": ("crossref",), "documents": ("document",),
                "all": ("crossref", "document")}


@match.command("refs")
@click.option("--source", "source", type=click.Choice(list(REFS_SOURCES)), default="all",
              show_default=True,
              help="Whose references: Crossref works' (grobid_refs source crossref), the "
                   "catalogue's documents' (source document), or both.")
@click.option("--redo", is_flag=True,
              help="Resolve every work again, even those whose citation rows are current.")
@pipeline_options("match-refs")
def refs(source: str, redo: bool, jobs: int, batch_size: int | None, limit: int | None,
         progress: bool | None, silent: bool, fail_fast: bool) -> None:
    """Resolve references into the citation table, from the grobid_refs table.

    Each citing work (a Crossref work, `doi:<doi>`, or a document of the
    catalogue, `uuid:<uuid>`) gets one citation row per reference, by position:
    the cited DOI when exact or strong, the status, score and reasons. A work's
    rows are written in one transaction and replace what it had. The run can
    be stopped and started again: a work whose rows are newer than its
    grobid_refs row (by 10 minutes) is passed over unless --redo. --limit
    counts works resolved. A work with a bad row gets its status (bad-row);
    each reference that is no biblio gets a row with its own (bad-biblio).

    \b
      sandcrawler persist crossref works.jsonl --parse-refs
      sandcrawler match index
      sandcrawler match refs -j 2
      sandcrawler match refs --source documents --redo
    """
    from sandcrawler.app.builders.match import citation_sink
    from sandcrawler.cli.exits import EXIT_FAILED
    from sandcrawler.match.resolve_source import CitingWorksSource
    from sandcrawler.match.resolve_worker import EMPTY_CATALOG_HELP

    services = Services.for_process(load_settings())
    services.check_schema()
    if services.settings.match.update:
        # once, here, before any child opens the index: the children find it current
        services.sync_match_index()
    if _index_size(services) == 0:
        # every reference would be empty-catalog: rows that say nothing and would
        # mark the works as resolved
        click.echo(f"Error: {EMPTY_CATALOG_HELP}", err=True)
        services.close()
        sys.exit(EXIT_FAILED)
    works = CitingWorksSource(services.engine, REFS_SOURCES[source], redo=redo, limit=limit)
    try:
        run_pipeline("match refs", works, "match-refs", {}, citation_sink(services), services,
                     jobs=jobs, batch_size=batch_size, progress=progress, silent=silent,
                     fail_fast=fail_fast)
    finally:
        if not silent and works.current:
            click.echo(f"match refs: {works.current:,} works already current, passed over "
                       "(--redo resolves them again)", err=True)
