"""``sandcrawler parse-crossref-refs``."""

from __future__ import annotations

import click

from sandcrawler.app.services import Services
from sandcrawler.app.settings import load_settings
from sandcrawler.cli.options import (
    input_argument,
    parser_option,
    pipeline_options,
    run_pipeline,
)
from sandcrawler.pipeline.kafka_io import KafkaSink
from sandcrawler.pipeline.sinks import Sink, StdoutSink
from sandcrawler.pipeline.sources import JsonLinesSource
from sandcrawler.refs.parse_workers import row_key


@click.command("parse-crossref-refs")
@input_argument
@parser_option
@click.option("--grobid-url", help="GROBID base URL [default: setting grobid.url].")
@click.option("--to-kafka", "kafka_topic", metavar="TOPIC",
              help="Produce the rows to this Kafka topic (keyed by DOI) instead of stdout, "
                   "e.g. sandcrawler-prod.grobid-refs; brokers from setting kafka.brokers.")
@pipeline_options("parse-crossref-refs")
def parse_crossref_refs(input_file: str, parser: str | None, grobid_url: str | None,
                        kafka_topic: str | None, jobs: int, batch_size: int | None,
                        limit: int | None,
                        progress: bool | None, silent: bool, fail_fast: bool) -> None:
    """Parse the unstructured references of Crossref works into grobid_refs rows.

    Reads Crossref works as JSON lines (API envelope with `message`, or the bare
    work) and writes one row per work: {source, source_id, source_ts, refs_json}.
    Only references without a DOI and without structured metadata are parsed
    (docs/refs.md); each parsed reference's `id` is its upstream `key`. A work with
    nothing to parse still yields a row with an empty refs_json.
    """
    services = Services.for_process(load_settings(grobid_url=grobid_url))
    services.check_citation_parser(parser)
    sink: Sink = StdoutSink()
    if kafka_topic:
        sink = KafkaSink(services.producer_config(), kafka_topic,
                         key=row_key)
    run_pipeline(
        "parse-crossref-refs",
        JsonLinesSource(input_file, limit=limit),
        "parse-crossref-refs", {"parser": parser},
        sink, services,
        jobs=jobs, batch_size=batch_size, progress=progress, silent=silent, fail_fast=fail_fast,
    )
