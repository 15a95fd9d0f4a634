"""One exception tree for the whole project.

    SandcrawlerError
    ├── ConfigError                 bad or missing configuration
    ├── SchemaError                 a table or resource declaration contradicts itself
    ├── RecordError                 one record is bad: becomes a status, the run goes on
    │   ├── CitationParseError      the parser failed for this record's references
    │   │   └── GrobidRecordError   GROBID answered 4xx/5xx or unparsable XML for one request
    │   ├── InvalidName             a blob key, UUID, sha1 or resource kind is not acceptable
    │   ├── NotFound                no such blob, resource, document or row
    │   └── CorruptData             stored bytes do not decode (bad gzip, bad JSON cell)
    └── InfrastructureError         a service is down: stop, or back off and retry
        ├── DatabaseUnavailable
        ├── GrobidUnavailable       unreachable, or still busy (503) after retries
        ├── KafkaUnavailable
        ├── SearchUnavailable       the match index's search engine: down, timing out, a
        │                           shard without a live replica (never a no-match)
        └── StoreUnavailable        the object store cannot be reached or refuses access

A ``RecordError``'s ``status`` is a member of one of the enums of
``sandcrawler.records.statuses``. Third-party exceptions are mapped onto this
tree at the boundary where they are raised (``raise ... from ...``) so callers
only ever catch these.
"""

from __future__ import annotations

from sandcrawler.records.statuses import ParserStatus, PipelineStatus, Status, StoreStatus


class SandcrawlerError(Exception):
    """Base of every error this package raises on purpose."""


class ConfigError(SandcrawlerError):
    """The configuration is invalid or something required is not configured."""


class RecordError(SandcrawlerError):
    """One input record cannot be processed; carries the status to report for it."""

    status: Status = PipelineStatus.ERROR

    def __init__(self, message: str, status: Status | None = None) -> None:
        super().__init__(message)
        if status is not None:
            self.status = status


class CitationParseError(RecordError):
    status = ParserStatus.PARSE_ERROR


class GrobidRecordError(CitationParseError):
    status = ParserStatus.GROBID_ERROR


class SchemaError(SandcrawlerError):
    """A declared schema breaks its own rules (e.g. a column name used by two families)."""


class InvalidName(RecordError):
    status = StoreStatus.BAD_NAME


class NotFound(RecordError):
    status = StoreStatus.NOT_FOUND


class CorruptData(RecordError):
    status = StoreStatus.CORRUPT_DATA


class InfrastructureError(SandcrawlerError):
    """A service the run depends on is not usable; no record-level status applies.

    ``service`` names which one in a word, the same in log lines and metric labels,
    so an operator can match them."""

    service: str = "service"


class DatabaseUnavailable(InfrastructureError):
    service = "database"


class GrobidUnavailable(InfrastructureError):
    service = "grobid"


class KafkaUnavailable(InfrastructureError):
    service = "kafka"


class SearchUnavailable(InfrastructureError):
    service = "search"


class StoreUnavailable(InfrastructureError):
    service = "store"
