"""Plain Kafka clients for tests and benchmarks: produce records, read a topic back,
create topics, read a group's committed offsets.

``bootstrap`` is ``host:port,...``, or a client configuration (``KafkaBroker.client_config``:
with the login of a SASL broker)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from sandcrawler.core.retry import Backoff, RetryPolicy
from sandcrawler.kafka.client import kafka_error

Bootstrap = str | dict[str, str]
T = TypeVar("T")


def _client(bootstrap: Bootstrap) -> dict[str, str]:
    return {"bootstrap.servers": bootstrap} if isinstance(bootstrap, str) else dict(bootstrap)


#: a full producer queue: serve delivery reports for 0.1 s, then produce again
_QUEUE_FULL = RetryPolicy(attempts=None, base=0.1, factor=1.0, cap=0.1)


def produce(
    bootstrap: Bootstrap,
    topic: str,
    values: Sequence[bytes],
    *,
    keys: Sequence[bytes | None] | None = None,
    timeout: float = 30.0,
) -> list[tuple[int, int]]:
    """Produce ``values`` in order; returns each one's (partition, offset).

    Raises RuntimeError if any message was not delivered within ``timeout``.
    """
    from confluent_kafka import Producer

    producer = Producer(
        {**_client(bootstrap), "acks": "all", "enable.idempotence": True,
         "linger.ms": 5}
    )
    positions: list[tuple[int, int] | None] = [None] * len(values)
    errors: list[str] = []

    def report(index: int) -> Any:
        def on_delivery(err: Any, msg: Any) -> None:
            if err is not None:
                errors.append(f"message {index}: {err}")
            else:
                positions[index] = (msg.partition(), msg.offset())

        return on_delivery

    queue_full = Backoff(_QUEUE_FULL, sleep=producer.poll)
    for i, value in enumerate(values):
        key = keys[i] if keys is not None else None
        while True:
            try:
                producer.produce(topic, value, key=key, on_delivery=report(i))
                break
            except BufferError:
                queue_full.retry()  # no limit, as before: the local mock cluster drains
    remaining = producer.flush(timeout)
    if errors or remaining:
        raise RuntimeError(
            f"producing to {topic}: {remaining} undelivered; errors: {'; '.join(errors[:5])}"
        )
    if any(p is None for p in positions):
        raise RuntimeError(f"producing to {topic}: some messages got no delivery report")
    return [p for p in positions if p is not None]


def consume(bootstrap: Bootstrap, topic: str, count: int, *, timeout: float = 30.0) -> list[bytes]:
    """Read ``count`` messages from the start of every partition of ``topic``.

    Partitions are assigned directly, not through a consumer group, so there is
    no group join to wait for and nothing is committed. Order is kept only
    within a partition.
    """
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    consumer = Consumer(
        {**_client(bootstrap), "group.id": "sandcrawler-testkit-reader",
         "enable.auto.commit": False}
    )
    values: list[bytes] = []
    assigned: set[int] = set()
    deadline = time.monotonic() + timeout
    try:
        while len(values) < count and time.monotonic() < deadline:
            # The topic may not exist yet: a worker's producer creates it with its first
            # write, which can come well after the rows it is checked against (the
            # producer may still be waiting for its idempotence id). Ask again until
            # its partitions are known, and keep the ones already read where they are.
            if not assigned:
                found = set(_partitions(consumer, topic, min(5.0, timeout)))
                if found:
                    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in found])
                    assigned = found
                else:
                    time.sleep(0.2)
                    continue
            for msg in consumer.consume(num_messages=count - len(values), timeout=0.5):
                if msg.error() is None:
                    values.append(msg.value() or b"")
    finally:
        consumer.close()
    if len(values) < count:
        where = "" if assigned else " (the topic never appeared)"
        raise RuntimeError(
            f"consumed {len(values)} of {count} messages from {topic} in {timeout}s{where}"
        )
    return values


def create_topics(bootstrap: Bootstrap, topics: dict[str, int], *, timeout: float = 30.0) -> None:
    """Create each topic with its partition count (one replica) through the admin API;
    one that exists already is left as it is."""
    from confluent_kafka import KafkaError
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient(_client(bootstrap))
    futures = admin.create_topics(
        [NewTopic(name, num_partitions=n, replication_factor=1) for name, n in topics.items()],
        operation_timeout=timeout, request_timeout=timeout)
    for name, fut in futures.items():
        try:
            fut.result(timeout=timeout)
        except Exception as e:
            err = kafka_error(e)
            if err is None or err.code() != KafkaError.TOPIC_ALREADY_EXISTS:
                raise RuntimeError(f"creating topic {name}: {e}") from e


def _partitions(client: Any, topic: str, timeout: float = 10.0) -> list[int]:
    """The partitions of ``topic`` (none while it does not exist)."""
    meta = client.list_topics(topic, timeout=timeout).topics.get(topic)
    return sorted(meta.partitions) if meta is not None and meta.error is None else []


def _settled(ask: Callable[[], T], timeout: float) -> T:
    """``ask()``, asked again while a broker that has just started (or restarted)
    answers "coordinator load in progress", "not coordinator" or "not leader"
    (librdkafka does not flag all of these retriable), until ``timeout``."""
    from confluent_kafka import KafkaException

    deadline = time.monotonic() + timeout
    while True:
        try:
            return ask()
        except KafkaException:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def committed(bootstrap: Bootstrap, group: str, topic: str, *, timeout: float = 30.0
              ) -> dict[int, int]:
    """The group's committed offset per partition (partitions without a commit left out)."""
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer({**_client(bootstrap), "group.id": group,
                  "session.timeout.ms": 6000, "enable.auto.commit": False})

    def ask() -> dict[int, int]:
        parts = _partitions(c, topic)
        got = c.committed([TopicPartition(topic, p) for p in parts], timeout=10)
        return {tp.partition: tp.offset for tp in got if tp.offset >= 0}

    try:
        return _settled(ask, timeout)
    finally:
        c.close()


def end_offsets(bootstrap: Bootstrap, topic: str, *, timeout: float = 30.0) -> dict[int, int]:
    """Each partition's high watermark: how many messages it has held."""
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer({**_client(bootstrap), "group.id": "sandcrawler-testkit-watermarks"})

    def ask() -> dict[int, int]:
        return {p: c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1]
                for p in _partitions(c, topic)}

    try:
        return _settled(ask, timeout)
    finally:
        c.close()
