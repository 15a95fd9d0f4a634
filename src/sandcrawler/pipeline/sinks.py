"""Where outcomes go: stdout JSON lines, a Kafka topic (the database sink is db.sink)."""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable
from typing import IO, Any, Protocol

import orjson

from sandcrawler.retry import Backoff, RetryPolicy
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


class KafkaSink:
    """Produces each output as JSON to ``topic``; returns only once the broker has them all."""

    def __init__(
        self,
        producer_config: dict[str, Any],
        topic: str,
        key: Callable[[Any], str | bytes | None] = lambda _: None,
        flush_timeout: float = 60.0,
        route: Callable[[Any], list[tuple[str, Any]]] | None = None,
    ) -> None:
        from confluent_kafka import Producer

        self.topic = topic
        self.key = key
        #: output -> (topic, message) pairs, when one output makes several messages
        self.route = route or (lambda out: [(topic, out)])
        self.flush_timeout = flush_timeout
        self._producer = Producer(producer_config)

    def write(self, outcomes: list[Outcome]) -> list[Rejection]:
        from sandcrawler.kafka import raise_for_kafka_error

        errors: list[Any] = []

        def on_delivery(err: Any, _msg: Any) -> None:
            if err is not None:
                errors.append(err)

        # A full local queue is waited out serving delivery reports (poll), but not
        # forever: a broker that is down must become an error the runner backs off from.
        queue_full = Backoff(_QUEUE_FULL, deadline=time.monotonic() + self.flush_timeout,
                             sleep=self._producer.poll)
        for o in outcomes:
            if o.output is None:
                continue
            for topic, message in self.route(o.output):
                while True:
                    try:
                        self._producer.produce(
                            topic, orjson.dumps(message), key=self.key(message),
                            on_delivery=on_delivery,
                        )
                        break
                    except BufferError:
                        if not queue_full.retry():
                            raise_for_kafka_error("local queue full", f"producing to {topic}")
        remaining = self._producer.flush(self.flush_timeout)
        if errors:
            raise_for_kafka_error(errors[0], f"producing to {self.topic}")
        if remaining:
            raise_for_kafka_error(
                f"{remaining} message(s) not delivered within {self.flush_timeout:g}s",
                f"producing to {self.topic}",
            )
        return []

    def close(self) -> None:
        self._producer.flush(self.flush_timeout)
