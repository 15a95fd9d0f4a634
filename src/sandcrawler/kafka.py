"""Kafka client configuration and error mapping (confluent-kafka / librdkafka)."""

from __future__ import annotations

import logging
from typing import Any, NoReturn

from sandcrawler.config import KafkaSettings
from sandcrawler.errors import ConfigError, KafkaUnavailable

log = logging.getLogger("sandcrawler.kafka")


def require_brokers(kafka: KafkaSettings) -> str:
    if not kafka.brokers:
        raise ConfigError(
            "no Kafka brokers configured: set SANDCRAWLER_KAFKA_BROKERS (host:port,...) "
            "or brokers in the [kafka] table of the configuration file"
        )
    return kafka.brokers


def consumer_config(kafka: KafkaSettings, group_id: str, **extra: Any) -> dict[str, Any]:
    return {
        "bootstrap.servers": require_brokers(kafka),
        "group.id": group_id,
        "auto.offset.reset": "earliest",
        "session.timeout.ms": 10000,
        # A batch may wait on a slow GROBID or database; leave room before eviction.
        "max.poll.interval.ms": 600000,
        **kafka.options,
        **extra,
    }


def producer_config(kafka: KafkaSettings, **extra: Any) -> dict[str, Any]:
    return {
        "bootstrap.servers": require_brokers(kafka),
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
