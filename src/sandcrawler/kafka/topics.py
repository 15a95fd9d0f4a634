"""The topic registry: every Kafka topic the workers read or write, with the
partitions and broker settings it should have.

``TOPICS`` names the workers' topics (``app.workers``), is what ``sandcrawler
kafka topics`` compares with the cluster, and what the table in
docs/operations.md is checked against. A topic is ``<prefix>-<env>.<name>``:
ours (``sandcrawler``) or an upstream feed's (``fatcat``). Each entry's ``basis``
says where its numbers come from; why no topic sets ``compression.type``:
docs/operations.md, "The topic registry".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from sandcrawler.kafka.client import topic_name

#: the original system's retention of ingest requests: a quarter of a 365.25-day year
THREE_MONTHS_MS = 7_889_400_000
_DAY_MS = 86_400_000
_MONTH_MS = THREE_MONTHS_MS // 3


def delete_after(ms: int) -> dict[str, str]:
    """Broker settings of a topic whose messages are deleted ``ms`` after they
    were written (-1: never)."""
    return {"cleanup.policy": "delete", "retention.ms": str(ms)}


@dataclass(frozen=True, slots=True)
class TopicSpec:
    """One topic of ``<prefix>-<env>.<name>`` and what it should look like."""

    name: str
    partitions: int
    #: topic-level broker settings set at creation and compared afterwards
    config: Mapping[str, str] = field(hash=False)
    #: what a message's key is ("" when it has none)
    key: str
    #: what a message is
    carries: str
    #: where the partition count and settings come from
    basis: str
    prefix: str = "sandcrawler"
    #: another system's topic (fatcat's): we read it; its settings are its owner's
    upstream: bool = False

    def full(self, env: str) -> str:
        return topic_name(env, self.name, self.prefix)

    def retention(self) -> str:
        """How long messages stay, as the docs and ``kafka topics`` say it."""
        if self.upstream:
            return f"{self.prefix}'s"
        if self.config.get("cleanup.policy") == "compact":
            return "compacted"
        ms = int(self.config.get("retention.ms", "-1"))
        if ms < 0:
            return "indefinite"
        for unit, size in (("months", _MONTH_MS), ("days", _DAY_MS)):
            if ms % size == 0:
                return f"{ms // size} {unit}"
        return f"{ms} ms"


API_CROSSREF = TopicSpec(
    "api-crossref", 8, {}, key="lower-case DOI", carries="Crossref API works, new and updated",
    basis="the original's list (8); fatcat's topic", prefix="fatcat", upstream=True)
PDF_FILES = TopicSpec(
    "pdf-files", 24, delete_after(THREE_MONTHS_MS), key="sha1hex",
    carries="file records to process",
    basis="the original's PDF queue (ungrobided-pg: 24); retention as its request queue")
PDF_RESULTS = TopicSpec(
    "pdf-results", 12, delete_after(30 * _DAY_MS), key="sha1hex",
    carries="processing results",
    # The original compacted its GROBID output by sha1; a compacted topic refuses
    # messages without a key, and a result whose file has no sha1 has none.
    basis="the original's GROBID output (12); 30 days ours: it compacted by sha1, which "
          "refuses a result without one")
INGEST_FILE_REQUESTS = TopicSpec(
    "ingest-file-requests", 24, delete_after(THREE_MONTHS_MS), key="base_url",
    carries="ingest requests of every type",
    basis="the original's list (24, 3 months)")
INGEST_FILESET_RESULTS = TopicSpec(
    "ingest-fileset-results", 6, delete_after(-1), key="base_url",
    carries="fileset ingest results",
    basis="the fileset seed (6x, no retention limit)")
INGEST_FILE_RESULTS = TopicSpec(
    "ingest-file-results", 6, delete_after(-1), key="base_url",
    carries="file ingest results",
    basis="the original's list (6, no compaction)")
GROBID_REFS = TopicSpec(
    "grobid-refs", 8, delete_after(30 * _DAY_MS), key="lower-case DOI",
    carries="grobid_refs rows (a Crossref work's parsed references)",
    # one row per work of api-crossref, keyed alike: the same partitions keep a
    # work's versions in order; the table keeps the rows, the topic only feeds workers
    basis="ours: partitions as fatcat's api-crossref, whose works the rows come from; "
          "30 days, as the rows are in grobid_refs")

# The original system's own topics, written in its message shapes (kafka.message_format
# "original", docs/original-messages.md) for its consumers. Compacted by sha1 as it
# had them: every message there has the file's sha1 for its key.
GROBID_OUTPUT = TopicSpec(
    "grobid-output-pg", 12, {"cleanup.policy": "compact"}, key="sha1hex",
    carries="GROBID output in the original's shape (TEI-XML as a field)",
    basis="the original's list (12, compacted by sha1hex)")
PDF_TEXT = TopicSpec(
    "pdf-text", 12, {"cleanup.policy": "compact"}, key="sha1hex",
    carries="PDF metadata and text in the original's shape",
    basis="the original's list (12, compacted by sha1hex)")

TOPICS: dict[str, TopicSpec] = {t.name: t for t in (
    API_CROSSREF, PDF_FILES, PDF_RESULTS, INGEST_FILE_REQUESTS, INGEST_FILESET_RESULTS,
    INGEST_FILE_RESULTS, GROBID_REFS, GROBID_OUTPUT, PDF_TEXT,
)}
