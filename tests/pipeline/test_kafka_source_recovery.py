"""How a ``KafkaSource`` gets out of two states librdkafka can leave it in after a
broker restart or freeze, on a real broker. Both were seen in CI-like runs (four
test workers on two cores), not on demand, so each test puts the source in the
state seen and checks the way out:

- a partition lost and given back to the same member while its records were in
  hand, with the client going on from where it was instead of from the last commit
  (the records in hand would never be committed);
- a consumer that answers nothing any more (its commit and its metadata requests
  outlive their own timeouts) while the broker answers other clients."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from confluent_kafka import Producer, TopicPartition

from sandcrawler.app.settings import load_settings
from sandcrawler.core.work import Item
from sandcrawler.kafka.client import consumer_config
from sandcrawler.pipeline.kafka_io import KafkaSource
from tests.helpers.kafka import KafkaSpace, committed, create_topic, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.kafka]


def one_partition_topic(kafka: KafkaSpace, name: str, records: int) -> str:
    topic = kafka.topic(name)
    create_topic(kafka.bootstrap, topic, partitions=1)
    producer = Producer({"bootstrap.servers": kafka.bootstrap})
    for i in range(records):
        producer.produce(topic, f"r{i}".encode(), partition=0)
    assert producer.flush(30) == 0
    return topic


@pytest.fixture
def source(kafka: KafkaSpace, request: pytest.FixtureRequest) -> Iterator[KafkaSource]:
    name = request.node.name.replace("test_", "")[:40]
    topic = one_partition_topic(kafka, name, 10)
    config = consumer_config(load_settings(kafka_brokers=kafka.bootstrap).kafka,
                             kafka.group(name))
    src = KafkaSource(config, topic, stop=threading.Event(), poll_timeout=0.2)
    try:
        yield src
    finally:
        src.stop.set()
        src.close()


def read(src: KafkaSource, count: int) -> list[Item]:
    batches = src.batches(100)
    got: list[Item] = []
    wait_until(lambda: got.extend(next(batches)) or len(got) >= count, 60,
               f"{count} records read")
    return got


def test_a_partition_given_back_with_its_records_in_hand_is_read_again(
        kafka: KafkaSpace, source: KafkaSource) -> None:
    in_hand = read(source, 10)
    topic = in_hand[0].token[0]
    tp = TopicPartition(topic, 0)
    # librdkafka's callbacks for a lost assignment and the new one, with the client
    # left where it was (position 10), as after a frozen broker said "unknown member"
    source._on_revoke(None, [tp])
    source._on_assign(None, [tp])
    assert source._consumer.position([tp])[0].offset == 10

    source.ack(in_hand)  # durable, but read in the lost assignment: not committed
    again = read(source, 10)  # read again from the start: there is no commit yet
    assert sorted(i.token[2] for i in again) == list(range(10))
    source.ack(again)
    assert committed(kafka.bootstrap, source._config["group.id"], topic) == {0: 10}


def test_a_consumer_that_answers_nothing_is_replaced_and_what_it_read_is_read_again(
        kafka: KafkaSpace, source: KafkaSource) -> None:
    in_hand = read(source, 10)
    topic = in_hand[0].token[0]
    # the consumer answers: an unanswered commit was lost, to be asked again
    assert source._commit_lost() and not source._wedged
    # the consumer answers nothing (closed here; stuck in librdkafka when seen)
    # while a new client gets the broker's answer: it is replaced
    source._consumer.close()
    assert source._commit_lost() and source._wedged
    probe = source._probe
    assert source._commit_lost() and source._probe is probe  # one probe, not one per check
    source._replace_consumer()
    assert not source._wedged

    source.ack(in_hand)  # read by the old consumer: nothing of it is committed
    assert committed(kafka.bootstrap, source._config["group.id"], topic) == {}
    again = read(source, 10)  # the new consumer reads from the last commit
    assert sorted(i.token[2] for i in again) == list(range(10))
    source.ack(again)
    assert committed(kafka.bootstrap, source._config["group.id"], topic) == {0: 10}


def test_a_frozen_broker_is_an_outage_not_a_stuck_consumer(kafka_private: KafkaSpace) -> None:
    kafka = kafka_private
    topic = one_partition_topic(kafka, "frozen", 3)
    config = consumer_config(load_settings(kafka_brokers=kafka.bootstrap).kafka,
                             kafka.group("frozen"))
    src = KafkaSource(config, topic, stop=threading.Event(), poll_timeout=0.2)
    try:
        read(src, 3)
        kafka.broker.freeze()
        try:
            # neither the consumer nor a new client gets an answer: wait on, as is
            assert not src._commit_lost() and not src._wedged
        finally:
            kafka.broker.thaw()
    finally:
        src.stop.set()
        src.close()
