"""What a publishing worker's Kafka sink writes, by ``kafka.message_format``: our
results to the worker's registry topic, keyed by its registry key; or the original
system's messages to its registry's ``topics_original`` (``kafka.original``), the
file facts read from the PDF table (docs/original-messages.md)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sandcrawler.app.services import Services
from sandcrawler.app.workers import WORKERS, message_key
from sandcrawler.core.errors import ConfigError
from sandcrawler.kafka.original import (
    Messages,
    OriginalMessages,
    OriginalTopics,
    table_facts,
)
from sandcrawler.kafka.original import message_key as original_key
from sandcrawler.kafka.topics import GROBID_OUTPUT, PDF_TEXT
from sandcrawler.records.ingest import FileIngestResult
from sandcrawler.records.pdf import ProcessResult

Route = Callable[[Any], list[tuple[str, Any]]]


@dataclass(frozen=True, slots=True)
class Publishing:
    """The sink's topic (where one message per output goes, and what the start-up
    line names), its message key, and its route when an output makes other messages."""

    topic: str
    key: Callable[[Any], object]
    route: Route | None = None
    #: every topic it writes to, for the start-up line
    topics: tuple[str, ...] = ()


def publishing(name: str, services: Services, results_topic: str | None = None,
               route: Route | None = None) -> Publishing:
    """How worker ``name`` publishes its outputs: ``results_topic`` replaces its
    results topic (``--results-topic``), ``route`` is its own routing of our results."""
    spec = WORKERS[name]
    env = services.settings.env
    if services.settings.kafka.message_format == "sandcrawler" or not spec.topics_original:
        topic = results_topic or spec.topics_out[0].full(env)
        return Publishing(topic, message_key(name), route, (topic,))
    # the original's results topic (ingest-file-results) when the worker has one;
    # every worker writes the original's GROBID output and PDF text
    results_spec = next((t for t in spec.topics_original if t not in (GROBID_OUTPUT, PDF_TEXT)),
                        None)
    grobid, pdf_text = GROBID_OUTPUT.full(env), PDF_TEXT.full(env)
    if results_spec is None and results_topic is not None:
        raise ConfigError(f"--results-topic: with kafka.message_format original, worker {name} "
                          f"writes the original system's {grobid} and {pdf_text}, not one "
                          "results topic")
    results = results_topic or (results_spec.full(env) if results_spec else None)
    messages = OriginalMessages(OriginalTopics(results or "", grobid, pdf_text),
                                table_facts(services.pdftable))

    def original(output: FileIngestResult | ProcessResult) -> Messages:
        if isinstance(output, FileIngestResult):
            return messages.ingest(output)
        return messages.processed(output)

    topics = (results, grobid, pdf_text) if results else (grobid, pdf_text)
    return Publishing(topics[0], original_key, original, topics)
