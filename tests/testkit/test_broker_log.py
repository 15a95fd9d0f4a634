"""BrokerLog: an outage of the broker is said once, and its end once, per process;
librdkafka's late reports alone say nothing."""

from __future__ import annotations

import logging
import threading
import time

import pytest
from confluent_kafka import KafkaError, KafkaException

from sandcrawler.kafka.client import BrokerLog
from sandcrawler.pipeline.kafka_io import GaveUp, Lost, rebalancing, waited

BROKERS = "kafka1:9092"
REFUSED = "FAIL 127.0.0.1:9092/1: Connection refused"


def said(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.name == "sandcrawler.kafka.client" and r.levelno >= logging.WARNING]


def test_an_outage_is_said_once_when_a_request_fails_and_its_end_once(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    b = BrokerLog(BROKERS)
    assert not b.down
    b.log(logging.ERROR, "FAIL %s: Connection refused", "127.0.0.1:9092/1")
    for _ in range(50):  # librdkafka's reconnection attempts
        b.error_cb("_TRANSPORT: all brokers down")
    assert b.down and said(caplog) == []  # suspected: reports may be late
    for _ in range(5):
        b.failed("committing offsets (kept, to retry): Broker: Not coordinator")
    # said once, with librdkafka's first reason
    assert said(caplog) == [f"Kafka at {BROKERS}: {REFUSED}; "
                            "retrying in the background (further errors at debug level, -vv)"]
    b.recovered(time.monotonic())
    assert not b.down
    assert said(caplog)[1:] == [f"Kafka at {BROKERS} answers again"]
    # a second outage is said again, with our own reason when librdkafka gave none
    b.failed("asking for the metadata of t: Local: Broker transport failure")
    assert b.down and said(caplog)[2].startswith(
        f"Kafka at {BROKERS}: asking for the metadata of t: Local: Broker transport failure;")
    assert b.first == "_TRANSPORT: all brokers down"  # an error callback's reason first


def test_late_reports_answered_by_the_next_request_say_nothing(
        caplog: pytest.LogCaptureFixture) -> None:
    """Seen with a real broker restarted while a worker waited in a commit: the
    commit succeeded once the broker was back, then the restart's reports were
    served, then the next commit succeeded."""
    b = BrokerLog(BROKERS)
    b.problem(REFUSED)
    b.problem('KafkaError{code=_ALL_BROKERS_DOWN,val=-187,str="1/1 brokers are down"}')
    b.recovered(time.monotonic())
    assert not b.down and said(caplog) == []


def test_an_answer_to_a_request_sent_before_the_outage_does_not_end_it(
        caplog: pytest.LogCaptureFixture) -> None:
    """A commit in flight when the broker went away may still be acknowledged; it
    says nothing of whether the broker answers now."""
    b = BrokerLog(BROKERS)
    asked_at = time.monotonic()
    b.failed("committing offsets (kept, to retry): Local: Timed out")
    b.recovered(asked_at)
    assert b.down
    b.problem(REFUSED)  # still the same outage: not said again
    b.failed("committing offsets (kept, to retry): Local: Timed out")
    assert len(said(caplog)) == 1
    b.recovered(time.monotonic())
    assert not b.down and said(caplog)[-1].endswith("answers again")


def test_an_end_without_an_outage_says_nothing(caplog: pytest.LogCaptureFixture) -> None:
    b = BrokerLog(BROKERS)
    b.recovered(time.monotonic())
    assert said(caplog) == [] and not b.down


def test_quiet_mode_keeps_the_first_reason_for_the_caller(
        caplog: pytest.LogCaptureFixture) -> None:
    b = BrokerLog(BROKERS, say=False)
    b.log(logging.WARNING, "Connect to %s failed", "ipv4#127.0.0.1:9092")
    b.failed("asking for the metadata of t: Local: Broker transport failure")
    b.recovered(time.monotonic())
    assert said(caplog) == []
    assert b.first == "Connect to ipv4#127.0.0.1:9092 failed"


def test_clients_on_several_threads_say_an_outage_once(
        caplog: pytest.LogCaptureFixture) -> None:
    """A worker's consumer and producer share one BrokerLog; librdkafka calls it
    from each client's own threads."""
    b = BrokerLog(BROKERS)
    start = threading.Barrier(8)

    def client() -> None:
        start.wait()
        for i in range(200):
            b.problem(REFUSED) if i % 2 else b.failed("committing offsets: Local: Timed out")

    threads = [threading.Thread(target=client) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(said(caplog)) == 1


def test_waited_returns_the_answer_and_says_a_slow_one_once() -> None:
    slow: list[float] = []
    assert waited(lambda: 42, 5.0, lambda: slow.append(time.monotonic())) == 42
    assert slow == []
    started = time.monotonic()
    assert waited(lambda: time.sleep(0.8) or "late", 0.2, lambda: slow.append(time.monotonic())) \
        == "late"
    assert len(slow) == 1 and 0.2 <= slow[0] - started < 0.8


def test_waited_raises_the_calls_exception_here() -> None:
    def refused() -> None:
        raise ValueError("Broker: Not coordinator")

    with pytest.raises(ValueError, match="Not coordinator"):
        waited(refused, 5.0, lambda: None)


def test_waited_gives_up_when_told_to() -> None:
    def give_up() -> None:
        raise TimeoutError

    started = time.monotonic()
    with pytest.raises(TimeoutError):
        waited(lambda: time.sleep(5), 0.2, give_up)
    assert time.monotonic() - started < 2


def test_waited_gives_up_a_grace_after_a_stop() -> None:
    """A call that never answers (librdkafka's commit can hang on a restarted
    broker) holds a stop only for the grace; one that answers within it is kept."""
    stop = threading.Event()
    threading.Timer(0.3, stop.set).start()
    started = time.monotonic()
    with pytest.raises(GaveUp):
        waited(lambda: time.sleep(30), 60.0, lambda: None, stop=stop, grace=0.5)
    assert 0.8 <= time.monotonic() - started < 3
    # the stop already set: an answer within the grace still counts
    assert waited(lambda: time.sleep(0.3) or "done", 60.0, lambda: None,
                  stop=stop, grace=2.0) == "done"


@pytest.mark.parametrize("code", [KafkaError.ILLEGAL_GENERATION, KafkaError.REBALANCE_IN_PROGRESS,
                                  KafkaError.UNKNOWN_MEMBER_ID])
def test_a_commit_refused_for_a_rebalance_is_no_outage(code: int) -> None:
    # After a broker restart the group's generation changes under a worker: its
    # commit is refused with ILLEGAL_GENERATION (CI, stop 44). The broker answered.
    assert rebalancing(KafkaException(KafkaError(code)))


@pytest.mark.parametrize("code", [KafkaError._TRANSPORT, KafkaError._ALL_BROKERS_DOWN,
                                  KafkaError.NOT_COORDINATOR, KafkaError._TIMED_OUT])
def test_a_commit_refused_for_the_broker_away_is_an_outage(code: int) -> None:
    assert not rebalancing(KafkaException(KafkaError(code)))
    assert not rebalancing(KafkaException("no KafkaError in it"))


def test_waited_asks_whether_a_long_call_is_lost() -> None:
    """A synchronous commit whose answer librdkafka lost (CI, after a broker restart:
    unanswered for 120 s while the broker answered everything else) is given up as
    Lost once the check says the broker answers; while it does not, the wait goes on."""
    never = threading.Event()
    asked: list[float] = []

    def broker_answers() -> bool:
        asked.append(time.monotonic())
        return True

    with pytest.raises(Lost):
        waited(never.wait, 60.0, lambda: None, lost=(0.3, broker_answers))
    assert len(asked) == 1
    # the broker away (the check says no): the call is waited for until it answers
    answered = threading.Event()
    threading.Timer(0.6, answered.set).start()
    assert waited(lambda: answered.wait() and "answered", 60.0, lambda: None,
                  lost=(0.1, lambda: False)) == "answered"
    never.set()  # the first call's thread, left behind, ends with the test


def test_a_stop_is_not_held_by_the_lost_check() -> None:
    """CI (stop 45): a worker stopped while its commit hung was still in the lost
    check 15 s later. Once the stop is seen no new check is asked, and the grace
    alone decides; a check under way when the stop comes ends with it (GaveUp)."""
    never = threading.Event()
    asked: list[float] = []

    def slow_check() -> bool:
        asked.append(time.monotonic())
        time.sleep(5)
        return False

    stop = threading.Event()
    stop.set()
    started = time.monotonic()
    with pytest.raises(GaveUp):
        waited(never.wait, 60.0, lambda: None, stop=stop, grace=0.5,
               lost=(0.0, slow_check))
    assert asked == []
    assert time.monotonic() - started < 3
    # the check itself waited for as _broker_answers asks it: a stop ends it at once
    stop_later = threading.Event()
    threading.Timer(0.3, stop_later.set).start()
    started = time.monotonic()
    with pytest.raises(GaveUp):
        waited(never.wait, 60.0, lambda: None, stop=stop_later)
    assert time.monotonic() - started < 2
    never.set()
