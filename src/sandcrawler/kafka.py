"""Kafka client configuration and error mapping (confluent-kafka / librdkafka)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

from sandcrawler.config import KafkaSettings
from sandcrawler.errors import ConfigError, KafkaUnavailable

log = logging.getLogger("sandcrawler.kafka")
C = TypeVar("C")


def require_brokers(kafka: KafkaSettings) -> str:
    if not kafka.brokers:
        raise ConfigError(
            "no Kafka brokers configured: set SANDCRAWLER_KAFKA_BROKERS (host:port,...) "
            "or brokers in the [kafka] table of the configuration file"
        )
    return kafka.brokers


class BrokerLog(logging.Logger):
    """librdkafka's log lines and error callbacks of one client.

    A broker that does not answer makes librdkafka report every reconnection
    attempt (hundreds of lines a minute) while it retries by itself. The first
    problem is said once, with what is being done; the rest go to debug level
    until a message gets through (``recovered``), after which a new outage is
    said once again. With ``say=False`` (a command that reports failures in its
    own error line) nothing is said; ``first`` keeps why, for that line."""

    def __init__(self, brokers: str, *, say: bool = True) -> None:
        super().__init__("sandcrawler.kafka.librdkafka")
        self.brokers = brokers
        self.say = say
        self._said = False
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
        if self._said or not self.say:
            log.debug("%s", text)
            return
        self._said = True
        log.warning("Kafka at %s: %s; retrying in the background (further errors at debug "
                    "level, -vv)", self.brokers, text)

    def recovered(self) -> None:
        if self._said:
            log.warning("Kafka at %s answers again", self.brokers)
        self._said = False


def _quiet(brokers: str) -> dict[str, Any]:
    broker_log = BrokerLog(brokers)
    return {"logger": broker_log, "error_cb": broker_log.error_cb}


def consumer_config(kafka: KafkaSettings, group_id: str, **extra: Any) -> dict[str, Any]:
    brokers = require_brokers(kafka)
    return {
        "bootstrap.servers": brokers,
        **_quiet(brokers),
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


def producer_config(kafka: KafkaSettings, **extra: Any) -> dict[str, Any]:
    brokers = require_brokers(kafka)
    return {
        "bootstrap.servers": brokers,
        **_quiet(brokers),
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
