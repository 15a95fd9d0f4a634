"""Kafka client configuration and error mapping (confluent-kafka / librdkafka)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

from sandcrawler.config import KafkaSettings
from sandcrawler.core.errors import ConfigError, KafkaUnavailable

log = logging.getLogger("sandcrawler.kafka.client")
C = TypeVar("C")


def require_brokers(kafka: KafkaSettings) -> str:
    if not kafka.brokers:
        raise ConfigError(
            "no Kafka brokers configured: set SANDCRAWLER_KAFKA_BROKERS (host:port,...) "
            "or brokers in the [kafka] table of the configuration file"
        )
    return kafka.brokers


class BrokerLog(logging.Logger):
    """librdkafka's log lines and error callbacks of one client, and what our own
    requests to the broker tell of it: an outage is said once, and its end once.

    A broker that does not answer makes librdkafka report every reconnection
    attempt (hundreds of lines a minute) while it retries by itself. Its reports
    are also late: they are served by the client's poll, so a worker that waited
    in a commit through a broker restart is handed the restart's reports after
    the broker is back. So a report only makes an outage *suspected* (kept, at
    debug level). The outage is said, with librdkafka's first reason, when one of
    our own requests fails (``failed``: a commit that fails or goes unanswered
    for ``COMMIT_SLOW``, a metadata probe); the answer to
    a request sent after the suspicion (``recovered``: a commit, a delivery, a
    metadata probe) clears it, and says its end if it had been said. Records from
    the client's prefetch queue prove nothing (it hands them out while the broker
    is away), nor does the answer to a request sent before the outage. An outage
    the client rides out within one request (a restart during a commit's wait)
    is therefore never said: the worker did not stop.

    With ``say=False`` (a command that reports failures in its own error line)
    nothing is said; ``first`` keeps why, for that line. A worker's consumer and
    producer share one (``Services.broker_log``), so an outage is said once per
    process, not once per client. librdkafka calls it from its own threads, hence
    the lock."""

    def __init__(self, brokers: str, *, say: bool = True) -> None:
        super().__init__("sandcrawler.kafka.client.librdkafka")
        self.brokers = brokers
        self.say = say
        #: librdkafka's first report of the outage suspected or said
        self._reason: str | None = None
        self._said = False
        #: when the outage was first suspected or said (time.monotonic())
        self._since = 0.0
        self._lock = threading.Lock()
        self._first_error: str | None = None
        self._first_warning: str | None = None

    @property
    def first(self) -> str | None:
        """The first problem seen: an error callback's plain reason before a log
        line's (which has a prefix)."""
        return self._first_error or self._first_warning

    def log(self, level: int, msg: object, *args: object, **_kwargs: Any) -> None:
        text = str(msg) % args if args else str(msg)
        if level >= logging.WARNING:
            self._first_warning = self._first_warning or text
            self.problem(text)
        else:
            log.debug("%s", text)

    def error_cb(self, err: Any) -> None:
        text = err.str() if hasattr(err, "str") else str(err)
        self._first_error = self._first_error or text
        self.problem(str(err))

    def problem(self, text: str) -> None:
        """librdkafka reports a problem (perhaps long past): suspect an outage."""
        with self._lock:
            if not self.down:
                self._reason, self._since = text, time.monotonic()
        log.debug("%s", text)

    def failed(self, text: str) -> None:
        """A request of ours failed: the outage is real; said if it was not yet."""
        with self._lock:
            first, self._said = not self._said, True
            if self._reason is None:
                self._reason, self._since = text, time.monotonic()
            reason = self._reason
        if not first or not self.say:
            log.debug("%s", text)
            return
        log.warning("Kafka at %s: %s; retrying in the background (further errors at debug "
                    "level, -vv)", self.brokers, reason)

    @property
    def down(self) -> bool:
        """An outage is suspected or said, and no answer has ended it."""
        return self._said or self._reason is not None

    def recovered(self, asked_at: float) -> None:
        """The broker answered a request sent at ``asked_at`` (time.monotonic())."""
        with self._lock:
            if asked_at < self._since:
                return  # sent before the outage: its answer says nothing of now
            ended, self._said, self._reason = self._said, False, None
        if ended and self.say:
            log.warning("Kafka at %s answers again", self.brokers)


def _quiet(brokers: str, broker_log: BrokerLog | None) -> dict[str, Any]:
    broker_log = broker_log or BrokerLog(brokers)
    return {"logger": broker_log, "error_cb": broker_log.error_cb}


def consumer_config(kafka: KafkaSettings, group_id: str, *,
                    broker_log: BrokerLog | None = None, **extra: Any) -> dict[str, Any]:
    brokers = require_brokers(kafka)
    return {
        "bootstrap.servers": brokers,
        **_quiet(brokers, broker_log),
        "group.id": group_id,
        "auto.offset.reset": "earliest",
        # A member joining or leaving moves only the partitions that must move; the
        # others keep being consumed through the rebalance (no stop-the-world).
        "partition.assignment.strategy": "cooperative-sticky",
        # How long a SIGKILLed member keeps its partitions before the group
        # coordinator gives them to the others.
        "session.timeout.ms": 10000,
        # A batch may wait on a slow GROBID or database; leave room before eviction.
        "max.poll.interval.ms": 600000,
        **kafka.options,
        **extra,
    }


def producer_config(kafka: KafkaSettings, *, broker_log: BrokerLog | None = None,
                    **extra: Any) -> dict[str, Any]:
    brokers = require_brokers(kafka)
    return {
        "bootstrap.servers": brokers,
        **_quiet(brokers, broker_log),
        "acks": "all",
        "enable.idempotence": True,
        "compression.type": "zstd",
        "linger.ms": 20,
        **kafka.options,
        **extra,
    }


def topic_name(env: str, name: str, prefix: str = "sandcrawler") -> str:
    """``sandcrawler-<env>.<name>``; upstream feeds have their own prefix (fatcat)."""
    return f"{prefix}-{env}.{name}"


def raise_for_kafka_error(err: Any, context: str) -> NoReturn:
    raise KafkaUnavailable(f"Kafka error while {context}: {err}")


def kafka_error(e: BaseException) -> Any | None:
    """The ``KafkaError`` a ``KafkaException`` carries (None when it carries none)."""
    err = e.args[0] if e.args else None
    return err if hasattr(err, "code") and hasattr(err, "str") else None


def kafka_reason(e: BaseException) -> str:
    """librdkafka's own words for a ``KafkaException``, without its repr around them."""
    err = kafka_error(e)
    return str(err.str()) if err is not None else str(e)


def new_client(kind: Callable[[dict[str, Any]], C], config: dict[str, Any]) -> C:
    """A librdkafka client (Consumer, Producer, AdminClient) of ``config``; a setting
    it refuses (a misspelt property in kafka.options, a bad value) is a ConfigError
    naming it, not a traceback."""
    from confluent_kafka import KafkaException

    try:
        return kind(config)
    except KafkaException as e:
        raise ConfigError(f"invalid Kafka client settings (kafka.options, kafka.brokers): "
                          f"{kafka_reason(e)}") from None
