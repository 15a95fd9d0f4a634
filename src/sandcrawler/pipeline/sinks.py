"""Where outcomes go: the sink protocol and stdout JSON lines (Kafka in kafka_io,
the database in db_sink)."""

from __future__ import annotations

import contextlib
import sys
from typing import IO, Protocol

import orjson

from sandcrawler.retry import RetryPolicy
from sandcrawler.work import Outcome

#: (index into the outcomes list, status, message) for outputs the sink refused
Rejection = tuple[int, str, str]
#: a full producer queue: produce again every half second until flush_timeout
_QUEUE_FULL = RetryPolicy(attempts=None, base=0.5, factor=1.0, cap=0.5)


class Sink(Protocol):
    def write(self, outcomes: list[Outcome]) -> list[Rejection]:
        """Make every ``output`` durable; return the ones refused as record errors."""
        ...

    def close(self) -> None: ...


class StdoutSink:
    """JSON lines, one per output, flushed per batch so pipes stream."""

    def __init__(self, stream: IO[bytes] | None = None) -> None:
        self.stream = stream or sys.stdout.buffer

    def write(self, outcomes: list[Outcome]) -> list[Rejection]:
        chunk = b"".join(
            orjson.dumps(o.output) + b"\n" for o in outcomes if o.output is not None
        )
        if chunk:
            self.stream.write(chunk)
            self.stream.flush()
        return []

    def close(self) -> None:
        with contextlib.suppress(BrokenPipeError):
            self.stream.flush()
