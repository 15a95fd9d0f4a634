"""Where outcomes go: the sink protocol and stdout JSON lines (Kafka in kafka_io,
the database in db_sink).

Workers hand typed outputs (``work.Output``); a sink is where one becomes bytes
or a row, once: ``work.json_line`` for a line or a message (the record's own
``to_json``), ``db.persist.write_tables`` for rows."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from typing import IO, Protocol, TypeVar

from sandcrawler.core.retry import RetryPolicy
from sandcrawler.core.work import Outcome, Output, json_line
from sandcrawler.records.statuses import PipelineStatus, Status

T = TypeVar("T")
#: (index into the outcomes list, status, message) for outputs the sink refused
Rejection = tuple[int, Status, str]
#: a full producer queue: produce again every half second until flush_timeout
_QUEUE_FULL = RetryPolicy(attempts=None, base=0.5, factor=1.0, cap=0.5)


class Sink(Protocol):
    def write(self, outcomes: list[Outcome]) -> list[Rejection]:
        """Make every ``output`` durable; return the ones refused as record errors."""
        ...

    def close(self) -> None: ...


def encoded(outcomes: list[Outcome], encode: Callable[[Output], T],
            rejected: list[Rejection]) -> Iterator[T]:
    """``encode(output)`` of each outcome with an output, in order. An output JSON
    cannot hold (``encode`` raised TypeError: a bug, not the record's fault) is
    added to ``rejected`` instead, so that its record fails alone, not the whole
    run, nor a worker on every restart."""
    for i, o in enumerate(outcomes):
        if o.output is None:
            continue
        try:
            yield encode(o.output)
        except TypeError as e:
            rejected.append((i, PipelineStatus.INTERNAL_ERROR,
                             f"the result cannot be written: {e}"))


class StdoutSink:
    """JSON lines, one per output, flushed per batch so pipes stream."""

    def __init__(self, stream: IO[bytes] | None = None) -> None:
        self.stream = stream or sys.stdout.buffer

    def write(self, outcomes: list[Outcome]) -> list[Rejection]:
        rejected: list[Rejection] = []
        chunk = b"".join(line + b"\n" for line in encoded(outcomes, json_line, rejected))
        if chunk:
            self.stream.write(chunk)
            self.stream.flush()
        return rejected

    def close(self) -> None:
        with contextlib.suppress(BrokenPipeError):
            self.stream.flush()
