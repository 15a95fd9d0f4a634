"""Kafka client configuration, topic names and error mapping (confluent-kafka / librdkafka)."""

from __future__ import annotations

import logging
from typing import Any, NoReturn

from sandcrawler.config import Settings
from sandcrawler.errors import ConfigError, KafkaUnavailable

log = logging.getLogger("sandcrawler.kafka")


def require_brokers(settings: Settings) -> str:
    if not settings.kafka_brokers:
        raise ConfigError(
            "no Kafka brokers configured: set SANDCRAWLER_KAFKA_BROKERS (host:port,...) "
            "or kafka_brokers in the configuration file"
        )
    return settings.kafka_brokers


def consumer_config(settings: Settings, group_id: str, **extra: Any) -> dict[str, Any]:
    return {
        "bootstrap.servers": require_brokers(settings),
        "group.id": group_id,
        "auto.offset.reset": "earliest",
        "session.timeout.ms": 10000,
        # A batch may wait on a slow GROBID or database; leave room before eviction.
        "max.poll.interval.ms": 600000,
        **extra,
    }


def producer_config(settings: Settings, **extra: Any) -> dict[str, Any]:
    return {
        "bootstrap.servers": require_brokers(settings),
        "acks": "all",
        "enable.idempotence": True,
        "compression.type": "zstd",
        "linger.ms": 20,
        **extra,
    }


def crossref_topic(settings: Settings) -> str:
    """The upstream Crossref feed, named by fatcat (not by us)."""
    return settings.topic("api-crossref", prefix="fatcat")


def raise_for_kafka_error(err: Any, context: str) -> NoReturn:
    raise KafkaUnavailable(f"Kafka error while {context}: {err}")
