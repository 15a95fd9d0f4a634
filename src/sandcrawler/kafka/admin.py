"""The topic registry (``kafka.topics.TOPICS``) against a cluster: which topics
are as they should be, which are missing, which differ; and the missing ones
created, through confluent-kafka's admin API.

An existing topic is never altered: a difference is reported
(``partitions-mismatch``, ``config-mismatch``) for an operator to decide.
Upstream topics are checked for existence only. A cluster that does not answer
is ``KafkaUnavailable`` (docs/operations.md, "Topics against a cluster").
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic, ResourceType

from sandcrawler.config import KafkaSettings
from sandcrawler.core.errors import ConfigError, KafkaUnavailable
from sandcrawler.kafka.client import (
    BrokerLog,
    kafka_error,
    kafka_reason,
    new_client,
    require_brokers,
)
from sandcrawler.kafka.topics import TOPICS, TopicSpec

#: replicas of a created topic when not given: one per broker, at most this many
DEFAULT_MAX_REPLICAS = 3


class TopicState(StrEnum):
    OK = "ok"
    CREATED = "created"
    MISSING = "missing"
    PARTITIONS_MISMATCH = "partitions-mismatch"
    CONFIG_MISMATCH = "config-mismatch"
    CREATE_FAILED = "create-failed"


#: states that leave nothing to do
SETTLED = frozenset({TopicState.OK, TopicState.CREATED})


@dataclass(frozen=True, slots=True)
class TopicRow:
    """One registry entry against the cluster."""

    spec: TopicSpec
    topic: str
    state: TopicState
    #: partitions the topic has (None: it does not exist)
    partitions: int | None
    #: the cluster's values of the settings the registry names
    config: Mapping[str, str] = field(default_factory=dict, hash=False)
    #: what differs or failed, and what to do, one sentence each
    problems: tuple[str, ...] = ()

    @property
    def settled(self) -> bool:
        return self.state in SETTLED

    def as_json(self) -> dict[str, Any]:
        return {
            "topic": self.topic, "state": str(self.state), "partitions": self.partitions,
            "expected_partitions": self.spec.partitions, "config": dict(self.config),
            "expected_config": dict(self.spec.config), "retention": self.spec.retention(),
            "key": self.spec.key or None, "upstream": self.spec.upstream,
            "problems": list(self.problems),
        }


def compare(spec: TopicSpec, topic: str, partitions: int | None,
            config: Mapping[str, str]) -> TopicRow:
    """The row of ``spec`` for a topic with ``partitions`` (None: absent) and
    ``config`` (the cluster's values of the settings ``spec`` names)."""
    if partitions is None:
        todo = (f"{spec.prefix}'s topic: `--create --include-upstream` creates it (dev and "
                "test clusters)" if spec.upstream else "`--create` creates it")
        return TopicRow(spec, topic, TopicState.MISSING, None, problems=(todo,))
    if spec.upstream:
        return TopicRow(spec, topic, TopicState.OK, partitions, config)
    problems = []
    if partitions != spec.partitions:
        problems.append(f"{partitions} partitions, the registry says {spec.partitions}")
    problems += [f"{name}={config.get(name, '(unset)')}, the registry says {want}"
                 for name, want in spec.config.items() if config.get(name) != want]
    state = (TopicState.PARTITIONS_MISMATCH if partitions != spec.partitions
             else TopicState.CONFIG_MISMATCH if problems else TopicState.OK)
    return TopicRow(spec, topic, state, partitions, config, tuple(problems))


@dataclass(frozen=True, slots=True)
class Cluster:
    brokers: int
    #: topic name -> its partition count
    partitions: dict[str, int]


class TopicAdmin:
    """The admin API of the configured cluster (``kafka.options`` passed on: TLS,
    SASL), each request bounded by ``timeout`` seconds."""

    def __init__(self, kafka: KafkaSettings, timeout: float = 10.0) -> None:
        self.brokers = require_brokers(kafka)
        self.timeout = timeout
        self._log = BrokerLog(self.brokers, say=False)
        self._client = new_client(AdminClient, {
            "bootstrap.servers": self.brokers,
            "logger": self._log,
            "error_cb": self._log.error_cb,
            # An admin client is a producer handle, whose metadata requests for a
            # named topic would have the broker create it: never here.
            "allow.auto.create.topics": False,
            **kafka.options,
        })

    @contextmanager
    def _answers(self, what: str) -> Iterator[None]:
        try:
            yield
        except (KafkaException, TimeoutError) as e:
            self._client.poll(0)  # serve the queued log lines: the first says why
            reason = kafka_reason(e) if isinstance(e, KafkaException) else "no answer"
            seen = f" ({self._log.first})" if self._log.first else ""
            raise KafkaUnavailable(f"Kafka at {self.brokers}: {what}: {reason}{seen} "
                                   f"(timeout {self.timeout:g} s)") from e

    def _result(self, future: Any) -> Any:
        return future.result(timeout=self.timeout)

    def cluster(self) -> Cluster:
        # Every topic, not the registry's by name: a request naming a topic is
        # what broker-side auto-creation answers to.
        with self._answers("listing topics"):
            meta = self._client.list_topics(timeout=self.timeout)
        return Cluster(len(meta.brokers), {name: len(t.partitions)
                                           for name, t in meta.topics.items()})

    def configs(self, topics: Iterable[str]) -> dict[str, dict[str, str]]:
        """Each topic's effective settings (topics the broker does not know left out)."""
        resources = [ConfigResource(ResourceType.TOPIC, name) for name in topics]
        if not resources:
            return {}
        found = {}
        with self._answers("reading topic settings"):
            futures = self._client.describe_configs(resources, request_timeout=self.timeout)
            for res, future in futures.items():
                try:
                    entries = self._result(future)
                except KafkaException as e:
                    # listed a moment ago, unknown now: deleted, or not yet known to
                    # this broker (just created): as good as missing
                    if (err := kafka_error(e)) and err.code() == KafkaError.UNKNOWN_TOPIC_OR_PART:
                        continue
                    raise
                found[res.name] = {name: entry.value for name, entry in entries.items()}
        return found

    def create(self, topics: Mapping[str, TopicSpec],
               replication_factor: int) -> dict[str, KafkaError | None]:
        """Create each topic (full name -> spec); per topic, None or the broker's refusal."""
        new = [NewTopic(name, num_partitions=spec.partitions,
                        replication_factor=replication_factor, config=dict(spec.config))
               for name, spec in topics.items()]
        refused: dict[str, KafkaError | None] = {}
        with self._answers("creating topics"):
            futures = self._client.create_topics(new, operation_timeout=self.timeout,
                                                 request_timeout=self.timeout)
            for name, future in futures.items():
                try:
                    self._result(future)
                    refused[name] = None
                except KafkaException as e:
                    err = kafka_error(e)
                    if err is None or _is_transport(err):
                        raise  # no answer, not a refusal
                    refused[name] = err
        return refused

    def wait_visible(self, topics: Iterable[str]) -> None:
        """Return once the broker's metadata lists ``topics`` (or after the timeout).

        The controller answers a creation before every broker's metadata has the
        topic; until then a rerun, or a worker, would see it missing."""
        names = set(topics)
        deadline = time.monotonic() + self.timeout
        while names - set(self.cluster().partitions) and time.monotonic() < deadline:
            time.sleep(0.1)


def _is_transport(err: KafkaError) -> bool:
    return err.code() in (KafkaError._TRANSPORT, KafkaError._TIMED_OUT,
                          KafkaError._ALL_BROKERS_DOWN, KafkaError.REQUEST_TIMED_OUT)


def check(admin: TopicAdmin, env: str,
          specs: Iterable[TopicSpec] = TOPICS.values()) -> tuple[Cluster, list[TopicRow]]:
    """Every topic of ``specs`` in ``env`` against the cluster."""
    named = {spec.full(env): spec for spec in specs}
    cluster = admin.cluster()
    ours = [name for name, spec in named.items()
            if name in cluster.partitions and not spec.upstream]
    configs = admin.configs(ours)
    partitions = {name: n for name, n in cluster.partitions.items()
                  if name in configs or name not in ours}
    rows = [compare(spec, name, partitions.get(name),
                    {k: v for k, v in configs.get(name, {}).items() if k in spec.config})
            for name, spec in named.items()]
    return cluster, rows


def replicas(cluster: Cluster, requested: int | None) -> int:
    """The replication factor of new topics: ``requested``, or one per broker up to 3."""
    factor = requested or min(DEFAULT_MAX_REPLICAS, cluster.brokers)
    if factor > cluster.brokers:
        raise ConfigError(f"replication factor {factor}, but the cluster has "
                          f"{cluster.brokers} broker(s): give --replication-factor "
                          f"{cluster.brokers} or less")
    return factor


def reconcile(admin: TopicAdmin, env: str, *, create: bool = False,
              include_upstream: bool = False, replication_factor: int | None = None,
              specs: Iterable[TopicSpec] = TOPICS.values()) -> list[TopicRow]:
    """The registry against the cluster; with ``create``, the missing topics created
    first (upstream ones only with ``include_upstream``). Idempotent: a topic
    that exists is compared, never changed."""
    specs = list(specs)
    cluster, rows = check(admin, env, specs)
    wanted = {row.topic: row.spec for row in rows if row.state is TopicState.MISSING
              and (include_upstream or not row.spec.upstream)}
    if not create or not wanted:
        return rows
    refused = admin.create(wanted, replicas(cluster, replication_factor))
    # Another creator got there first: compare what it made, as for any existing topic.
    raced = {name for name, err in refused.items()
             if err is not None and err.code() == KafkaError.TOPIC_ALREADY_EXISTS}
    admin.wait_visible({name for name, err in refused.items() if err is None} | raced)
    again = {row.topic: row for row in check(admin, env, specs)[1]} if raced else {}

    def outcome(row: TopicRow) -> TopicRow:
        if row.topic not in wanted:
            return row
        if row.topic in raced:
            return again[row.topic]
        err = refused[row.topic]
        if err is None:
            return replace(row, state=TopicState.CREATED, partitions=row.spec.partitions,
                           config=dict(row.spec.config), problems=())
        return replace(row, state=TopicState.CREATE_FAILED,
                       problems=(f"the broker refused to create it: {err.str()}",))

    return [outcome(row) for row in rows]
