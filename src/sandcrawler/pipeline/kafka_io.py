"""The pipeline's Kafka ends: a consumer-group source and a producing sink
(confluent-kafka / librdkafka), in a module of their own so that commands
without Kafka do not load the client."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import orjson
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

from sandcrawler.kafka import BrokerLog, log, raise_for_kafka_error
from sandcrawler.pipeline.sinks import _QUEUE_FULL, Rejection
from sandcrawler.retry import Backoff
from sandcrawler.work import Item, Outcome


class KafkaSource:
    """A consumer-group member of one topic; offsets are committed only by ack().

    Auto-commit is off: the runner acks a batch after the sink has made it
    durable, so a crash re-delivers (at-least-once) and never skips.
    """

    progress_unit = "rec"
    progress_total = None

    def __init__(
        self,
        consumer_config: dict[str, Any],
        topic: str | list[str],
        *,
        stop: threading.Event,
        poll_timeout: float = 1.0,
        limit: int | None = None,
    ) -> None:
        self.topic = topic
        self.stop = stop
        self.poll_timeout = poll_timeout
        self.limit = limit
        self._count = 0
        logger = consumer_config.get("logger")
        self._log = logger if isinstance(logger, BrokerLog) else BrokerLog(
            str(consumer_config.get("bootstrap.servers")))
        self._consumer = Consumer(
            {
                **consumer_config,
                "enable.auto.commit": False,
                "enable.auto.offset.store": False,
            }
        )
        self._consumer.subscribe([topic] if isinstance(topic, str) else list(topic))

    def progress_position(self) -> int:
        return self._count

    def batches(self, size: int) -> Iterator[list[Item]]:
        while not self.stop.is_set():
            if self.limit is not None and self._count >= self.limit:
                return
            want = size if self.limit is None else min(size, self.limit - self._count)
            msgs = self._consumer.consume(num_messages=want, timeout=self.poll_timeout)
            batch = []
            for msg in msgs:
                err = msg.error()
                if err is not None:
                    if err.fatal():
                        raise_for_kafka_error(err, f"consuming {self.topic}")
                    # Anything else (topic not created yet, broker down, ...) is
                    # informational: librdkafka recovers by itself, so keep polling.
                    if err.code() != KafkaError._PARTITION_EOF:
                        self._log.problem(f"consuming {self.topic}: {err.str()}")
                    continue
                where = f"{msg.topic()}[{msg.partition()}]@{msg.offset()}"
                batch.append(Item(where, msg.value() or b"", (msg.topic(), msg.partition(),
                                                              msg.offset())))
            self._count += len(batch)
            if batch:
                self._log.recovered()
            # An empty batch tells the runner the topic is idle: time to book (and
            # commit) what has been written, rather than wait for more records.
            yield batch

    def ack(self, items: list[Item]) -> None:
        last: dict[tuple[str, int], int] = {}
        for item in items:
            topic, partition, offset = item.token
            last[(topic, partition)] = max(offset, last.get((topic, partition), -1))
        offsets = [TopicPartition(t, p, o + 1) for (t, p), o in last.items()]
        try:
            self._consumer.commit(offsets=offsets, asynchronous=False)
        except KafkaException as e:
            # Typically a rebalance took the partition away; its new owner re-reads
            # from the last commit, which idempotent sinks absorb.
            log.warning("offset commit failed (records will be re-delivered): %s", e)

    def close(self) -> None:
        self._consumer.close()


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
        self.topic = topic
        self.key = key
        #: output -> (topic, message) pairs, when one output makes several messages
        self.route = route or (lambda out: [(topic, out)])
        self.flush_timeout = flush_timeout
        self._producer = Producer(producer_config)

    def write(self, outcomes: list[Outcome]) -> list[Rejection]:
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
