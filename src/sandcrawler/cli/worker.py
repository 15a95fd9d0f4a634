"""``sandcrawler worker``: long-running Kafka consumers.

Topics, default batch sizes, message keys and sinks come from the worker
registry (``sandcrawler.app.workers.WORKERS``); a command here only adds the
options that are its own.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, fields
from typing import Any

import click

from sandcrawler.app.builders.refs import persist_crossref_sink
from sandcrawler.app.publishing import publishing
from sandcrawler.app.services import Services
from sandcrawler.app.workers import WORKERS
from sandcrawler.cli.options import (
    F,
    batch_size_option,
    open_services,
    parser_option,
    processing_options,
    run_pipeline,
)
from sandcrawler.fileset.worker import result_messages
from sandcrawler.pipeline.kafka_io import KafkaSink, KafkaSource
from sandcrawler.pipeline.metrics import WorkerMetrics, serve_metrics
from sandcrawler.pipeline.sinks import Sink
from sandcrawler.version import __version__
from sandcrawler.web.file_records import check_warc_source


@click.group()
def worker() -> None:
    """Long-running Kafka consumers.

    Offsets are committed only after the batch is durable in the database
    (at-least-once; the writes are idempotent upserts), and as soon as the topic
    is idle. SIGTERM or SIGINT finishes the batch in hand, commits and exits 0.
    While the database or GROBID is down the worker backs off and retries the same
    batch instead of dropping records, saying so in one line when the outage
    begins and one when it ends; a stop requested then exits 130 without
    committing that batch, which the next worker re-reads. --metrics-port serves
    Prometheus metrics: records in and out by status, batch latency, consumer
    lag per partition, back-off. SIGUSR1 prints every thread's stack on stderr
    (where a worker that does not move is waiting) and changes nothing else.
    """


def _topics_help(name: str, field: str) -> str:
    topics = getattr(WORKERS[name], field)
    return " and ".join(t.full("<env>") for t in topics)


@dataclass(frozen=True, slots=True)
class Consuming:
    """What every consumer command takes (``consumer_options``): where it reads, in
    which group, in what batches, how long, and whether it shows progress and
    serves metrics."""

    topics: tuple[str, ...]
    group_id: str | None
    batch_size: int | None
    limit: int | None
    progress: bool | None
    metrics_port: int | None


_CONSUMING = tuple(f.name for f in fields(Consuming))


def consumer_options(name: str, what: str = "Records per batch (one offset commit)"
                     ) -> Callable[[F], F]:
    """``--topic``, ``--group``, ``--limit``, ``--progress``, ``--batch-size``,
    ``--metrics-port``: what every consumer takes, with defaults from the worker's
    registry entry. The command gets them as one ``consuming`` argument."""
    multiple = len(WORKERS[name].topics_in) > 1

    def decorate(f: F) -> F:
        @functools.wraps(f)
        def command(**kwargs: Any) -> Any:
            consuming = Consuming(**{k: kwargs.pop(k) for k in _CONSUMING})
            return f(consuming, **kwargs)

        decorators: list[Callable[[F], F]] = [
            click.option("--topic", "topics", multiple=True,
                         help=f"Topic to consume{' (repeatable)' if multiple else ''} "
                              f"[default: {_topics_help(name, 'topics_in')}]."),
            click.option("--group", "group_id",
                         help=f"Consumer group [default: sandcrawler-<env>-{name}]."),
            click.option("--limit", type=click.IntRange(1), default=None,
                         help="Exit after this many records (for testing)."),
            click.option("--progress/--no-progress", default=None,
                         help="Progress bar on stderr."),
            batch_size_option(name, what),
            click.option("--metrics-port", type=click.IntRange(0, 65535), default=None,
                         metavar="PORT",
                         help="Serve Prometheus metrics on http://ADDRESS:PORT/metrics, "
                              "ADDRESS being setting worker.metrics_address (127.0.0.1); 0 "
                              "takes any free port [default: setting worker.metrics_port; "
                              "none]."),
        ]
        decorated: F = command
        for dec in reversed(decorators):
            decorated = dec(decorated)
        return decorated

    return decorate


def consume(name: str, services: Services, consuming: Consuming, options: dict[str, Any],
            sink: Sink, *, note: str = "") -> None:
    """Run worker ``name`` on its topics (default: its registry's) until SIGTERM,
    with its metrics served on ``metrics_port`` (default: setting worker.metrics_port)."""
    env = services.settings.env
    names = list(consuming.topics) or [t.full(env) for t in WORKERS[name].topics_in]
    stop = threading.Event()
    group_id = consuming.group_id or f"sandcrawler-{env}-{name}"
    config = services.consumer_config(group_id)
    with worker_metrics(name, group_id, services, consuming.metrics_port) as (metrics, url):
        if metrics is not None:
            config = metrics.consumer_config(config)
            note += f"; metrics on {url}"
        source = KafkaSource(config, names, stop=stop, limit=consuming.limit)
        click.echo(f"{name}: consuming {', '.join(names)} as {group_id}{note}", err=True)
        run_pipeline(name, source, name, options, sink, services,
                     batch_size=consuming.batch_size, progress=consuming.progress,
                     endless=True, stop=stop, observer=metrics)


@contextmanager
def worker_metrics(name: str, group_id: str, services: Services, port: int | None
                   ) -> Iterator[tuple[WorkerMetrics | None, str]]:
    """The worker's metrics and the URL they are served on, when a port is given
    (option, else setting); served from before the first record is read (a port in
    use stops the worker then, in one line) until the worker exits."""
    settings = services.settings.worker
    port = settings.metrics_port if port is None else port
    if port is None:
        yield None, ""
        return
    metrics = WorkerMetrics(name, group=group_id, version=__version__)
    server = serve_metrics(metrics, settings.metrics_address, port)
    try:
        yield metrics, server.url
    finally:
        server.close()


def results_sink(name: str, services: Services, results_topic: str | None,
                 route: Callable[[Any], list[tuple[str, Any]]] | None = None
                 ) -> tuple[KafkaSink, str]:
    """The worker's Kafka sink, in the shapes setting kafka.message_format says, and
    the topics it writes, for the start-up line."""
    out = publishing(name, services, results_topic, route)
    sink = KafkaSink(services.producer_config(), out.topic, key=out.key, route=out.route)
    return sink, " and ".join(out.topics)


@worker.command("persist-crossref")
@click.option("--parse-refs", is_flag=True, help="Also parse references into grobid_refs.")
@parser_option
@consumer_options("persist-crossref", "Records per batch (one transaction, one offset commit)")
def persist_crossref(consuming: Consuming, parse_refs: bool, parser: str | None) -> None:
    """Consume Crossref works from Kafka into the crossref (and grobid_refs) tables."""
    services = open_services()
    # The sink checks the database at its first write: a database that is down at
    # start is waited out like any outage, by the runner's back-off.
    # the works written are added to the match index too (persist_crossref_sink)
    consume("persist-crossref", services, consuming,
            {"parse_refs": parse_refs, "parser": parser}, persist_crossref_sink(services))


@worker.command("match-refs")
@consumer_options("match-refs", "Works per batch (one transaction, one offset commit)")
def match_refs(consuming: Consuming) -> None:
    """Consume grobid_refs rows and resolve their references into the citation
    table, like `match refs` (docs/matching.md, "References").

    One row is one citing work (source crossref: its DOI; source document: its
    UUID); its rows replace what it had, in the batch's transaction, and
    offsets are committed after it. While the match index is empty the worker
    backs off, as from an outage, rather than write rows that say nothing.
    """
    from sandcrawler.app.builders.match import citation_sink

    services = open_services()
    consume("match-refs", services, consuming, {}, citation_sink(services))


@worker.command("process-pdf")
@click.option("--results-topic",
              help=f"Topic for results [default: {_topics_help('process-pdf', 'topics_out')}].")
@consumer_options("process-pdf")
@processing_options
def process_pdf(consuming: Consuming, results_topic: str | None, source: str | None,
                force: bool, timeout: float | None, memory_limit: int | None) -> None:
    """Consume file records and process them like `sandcrawler process`.

    A record is a path, or a JSON object with "path", "url" (fetched over
    HTTP), "sha1" (a file already in the store) or "warc_path", "warc_offset"
    and "warc_csize" (a capture in the WARC source, --source); "name" is what
    results report, and "sha1" next to another field is the digest the bytes
    must have (sha1-mismatch otherwise). Results (one JSON object per record,
    keyed by sha1: a record whose file cannot be read gets its status and error,
    without a key when it names no sha1) are published to the results topic;
    offsets are committed only once the broker has the results, and every write
    to the store, the PDF table and the catalogue is keyed by the sha1, so a
    re-read record does no harm.
    """
    services = open_services(warc_source=source)
    check_warc_source(services.settings.warc.source)
    sink, topics = results_sink("process-pdf", services, results_topic)
    consume("process-pdf", services, consuming,
            {"force": force, "timeout": timeout, "memory_limit_mb": memory_limit},
            sink, note=f", results to {topics}")


@worker.command("ingest-fileset")
@click.option("--results-topic",
              help="Fileset results [default: "
                   f"{WORKERS['ingest-fileset'].topics_out[0].full('<env>')}].")
@click.option("--file-results-topic",
              help="Ingest-file results of single-file datasets "
                   f"[default: {WORKERS['ingest-fileset'].topics_out[1].full('<env>')}].")
@consumer_options("ingest-fileset", "Requests per batch (one offset commit); a dataset can "
                  "take minutes")
def ingest_fileset(consuming: Consuming, results_topic: str | None,
                   file_results_topic: str | None) -> None:
    """Consume ingest requests and ingest the dataset ones like `ingest requests`.

    Every fileset result goes to the results topic (keyed by base_url); a
    single-file dataset archived now (success-file) also gives an ingest-file
    result, ingest type dataset-file, on the file results topic. Offsets are
    committed once the broker has the results; a re-read request finds its
    archive and reports success-existing. Requests of other types are skipped.
    """
    services = open_services()
    env = services.settings.env
    out = WORKERS["ingest-fileset"].topics_out
    results_topic = results_topic or out[0].full(env)
    file_results_topic = file_results_topic or out[1].full(env)
    route = result_messages(results_topic, file_results_topic)
    consume("ingest-fileset", services, consuming, {},
            results_sink("ingest-fileset", services, results_topic, route)[0],
            note=f", results to {results_topic} and {file_results_topic}")


@worker.command("persist-ingest-fileset")
@consumer_options("persist-ingest-fileset",
                  "Records per batch (one transaction, one offset commit)")
def persist_ingest_fileset(consuming: Consuming) -> None:
    """Consume ingest results into ingest_file_result and ingest_fileset_platform
    (only results whose platform was identified), like `persist ingest-fileset`."""
    services = open_services()
    consume("persist-ingest-fileset", services, consuming, {}, services.database_sink())


@worker.command("ingest-file")
@click.option("--results-topic",
              help=f"Topic for results [default: {_topics_help('ingest-file', 'topics_out')}].")
@consumer_options("ingest-file", "Requests per batch (one WARC file, one offset commit)")
def ingest_file(consuming: Consuming, results_topic: str | None) -> None:
    """Consume ingest requests and ingest the pdf, xml and html ones like
    `ingest requests`: crawl to the full text, archive every hop, process it.

    Every result, a miss included, goes to the results topic (keyed by
    base_url). A batch is archived in one WARC file, made visible before any
    result is published; offsets are committed once the broker has the
    results. A re-read request finds its captures and is not fetched again.
    Dataset requests are skipped (the ingest-fileset worker's).
    """
    services = open_services()
    sink, topics = results_sink("ingest-file", services, results_topic)
    consume("ingest-file", services, consuming, {}, sink, note=f", results to {topics}")


@worker.command("persist-ingest-file")
@consumer_options("persist-ingest-file", "Records per batch (one transaction, one offset commit)")
def persist_ingest_file(consuming: Consuming) -> None:
    """Consume file ingest results into ingest_file_result and ingest_request,
    like `persist ingest-file`."""
    services = open_services()
    consume("persist-ingest-file", services, consuming, {}, services.database_sink())
