"""``sandcrawler worker``: long-running Kafka consumers."""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import partial

import click

from sandcrawler.app import workers as factories
from sandcrawler.cli.options import F, parser_option, processing_options, run_pipeline
from sandcrawler.config import Settings, load_settings
from sandcrawler.db.sink import DatabaseSink
from sandcrawler.file_records import check_warc_source
from sandcrawler.kafka import consumer_config, crossref_topic, producer_config
from sandcrawler.pipeline.runner import WorkerFactory
from sandcrawler.pipeline.sinks import KafkaSink, Sink
from sandcrawler.pipeline.sources import KafkaSource


@click.group()
def worker() -> None:
    """Long-running Kafka consumers.

    Offsets are committed only after the batch is durable in the database
    (at-least-once; the writes are idempotent upserts), and as soon as the topic
    is idle. SIGTERM or SIGINT finishes the batch in hand, commits and exits 0.
    While the database or GROBID is down the worker backs off and retries the same
    batch instead of dropping records; a stop requested then exits 130 without
    committing that batch, which the next worker re-reads.
    """


def consumer_options(name: str) -> Callable[[F], F]:
    """``--group``, ``--limit``, ``--progress``: what every consumer takes."""

    def decorate(f: F) -> F:
        for dec in reversed([
            click.option("--group", "group_id",
                         help=f"Consumer group [default: sandcrawler-<env>-{name}]."),
            click.option("--limit", type=click.IntRange(1), default=None,
                         help="Exit after this many records (for testing)."),
            click.option("--progress/--no-progress", default=None,
                         help="Progress bar on stderr."),
        ]):
            f = dec(f)
        return f

    return decorate


def consume(name: str, settings: Settings, topics: str | list[str], group_id: str | None,
            factory: WorkerFactory, sink: Sink, *, batch_size: int | None,
            limit: int | None, progress: bool | None, note: str = "") -> None:
    """Run ``factory``'s worker on ``topics`` until SIGTERM, into ``sink``."""
    stop = threading.Event()
    group_id = group_id or f"sandcrawler-{settings.env}-{name}"
    source = KafkaSource(consumer_config(settings, group_id), topics, stop=stop, limit=limit)
    shown = topics if isinstance(topics, str) else ", ".join(topics)
    click.echo(f"{name}: consuming {shown} as {group_id}{note}", err=True)
    run_pipeline(name, source, factory, sink, settings, batch_size=batch_size,
                 progress=progress, endless=True, stop=stop)


@worker.command("persist-crossref")
@click.option("--parse-refs", is_flag=True, help="Also parse references into grobid_refs.")
@parser_option
@click.option("--topic", help="Topic to consume [default: fatcat-<env>.api-crossref].")
@consumer_options("persist-crossref")
@click.option("--batch-size", type=click.IntRange(1, 100_000), default=None,
              help="Records per batch (one transaction, one offset commit) [default: 100].")
def persist_crossref(parse_refs: bool, parser: str | None, topic: str | None,
                     group_id: str | None, batch_size: int | None, limit: int | None,
                     progress: bool | None) -> None:
    """Consume Crossref works from Kafka into the crossref (and grobid_refs) tables."""
    settings = load_settings()
    consume("persist-crossref", settings, topic or crossref_topic(settings), group_id,
            partial(factories.persist_crossref, settings, parse_refs, parser),
            # Not prepared here: a database that is down at start is waited out like
            # any outage, by the runner's back-off on the first write.
            DatabaseSink.from_settings(settings),
            batch_size=batch_size, limit=limit, progress=progress)


@worker.command("process-pdf")
@click.option("--topic", help="Topic of file records [default: sandcrawler-<env>.pdf-files].")
@click.option("--results-topic",
              help="Topic for results [default: sandcrawler-<env>.pdf-results].")
@consumer_options("process-pdf")
@processing_options
@click.option("--batch-size", type=click.IntRange(1, 10_000), default=8, show_default=True,
              help="Records per batch (one offset commit).")
