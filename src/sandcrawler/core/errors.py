"""One exception tree for the whole project.

``SandcrawlerError`` has four branches: ``ConfigError``, ``SchemaError``,
``RecordError`` (one record is bad: it becomes a status, a member of an enum of
``sandcrawler.records.statuses``, and the run goes on) and ``InfrastructureError``
(a service is down: stop, or back off and retry). Third-party exceptions are
mapped onto this tree where they are raised (``raise ... from ...``), so callers
only ever catch these. The tree is drawn in docs/architecture.md, "Errors".
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
