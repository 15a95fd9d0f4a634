"""librdkafka's mock Kafka cluster in a child process, for tests and benchmarks.

No broker can be installed on the development machines, but the librdkafka
bundled with ``confluent-kafka`` contains a mock cluster that speaks the real
Kafka protocol on loopback: any client created with ``test.mock.num.brokers``
starts one, and other processes can connect to it for as long as the creating
process lives. ``MockKafka`` runs that creating process (``python -m
sandcrawler_testkit.kafka_mock``), which prints the bootstrap address on stdout
and lives until its stdin closes or it is killed.

Topics auto-create on first produce, with 4 partitions (the mock's default);
``AdminClient.create_topics`` times out against the mock (it reports no
controller), so the partition count cannot be chosen. Consumer groups and
committed offsets work. The mock's group coordinator is slow to rebalance: a
first join waits 3 s, and after a member leaves or dies the next join waits
about ``session.timeout.ms`` of the group (minus 1 s), so keep group joins in
tests few and the session timeout short (around 6000 ms) where you can.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import re
import select
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

from sandcrawler.retry import Backoff, RetryPolicy
from sandcrawler_testkit import _cli

_BOOTSTRAP = re.compile(r"bootstrap\.servers=(\S+)")
#: a full producer queue: serve delivery reports for 0.1 s, then produce again
_QUEUE_FULL = RetryPolicy(attempts=None, base=0.1, factor=1.0, cap=0.1)


class MockKafka:
    """Start with ``start()`` (or as a context manager); ``bootstrap`` is ``host:port,...``."""

    def __init__(self, brokers: int = 1, startup_timeout: float = 20.0) -> None:
        self.brokers = brokers
        self.startup_timeout = startup_timeout
        self.bootstrap = ""
        self._proc: subprocess.Popen[bytes] | None = None

    def start(self) -> str:
        proc = subprocess.Popen(
            [sys.executable, "-m", "sandcrawler_testkit.kafka_mock", str(self.brokers)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        )
        self._proc = proc
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], self.startup_timeout)
        line = proc.stdout.readline().decode().strip() if ready else ""
        if not line:
            self.stop()
            raise RuntimeError(
                f"mock Kafka cluster did not report its address within {self.startup_timeout}s"
            )
        self.bootstrap = line
        return line

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.stdin is not None:
            proc.stdin.close()  # the child's signal to go
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
        if proc.stdout is not None:
            proc.stdout.close()

    def __enter__(self) -> MockKafka:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def produce(
    bootstrap: str,
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
        {"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True,
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


def consume(bootstrap: str, topic: str, count: int, *, timeout: float = 30.0) -> list[bytes]:
    """Read ``count`` messages from the start of every partition of ``topic``.

    Partitions are assigned directly, not through a consumer group, so there is
    no group join to wait for and nothing is committed. Order is kept only
    within a partition.
    """
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "sandcrawler-kafka-mock-reader",
         "enable.auto.commit": False}
    )
    values: list[bytes] = []
    try:
        partitions = consumer.list_topics(topic, timeout=timeout).topics[topic].partitions
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])
        deadline = time.monotonic() + timeout
        while len(values) < count and time.monotonic() < deadline:
            for msg in consumer.consume(num_messages=count - len(values), timeout=0.5):
                if msg.error() is None:
                    values.append(msg.value() or b"")
    finally:
        consumer.close()
    if len(values) < count:
        raise RuntimeError(f"consumed {len(values)} of {count} messages from {topic} in {timeout}s")
    return values


def _serve(brokers: int) -> None:
    """The child: create the mock cluster, print its address, live until stdin closes."""
    from confluent_kafka import Producer

    found: list[str] = []

    class _Catch(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if not found:
                m = _BOOTSTRAP.search(record.getMessage())
                if m:
                    found.append(m.group(1))

    logger = logging.getLogger("sandcrawler.kafka_mock")
    logger.addHandler(_Catch())
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    producer = Producer({"test.mock.num.brokers": brokers, "debug": "mock", "logger": logger})
    deadline = time.monotonic() + 15
    while not found and time.monotonic() < deadline:
        producer.poll(0.1)
    if not found:
        sys.exit("mock Kafka cluster did not log its bootstrap.servers")
    print(found[0], flush=True)

    closed = threading.Event()

    def wait_for_eof() -> None:
        sys.stdin.buffer.read()
        closed.set()

    threading.Thread(target=wait_for_eof, daemon=True).start()
    # Keep serving the client's queue: with a Python logger, librdkafka's debug
    # lines wait there until polled and would otherwise pile up.
    while not closed.is_set():
        producer.poll(0.2)


def main(argv: list[str] | None = None) -> None:
    """``python -m sandcrawler_testkit.kafka_mock [BROKERS]``: what ``MockKafka`` runs."""
    parser = _cli.parser(
        "sandcrawler_testkit.kafka_mock",
        "Start librdkafka's mock Kafka cluster (on loopback ports it picks itself) and\n"
        "print its bootstrap.servers; it lives until stdin closes (Ctrl-D) or the\n"
        "process is killed.")
    parser.add_argument("brokers", nargs="?", type=_positive, default=1,
                        help="number of brokers (default: 1)")
    args = parser.parse_args(argv)
    with contextlib.suppress(KeyboardInterrupt):
        _serve(args.brokers)


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"not a positive number: {text!r}")
    return int(text)


if __name__ == "__main__":
    main()