def process_pdf(topic: str | None, results_topic: str | None, group_id: str | None,
                source: str | None, force: bool, timeout: float, memory_limit: int,
                batch_size: int,
                limit: int | None, progress: bool | None) -> None:
    """Consume file records and process them like `sandcrawler process`.

    A record is a path, or a JSON object with "path", "url" (fetched over
    HTTP), "sha1" (a file already in the store) or "warc_path", "warc_offset"
    and "warc_csize" (a capture in the WARC source, --source); "name" is what
    results report, and "sha1" next to another field is the digest the bytes
    must have (sha1-mismatch otherwise). Results (one JSON
    object per file, keyed by sha1) are published to the results topic; offsets
    are committed only once the broker has the results, and every write to the
    store, the PDF table and the catalogue is keyed by the sha1, so a re-read
    record does no harm.
    """
    settings = load_settings(warc_source=source)
    check_warc_source(settings.warc_source)
    results_topic = results_topic or settings.topic("pdf-results")
    consume("process-pdf", settings, topic or settings.topic("pdf-files"), group_id,
            partial(factories.process_pdf, settings, force, timeout, memory_limit * 2**20),
            KafkaSink(producer_config(settings), results_topic,
                      key=lambda out: out.get("sha1hex") if isinstance(out, dict) else None),
            batch_size=batch_size, limit=limit, progress=progress,
            note=f", results to {results_topic}")


@worker.command("ingest-fileset")
@click.option("--topic",
              help="Topic of ingest requests [default: sandcrawler-<env>.ingest-file-requests].")
@click.option("--results-topic",
              help="Fileset results [default: sandcrawler-<env>.ingest-fileset-results].")
@click.option("--file-results-topic",
              help="Ingest-file results of single-file datasets "
                   "[default: sandcrawler-<env>.ingest-file-results].")
@consumer_options("ingest-fileset")
@click.option("--batch-size", type=click.IntRange(1, 1000), default=1, show_default=True,
              help="Requests per batch (one offset commit); a dataset can take minutes.")
def ingest_fileset(topic: str | None, results_topic: str | None, file_results_topic: str | None,
                   group_id: str | None, batch_size: int, limit: int | None,
                   progress: bool | None) -> None:
    """Consume ingest requests and ingest the dataset ones like `ingest requests`.

    Every fileset result goes to the results topic (keyed by base_url); a
    single-file dataset archived now (success-file) also gives an ingest-file
    result, ingest type dataset-file, on the file results topic. Offsets are
    committed once the broker has the results; a re-read request finds its
    archive and reports success-existing. Requests of other types are skipped.
    """
    from sandcrawler.fileset.worker import result_key, result_messages

    settings = load_settings()
    results_topic = results_topic or settings.topic("ingest-fileset-results")
    file_results_topic = file_results_topic or settings.topic("ingest-file-results")
    consume("ingest-fileset", settings, topic or settings.topic("ingest-file-requests"),
            group_id, partial(factories.ingest_fileset, settings),
            KafkaSink(producer_config(settings), results_topic, key=result_key,
                      route=result_messages(results_topic, file_results_topic)),
            batch_size=batch_size, limit=limit, progress=progress,
            note=f", results to {results_topic} and {file_results_topic}")


@worker.command("persist-ingest-fileset")
@click.option("--topic", "topics", multiple=True,
              help="Topics of results (repeatable) [default: sandcrawler-<env>."
                   "ingest-fileset-results and sandcrawler-<env>.ingest-file-results].")
@consumer_options("persist-ingest-fileset")
@click.option("--batch-size", type=click.IntRange(1, 100_000), default=None,
              help="Records per batch (one transaction, one offset commit) [default: 100].")
def persist_ingest_fileset(topics: tuple[str, ...], group_id: str | None,
                           batch_size: int | None, limit: int | None,
                           progress: bool | None) -> None:
    """Consume ingest results into ingest_file_result and ingest_fileset_platform
    (only results whose platform was identified), like `persist ingest-fileset`."""
    settings = load_settings()
    names = list(topics) or [settings.topic("ingest-fileset-results"),
                             settings.topic("ingest-file-results")]
    consume("persist-ingest-fileset", settings, names, group_id,
            partial(factories.persist_ingest_fileset, settings),
            DatabaseSink.from_settings(settings),
            batch_size=batch_size, limit=limit, progress=progress)
