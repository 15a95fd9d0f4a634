"""What flows through the pipeline: items in, outcomes out, and the worker contract."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, NamedTuple, Protocol, TypeVar

import orjson
from pydantic import BaseModel, ValidationError

from sandcrawler.core.errors import RecordError
from sandcrawler.core.jsontext import dumps_output
from sandcrawler.records.statuses import PipelineStatus, Status

Kind = Literal["ok", "skip", "error"]


class JsonResult(Protocol):
    """An output written as JSON (stdout, Kafka): a record that knows its own dump
    rules (which keys a line leaves out, in which order). The sink calls
    ``to_json`` once, as it writes the line; nothing before it serialises."""

    def to_json(self) -> dict[str, Any]: ...


class TableRow(Protocol):
    """One row for the database sink (``db.persist.write_tables``): the table it
    is upserted into, and its column values, made as the row is written."""

    table: ClassVar[str]

    def columns(self) -> dict[str, Any]: ...


@dataclass(frozen=True, slots=True)
class Rows:
    """An output for the database sink: one record's rows (several tables' at
    times: a work and its parsed references), written in the batch's transaction."""

    rows: tuple[TableRow, ...]


class PdfCells(NamedTuple):
    """An output for the PDF table's sink (``PdfTable.write``): cells by family and
    qualifier, for the row of the file ``sha1hex``. The cells are the table's own
    JSON-shaped values (``storage.pdftable`` encodes each by its column's type)."""

    sha1hex: str
    cells: Mapping[str, Mapping[str, Any]]


#: what a worker hands to the sink, typed until the sink writes it
Output = JsonResult | Rows | PdfCells


@dataclass(slots=True)
class Outcome:
    """The result of one record. ``output`` goes to the sink; ``error`` to stderr."""

    where: str
    status: Status
    kind: Kind = "ok"
    output: Output | None = None
    error: str | None = None

    @classmethod
    def failed(cls, where: str, exc: RecordError) -> Outcome:
        return cls(where=where, status=exc.status, kind="error", error=str(exc))


@dataclass(slots=True)
class Item:
    """One input record: where it came from (for messages and acks) and its raw bytes."""

    where: str
    data: bytes
    token: Any = None  # source-specific position used by ack() (e.g. Kafka partition/offset)
    #: what the source already knows about this record (a damaged zip member, a CDX
    #: line that names no file): the worker reports it instead of processing the bytes
    outcome: Outcome | None = None


class Worker(Protocol):
    def process_batch(self, items: list[Item]) -> list[Outcome]:
        """One outcome per item, in order. Raise InfrastructureError when a service is down."""
        ...

    def close(self) -> None: ...


class RecordWorker:
    """Base for workers that handle records one at a time; RecordError becomes a status."""

    def process(self, item: Item) -> Outcome:
        raise NotImplementedError

    def process_batch(self, items: list[Item]) -> list[Outcome]:
        outcomes = []
        for item in items:
            try:
                outcomes.append(self.process(item))
            except RecordError as e:
                outcomes.append(Outcome.failed(item.where, e))
        return outcomes

    def close(self) -> None:
        pass


def decode_json(data: bytes) -> Any:
    """Parse one JSON line, with a specific status for bad bytes and bad JSON."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as e:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as ue:
            raise RecordError(
                f"invalid UTF-8 at byte {ue.start}: {data[ue.start : ue.start + 4]!r}",
                status=PipelineStatus.BAD_UTF8,
            ) from None
        raise RecordError(f"not JSON: {e}", status=PipelineStatus.BAD_JSON) from None


M = TypeVar("M", bound=BaseModel)


def decode_record(data: bytes, model: type[M], what: str,
                  status: Status) -> tuple[dict[str, Any], M]:
    """One JSON object, and it validated as ``model``; a RecordError with ``status``
    naming the first problems (``what``: "an ingest request", ...) otherwise."""
    obj = decode_json(data)
    if not isinstance(obj, dict):
        raise RecordError(f"{what} is a JSON object", status=status)
    try:
        return obj, model.model_validate(obj)
    except ValidationError as e:
        problems = "; ".join(f"{'.'.join(str(p) for p in err['loc']) or 'record'}: "
                             f"{err['msg']}" for err in e.errors()[:3])
        raise RecordError(f"not {what}: {problems}", status=status) from None


def json_line(output: Output) -> bytes:
    """An output as one JSON text, by its own dump rules. TypeError for an output
    that is not JSON's to write (rows for the database) or that JSON cannot hold."""
    if isinstance(output, Rows | PdfCells):
        raise TypeError(f"{type(output).__name__} is written to a database, not as JSON")
    try:
        return dumps_output(output.to_json())
    except TypeError as e:
        raise TypeError(f"not JSON: {e}") from e


def in_batches(items: Iterator[Item], size: int) -> Iterator[list[Item]]:
    """Lists of up to ``size`` items, the last one possibly shorter (every
    source's ``batches``)."""
    batch: list[Item] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch
