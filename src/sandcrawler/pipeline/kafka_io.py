"""The pipeline's Kafka ends: a consumer-group source and a producing sink
(confluent-kafka / librdkafka), in a module of their own so that commands
without Kafka do not load the client."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import orjson
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

from sandcrawler.core.retry import Backoff
from sandcrawler.core.work import Item, Outcome, json_line
from sandcrawler.kafka.client import (
    BrokerLog,
    kafka_error,
    kafka_reason,
    log,
    new_client,
    raise_for_kafka_error,
)
from sandcrawler.pipeline.sinks import _QUEUE_FULL, Rejection, encoded

T = TypeVar("T")

#: while the broker is away and the topic idle: how often (and how long) to ask it
#: whether it answers again
PROBE_INTERVAL = 5.0
PROBE_TIMEOUT = 2.0
#: an offset commit not answered within this long is said as an outage (and
#: waited for still: librdkafka's synchronous commit has no timeout of its own)
COMMIT_SLOW = 10.0
#: an offset commit unanswered this long while the broker answers other requests
#: (a metadata probe) was lost: librdkafka can lose a synchronous commit's answer
#: after a broker restart and wait for it for ever (confluent-kafka-python #1801),
#: so the commit is asked again, and the waiting thread left behind
COMMIT_LOST = 30.0
#: how long a stopping worker waits to leave its consumer group
CLOSE_TIMEOUT = 10.0
#: how long, once a stop is asked for, an offset commit may still go unanswered
#: before it is given up: librdkafka's synchronous commit can hang on a broker that
#: answers everything else (after a restart, say), and would hold the stop for ever
STOP_COMMIT_GRACE = 5.0


#: a commit refused for these is the group rebalancing (a member joined or left, or
#: the coordinator moved after a broker restart), not an outage: the broker answered
REBALANCING = frozenset({
    KafkaError.ILLEGAL_GENERATION, KafkaError.REBALANCE_IN_PROGRESS,
    KafkaError.UNKNOWN_MEMBER_ID, KafkaError._ASSIGNMENT_LOST,
    KafkaError.FENCED_MEMBER_EPOCH, KafkaError.STALE_MEMBER_EPOCH,
})


def rebalancing(e: KafkaException) -> bool:
    """Whether a refused request was refused for a rebalance of the group."""
    err = kafka_error(e)
    return err is not None and err.code() in REBALANCING


class GaveUp(Exception):
    """A wait given up on: the stop's grace ran out first."""


class Lost(Exception):
    """A call whose answer will never come: its thread is left behind."""


class KafkaSource:
    """A consumer-group member of one topic; offsets are committed only by ack().

    Auto-commit is off: the runner acks a batch after the sink has made it
    durable, so a crash re-delivers (at-least-once) and never skips.
    """

    progress_unit: str = "rec"
    progress_total: int | None = None

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
        self._config = {
            **consumer_config,
            "enable.auto.commit": False,
            "enable.auto.offset.store": False,
        }
        self._consumer = new_client(Consumer, self._config)
        #: set by the check of an unanswered commit: the consumer itself is stuck
        self._wedged = False
        #: the client that asks the broker when the consumer does not answer: one for
        #: the source's life (never subscribed), not one per check of a long outage
        self._probe: Any = None
        #: (topic, partition) -> the assignment it was last given in; a record is
        #: committed only if its partition has stayed ours since it was read
        self._owned: dict[tuple[str, int], int] = {}
        self._assignments = 0
        #: (topic, partition) -> the last offset written durably and not yet committed
        #: (a commit failed: broker away); tried again with the next ack
        self._pending: dict[tuple[str, int], int] = {}
        self._next_probe = 0.0
        self._said_missing = False
        #: a commit was given up at a stop: nothing more is committed, and leaving
        #: the group (which waits for that commit first) gets a short wait
        self._gave_up_commit = False
        self._subscribe()

    def _subscribe(self) -> None:
        topics = [self.topic] if isinstance(self.topic, str) else list(self.topic)
        self._consumer.subscribe(topics, on_assign=self._on_assign, on_revoke=self._on_revoke,
                                 on_lost=self._on_revoke)

    # Rebalance callbacks run inside consume(), on the runner's thread. With the
    # cooperative protocol they name only the partitions that move, and the
    # client applies the (incremental) assignment itself once they return.
    def _on_assign(self, _consumer: Any, partitions: list[TopicPartition]) -> None:
        self._assignments += 1
        for tp in partitions:
            self._owned[(tp.topic, tp.partition)] = self._assignments
        log.info("assigned %s", _names(partitions))

    def _on_revoke(self, _consumer: Any, partitions: list[TopicPartition]) -> None:
        # Records of these partitions in hand are still processed and written,
        # but not committed: the new owner reads them again from the last commit
        # (the sinks' writes are idempotent), and a late commit of ours could
        # move the offset back over what the new owner already committed.
        for tp in partitions:
            self._owned.pop((tp.topic, tp.partition), None)
            self._pending.pop((tp.topic, tp.partition), None)
        log.info("revoked %s", _names(partitions))

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
                    if err.code() == KafkaError.UNKNOWN_TOPIC_OR_PART:
                        self._topic_missing(err.str())
                    elif err.code() != KafkaError._PARTITION_EOF:
                        self._log.problem(f"consuming {self.topic}: {err.str()}")
                    continue
                where = f"{msg.topic()}[{msg.partition()}]@{msg.offset()}"
                # a message without an error has both (the client types them optional)
                tp = (msg.topic() or "", msg.partition() or 0)
                batch.append(Item(where, msg.value() or b"",
                                  (*tp, msg.offset(), self._owned.get(tp, 0))))
            self._count += len(batch)
            if not batch:
                self._commit_pending()
                self._probe_if_down()
            # An empty batch tells the runner the topic is idle: time to book (and
            # commit) what has been written, rather than wait for more records.
            yield batch

    def ack(self, items: list[Item]) -> None:
        """Commit the offsets after ``items`` (written durably), for the partitions
        that are still ours in the assignment the items were read in."""
        stale: dict[tuple[str, int], int] = {}
        for item in items:
            topic, partition, offset, assignment = item.token
            key = (topic, partition)
            if self._owned.get(key) != assignment:
                stale[key] = min(offset, stale.get(key, offset))
                continue
            self._pending[key] = max(offset, self._pending.get(key, -1))
        if stale:
            log.info("%d record(s) of partitions revoked meanwhile not committed "
                     "(their new owner reads them again)",
                     sum(item.token[:2] in stale for item in items))
            self._read_again({k: o for k, o in stale.items() if k in self._owned})
        self._commit_pending()

    def _read_again(self, back: dict[tuple[str, int], int]) -> None:
        """Partitions revoked (or lost) and given back to this member while their
        records were in hand: those records were not committed, so this member, their
        new owner, must read them again. librdkafka does not always: after a lost
        assignment (the broker frozen, then "unknown member") it can go on from where
        it was rather than from the last commit, and the records in hand would never
        be committed (seen under load). Where the position is past the last commit
        (or, with none, past the first record in hand), seek back to it; the sinks'
        writes are idempotent, so reading again costs a lookup per record."""
        if not back:
            return
        parts = [TopicPartition(t, p) for t, p in back]
        try:
            done = waited(lambda: self._consumer.committed(parts, timeout=PROBE_TIMEOUT),
                          PROBE_TIMEOUT + 1.0, _no_answer, stop=self.stop)
            at = {(tp.topic, tp.partition): tp.offset for tp in self._consumer.position(parts)}
        except (KafkaException, TimeoutError, RuntimeError, GaveUp) as e:
            # the next worker to read these partitions reads them again anyway
            log.info("reading the given-back partitions again: no answer (%s)",
                     str(e) or type(e).__name__)
            return
        for tp in done:
            key = (tp.topic, tp.partition)
            start = tp.offset if tp.offset >= 0 else back[key]
            if at.get(key, -1) <= start:
                continue  # librdkafka starts there (or before) by itself
            try:
                self._consumer.seek(TopicPartition(tp.topic, tp.partition, start))
            except KafkaException as e:
                log.info("reading %s[%d] again from %d: %s", tp.topic, tp.partition, start,
                         kafka_reason(e))
                continue
            log.info("%s[%d] given back: reading again from offset %d", tp.topic,
                     tp.partition, start)

    def _commit_pending(self) -> None:
        # _pending holds only partitions still ours: _on_revoke drops the others
        if not self._pending or self._gave_up_commit:
            return
        offsets = [TopicPartition(t, p, o + 1) for (t, p), o in self._pending.items()]
        asked_at = time.monotonic()
        try:
            while True:
                try:
                    waited(lambda: self._consumer.commit(offsets=offsets, asynchronous=False),
                           COMMIT_SLOW, lambda: self._log.failed(
                               f"committing offsets: no answer within {COMMIT_SLOW:g}s "
                               "(still waiting)"),
                           stop=self.stop, grace=STOP_COMMIT_GRACE,
                           lost=(COMMIT_LOST, self._commit_lost))
                    break
                except Lost:
                    if self._wedged:
                        self._replace_consumer()
                        return
                    # Committing the same offsets again is harmless; the first
                    # request's thread stays blocked in librdkafka (a daemon).
                    log.warning("an offset commit to %s unanswered for %gs while the "
                                "broker answers other requests: asking again",
                                self._log.brokers, COMMIT_LOST)
        except GaveUp:
            # Nothing is lost: the records are stored, and whoever reads these
            # partitions next reads them again (the sinks' writes are idempotent).
            log.warning("Kafka at %s: stopping without the offset commit of %s: no answer "
                        "within %gs of the stop; their last records are read again by the "
                        "next worker", self._log.brokers,
                        ", ".join(f"{t}[{p}]" for t, p in self._pending), STOP_COMMIT_GRACE)
            self._gave_up_commit = True
            return
        except KafkaException as e:
            # The broker is away, or a rebalance is under way: kept, and tried again
            # with the next ack or when the topic is idle (offsets of partitions the
            # rebalance moves are dropped by _on_revoke). Until then a restart
            # re-reads these records, which the idempotent sinks absorb. An outage
            # is said once, like the client's own errors; a rebalance is no outage.
            if rebalancing(e):
                log.info("committing offsets (kept, to retry): the consumer group is "
                         "rebalancing: %s", kafka_reason(e))
                self._log.recovered(asked_at)
                return
            self._log.failed(f"committing offsets (kept, to retry): {kafka_reason(e)}")
            return
        self._pending = {}
        self._log.recovered(asked_at)

    def _commit_lost(self) -> bool:
        """Whether the answer to a commit unanswered for COMMIT_LOST can no longer
        come: the consumer answers a metadata request (its commit's answer was lost,
        confluent-kafka-python #1801: ask again), or it does not while a new client
        does (the consumer itself is stuck: seen after a broker restart under load,
        its metadata requests outliving their own timeout; ``_wedged``, it is
        replaced). Neither answering is an outage: wait on."""
        if self._broker_answers(self._consumer):
            return True
        if self._probe is None:
            # a log of its own: its reports say nothing of the consumer's outage
            quiet = BrokerLog(self._log.brokers, say=False)
            self._probe = new_client(Consumer, {**self._config, "logger": quiet,
                                                "error_cb": quiet.error_cb})
        self._wedged = self._broker_answers(self._probe)
        return self._wedged

    def _replace_consumer(self) -> None:
        """A new consumer in place of one that stopped answering: it joins the group
        and reads from the last commit, so what was read since is read again (the
        sinks' writes are idempotent). The old one is closed in the background; if
        that hangs too, the group drops it after its session timeout."""
        log.warning("Kafka at %s: the consumer stopped answering while the broker answers "
                    "a new client: replaced by a new one, which reads again what was not "
                    "committed", self._log.brokers)
        _close_in_background(self._consumer)
        self._owned.clear()
        self._pending.clear()
        self._wedged = False
        self._consumer = new_client(Consumer, self._config)
        self._subscribe()

    def _broker_answers(self, consumer: Any) -> bool:
        """Whether the broker answers ``consumer``'s metadata request now (within
        PROBE_TIMEOUT). Asked from a thread of its own, like the commit it checks on:
        a stop that comes meanwhile gives the commit up at once (GaveUp), and a request
        that outlasts its own timeout counts as no answer rather than holding the stop."""
        topic = self.topic if isinstance(self.topic, str) else self.topic[0]
        try:
            waited(lambda: consumer.list_topics(topic, timeout=PROBE_TIMEOUT),
                   PROBE_TIMEOUT + 1.0, _no_answer, stop=self.stop)
        except (KafkaException, TimeoutError, RuntimeError):  # RuntimeError: closed
            return False
        return True

    def _topic_missing(self, reason: str) -> None:
        """Said once: the broker answers, the topic is not there (yet)."""
        if not self._said_missing:
            self._said_missing = True
            log.warning("%s; waiting for it to be created (sandcrawler kafka topics --create)",
                        reason)

    def _probe_if_down(self) -> None:
        """While an outage is suspected or said and nothing is to commit (the topic
        idle), ask the broker for the topic's metadata now and then: its answer
        ends the outage, its failure confirms it. Records alone do neither: the
        client hands out what it fetched before the outage while the broker is
        still away."""
        now = time.monotonic()
        if not self._log.down or now < self._next_probe:
            return
        self._next_probe = now + PROBE_INTERVAL
        topic = self.topic if isinstance(self.topic, str) else self.topic[0]
        try:
            self._consumer.list_topics(topic, timeout=PROBE_TIMEOUT)
        except KafkaException as e:
            self._log.failed(f"asking for the metadata of {topic}: {kafka_reason(e)}")
            return
        self._log.recovered(now)

    def close(self) -> None:
        """Leave the group (its partitions move at once) and commit nothing more,
        for at most CLOSE_TIMEOUT: a broker that does not answer (or a commit
        still waiting for it, which librdkafka finishes first) would hold a
        stopping worker for ever. Given up, the partitions move after the
        session timeout instead, and nothing is lost: what was not committed is
        read again."""
        if self._probe is not None:
            _close_in_background(self._probe)
        timeout = STOP_COMMIT_GRACE if self._gave_up_commit else CLOSE_TIMEOUT
        try:
            waited(self._close, timeout, _no_answer)
        except TimeoutError:
            log.warning("Kafka at %s: leaving the consumer group did not finish within %gs "
                        "(the broker does not answer); stopping without it: the group "
                        "moves this worker's partitions after its session timeout",
                        self._log.brokers, timeout)

    def _close(self) -> None:
        try:
            self._consumer.close()
        except KafkaException as e:  # said, not raised: the worker is stopping anyway
            log.warning("Kafka at %s: leaving the consumer group: %s", self._log.brokers,
                        kafka_reason(e))


def _no_answer() -> None:
    """``waited``'s ``on_slow`` for a call given up when slow."""
    raise TimeoutError


def _close_in_background(consumer: Any) -> None:
    """Close ``consumer`` in a daemon thread, waiting for nothing: a stuck one would
    hold the caller. The thread holds the client while it waits, so the client is
    never freed (which would block the same way) before its close returns."""
    def close() -> None:
        with contextlib.suppress(KafkaException, RuntimeError):
            consumer.close()

    threading.Thread(target=close, name="kafka-close", daemon=True).start()


def waited(call: Callable[[], T], slow_after: float, on_slow: Callable[[], None], *,
           stop: threading.Event | None = None, grace: float = 0.0,
           lost: tuple[float, Callable[[], bool]] | None = None) -> T:
    """``call()``, made in a thread of its own while this one waits for it in short
    slices: a blocking call into librdkafka holds the thread that made it, so
    signal handlers (a stop) could not run until it returned, and nobody could
    tell that it is taking long. ``on_slow`` is called once, after ``slow_after``
    seconds without an answer; the wait goes on, unless it raises (to give up).
    An exception of ``call`` is raised here. A second stop signal
    (KeyboardInterrupt) ends the wait too; the call's thread (a daemon) is left
    to finish or die with the process. With ``stop``, the wait lasts at most
    ``grace`` seconds after the stop is seen, then GaveUp is raised. With ``lost``
    (seconds, check), once the call has gone unanswered that long, ``check()`` is
    asked every PROBE_INTERVAL whether its answer can still come (False: it can),
    and Lost is raised when it cannot."""
    result: list[T] = []
    error: list[BaseException] = []

    def run() -> None:
        try:
            result.append(call())
        except BaseException as e:  # handed over to the waiting thread
            error.append(e)

    thread = threading.Thread(target=run, name="kafka-call", daemon=True)
    thread.start()
    slow_at = time.monotonic() + slow_after
    check_at = time.monotonic() + lost[0] if lost is not None else 0.0
    give_up_at = 0.0
    while thread.is_alive():
        thread.join(0.2)
        now = time.monotonic()
        stopping = stop is not None and stop.is_set()
        # once stopping, the grace alone decides: no new probe to wait for
        if lost is not None and check_at and now >= check_at and thread.is_alive() \
                and not stopping:
            if lost[1]() and thread.is_alive():
                raise Lost
            check_at = time.monotonic() + PROBE_INTERVAL
        if slow_at and now >= slow_at and thread.is_alive():
            slow_at = 0.0
            on_slow()
        if stopping and thread.is_alive():
            give_up_at = give_up_at or now + grace
            if now >= give_up_at:
                raise GaveUp
    if error:
        raise error[0]
    return result[0]


def _key_bytes(key: object) -> str | bytes | None:
    """A message key as the client takes it. A key comes from the record (a bad
    request's base_url may be a number or a list): it becomes its JSON text rather
    than an error that would stop the worker."""
    if key is None or isinstance(key, str | bytes):
        return key
    return orjson.dumps(key)


def _names(partitions: list[TopicPartition]) -> str:
    return ", ".join(f"{tp.topic}[{tp.partition}]" for tp in partitions) or "nothing"


class KafkaSink:
    """Produces each output as JSON to ``topic``; returns only once the broker has them all.

    When the broker does not take a batch within ``flush_timeout`` the write fails
    (the runner backs off and calls it again with the same outcomes), but the
    messages stay queued in the producer, which goes on sending them. The retry
    then produces only the messages whose delivery failed and waits for the rest:
    an outage of any length up to the producer's ``message.timeout.ms`` publishes
    each result once (the idempotent producer keeps its own resends from
    duplicating), where producing the whole batch again would publish it twice.
    """

    def __init__(
        self,
        producer_config: dict[str, Any],
        topic: str,
        key: Callable[[Any], object] = lambda _: None,
        flush_timeout: float = 60.0,
        route: Callable[[Any], list[tuple[str, Any]]] | None = None,
    ) -> None:
        self.topic = topic
        self.key = key
        #: output -> (topic, message) pairs, when one output makes several messages
        self.route = route or (lambda out: [(topic, out)])
        self.flush_timeout = flush_timeout
        self._producer = new_client(Producer, producer_config)
        logger = producer_config.get("logger")
        self._log = logger if isinstance(logger, BrokerLog) else None
        #: the batch a failed write left behind: its outcomes (the runner retries
        #: with the same list) and its messages' delivery
        self._unfinished: tuple[list[Outcome], _Delivery, list[Rejection]] | None = None

    def _messages(self, output: Any) -> list[tuple[str, bytes, str | bytes | None]]:
        return [(topic, json_line(message), self._key_of(message))
                for topic, message in self.route(output)]

    def _key_of(self, message: Any) -> str | bytes | None:
        """The message's key; a key function that fails on it (a bug, not the
        record's fault) fails that record, and says it was the key, not the JSON."""
        try:
            return _key_bytes(self.key(message))
        except (TypeError, KeyError, AttributeError, ValueError) as e:
            raise TypeError(f"no message key for a {type(message).__name__} "
                            f"({type(e).__name__}: {e})") from e

    def write(self, outcomes: list[Outcome]) -> list[Rejection]:
        if self._unfinished is not None and self._unfinished[0] is outcomes:
            _, delivery, rejected = self._unfinished
        else:
            rejected = []
            delivery = _Delivery([message for messages in encoded(outcomes, self._messages,
                                                                  rejected)
                                  for message in messages])
        self._unfinished = (outcomes, delivery, rejected)
        asked_at = time.monotonic()
        # A full local queue is waited out serving delivery reports (poll), but not
        # forever: a broker that is down must become an error the runner backs off from.
        queue_full = Backoff(_QUEUE_FULL, deadline=time.monotonic() + self.flush_timeout,
                             sleep=self._producer.poll)
        for i in delivery.to_send():
            topic, value, key = delivery.messages[i]
            while True:
                try:
                    self._producer.produce(topic, value, key=key,
                                           on_delivery=delivery.callback(i))
                    delivery.sent(i)
                    break
                except BufferError:
                    if not queue_full.retry():
                        raise_for_kafka_error("local queue full", f"producing to {topic}")
        self._producer.flush(self.flush_timeout)
        if delivery.errors:
            raise_for_kafka_error(delivery.errors[0], f"producing to {self.topic}")
        if pending := delivery.pending():
            raise_for_kafka_error(
                f"{pending} message(s) not delivered within {self.flush_timeout:g}s "
                "(still queued: the retry waits for them rather than sending them again)",
                f"producing to {self.topic}",
            )
        self._unfinished = None
        if self._log is not None and delivery.messages:
            self._log.recovered(asked_at)  # the broker acknowledged them: it answers
        return rejected

    def close(self) -> None:
        self._producer.flush(self.flush_timeout)


class _Delivery:
    """The messages of one batch and where each one is: not sent yet (or its
    delivery failed, so it is to be sent again), queued in the producer, or
    delivered. Delivery reports run in the thread that polls the producer, the
    one that writes."""

    _NEW, _QUEUED, _DONE = 0, 1, 2

    def __init__(self, messages: list[tuple[str, bytes, str | bytes | None]]) -> None:
        self.messages = messages
        self._state = [self._NEW] * len(messages)
        #: delivery errors since the last send (a retry clears them)
        self.errors: list[Any] = []

    def to_send(self) -> list[int]:
        self.errors = []
        return [i for i, st in enumerate(self._state) if st == self._NEW]

    def sent(self, index: int) -> None:
        self._state[index] = self._QUEUED

    def callback(self, index: int) -> Callable[[Any, Any], None]:
        def on_delivery(err: Any, _msg: Any) -> None:
            if err is None:
                self._state[index] = self._DONE
            else:
                self._state[index] = self._NEW
                self.errors.append(err)

        return on_delivery

    def pending(self) -> int:
        return sum(st != self._DONE for st in self._state)
