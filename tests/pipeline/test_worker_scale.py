"""Workers on a real Kafka broker when things go wrong at scale: several processes
in one group share a 6-partition topic and one is SIGKILLed; the broker restarts
under running workers, or hangs under a busy one; a rebalance takes a partition
away while its batch is in hand; poison records sit among good ones. In every
case each record ends up in the database once and the group's offsets reach the
end of the topic.

The tests share one broker, each in an env of its own (the ``kafka`` fixture); a
test that stops or freezes the broker has one of its own (``kafka_private``)."""

from __future__ import annotations

import re
import signal
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import orjson
import pytest
from sqlalchemy import Engine, text

from sandcrawler.app.settings import load_settings
from sandcrawler.kafka.client import consumer_config
from sandcrawler.pipeline.kafka_io import CLOSE_TIMEOUT, STOP_COMMIT_GRACE, KafkaSource
from sandcrawler_testkit.kafka_broker import KafkaBroker
from sandcrawler_testkit.kafka_clients import consume, produce
from tests.helpers.cli import run_cli
from tests.helpers.kafka import (
    KafkaSpace,
    WorkerProcess,
    Workers,
    committed,
    create_topic,
    wait_until,
)

pytestmark = [pytest.mark.slow, pytest.mark.kafka]

WORKER = "persist-crossref"
INDEXED = {"date-time": "2021-05-10T22:08:45Z"}
POSTGRESQL = pytest.mark.parametrize("db_backend", ["postgresql"], indirect=True)


def work(i: int) -> bytes:
    return orjson.dumps({"DOI": f"10.1234/SCALE.{i}", "indexed": INDEXED, "reference": []})


def doi(i: int) -> str:
    return f"10.1234/scale.{i}"


def works_topic(kafka: KafkaSpace) -> str:
    """What the worker reads: fatcat's ``api-crossref`` of the test's env."""
    return kafka.topic("api-crossref", prefix="fatcat")


def produce_works(kafka: KafkaSpace, indexes: range) -> None:
    # keyed by DOI, as the upstream feed is: one work's updates stay in order
    produce(kafka.client_config, works_topic(kafka), [work(i) for i in indexes],
            keys=[doi(i).encode() for i in indexes])


def rows(engine: Engine) -> tuple[int, int]:
    """(rows, distinct DOIs) in the crossref table."""
    with engine.connect() as conn:
        got = conn.execute(text("SELECT count(*), count(DISTINCT doi) FROM crossref")).one()
    return int(got[0]), int(got[1])


def dois_in(engine: Engine) -> set[str]:
    with engine.connect() as conn:
        return set(conn.execute(text("SELECT doi FROM crossref")).scalars())


def total_committed(kafka: KafkaSpace) -> int:
    return sum(committed(kafka.client_config, kafka.group(WORKER), works_topic(kafka)).values())


def assignments(kafka: KafkaSpace) -> list[set[int]]:
    """The partitions of the works topic each member of the worker's group holds now."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    group, topic = kafka.group(WORKER), works_topic(kafka)
    admin = AdminClient(kafka.client_config)
    try:
        description = admin.describe_consumer_groups([group], request_timeout=10)[group].result()
    except KafkaException:  # the coordinator still loading: no members to tell of yet
        return []
    return [{tp.partition for tp in m.assignment.topic_partitions if tp.topic == topic}
            for m in description.members]


def refuses(bootstrap: str) -> bool:
    """Nothing listens on the broker's port any more."""
    host, port = bootstrap.rsplit(":", 1)
    try:
        with socket.create_connection((host, int(port)), timeout=1):
            return False
    except OSError:
        return True


def held_up(engine: Engine) -> Callable[[], bool]:
    """A condition, true once the crossref table has not grown since it was last
    asked (ask it every half second): a worker writing ~3,000 rows a second is then
    waiting for something, the frozen broker."""
    last = [-1]

    def stalled() -> bool:
        now = rows(engine)[0]
        same, last[0] = now == last[0], now
        return same

    return stalled


@pytest.fixture
def space(request: pytest.FixtureRequest) -> KafkaSpace:
    """The test's Kafka space: on a broker of its own if it asked for one
    (``kafka_private``: it stops or freezes it), else on the shared one."""
    private = "kafka_private" in request.fixturenames
    return request.getfixturevalue("kafka_private" if private else "kafka")


@pytest.fixture
def workers(tmp_path: Path, space: KafkaSpace, engine: Engine, migrated_db_url: str
            ) -> Iterator[Workers]:
    # A SIGKILLed member is given up after its session timeout: 6 s keeps the test short.
    ws = Workers(tmp_path, {**space.settings_env, "SANDCRAWLER_DATABASE_URL": migrated_db_url,
                            "SANDCRAWLER_KAFKA_OPTIONS": '{"session.timeout.ms": 6000}'},
                 WORKER)
    try:
        yield ws
    finally:
        ws.kill_all()


@POSTGRESQL
def test_three_workers_one_sigkilled_every_record_once(
        kafka: KafkaSpace, workers: Workers, engine: Engine) -> None:
    first, total = 6_000, 12_000
    create_topic(kafka.bootstrap, works_topic(kafka), partitions=6)
    procs = [workers.start("--batch-size", "100") for _ in range(3)]
    wait_until(lambda: sorted(len(a) for a in assignments(kafka)) == [2, 2, 2], 60,
               "three members holding two partitions each")

    produce_works(kafka, range(first))
    procs[1].wait_until(lambda: rows(engine)[0] >= 1_500, 60, "the workers under way")
    owned_before = assignments(kafka)
    procs[1].proc.kill()  # SIGKILL: no LeaveGroup, no commit of the batch in hand
    assert procs[1].proc.wait(timeout=10) == -signal.SIGKILL
    assert rows(engine)[0] < first, "the worker should be killed mid-stream"
    # more records for every partition, the dead worker's included
    produce_works(kafka, range(first, total))

    # The survivors take the dead member's partitions (after its session timeout)
    # and everything is committed, without anyone restarting anything.
    procs[0].wait_until(lambda: total_committed(kafka) == total, 120,
                        "every record committed")
    owned_after = assignments(kafka)
    assert len(owned_after) == 2 and set().union(*owned_after) == set(range(6))
    assert set().union(*owned_before) == set(range(6))

    count, distinct = rows(engine)
    assert count == distinct == total  # 0 lost, 0 duplicated
    assert dois_in(engine) == {doi(i) for i in range(total)}
    for w in (procs[0], procs[2]):
        assert w.stop(signal.SIGTERM) == 0, w.stderr
        assert "Traceback" not in w.stderr


@POSTGRESQL
def test_broker_restart_mid_stream_loses_nothing(
        kafka_private: KafkaSpace, workers: Workers, engine: Engine) -> None:
    kafka = kafka_private  # the broker is restarted: one of the test's own
    first, total = 4_000, 8_000
    create_topic(kafka.bootstrap, works_topic(kafka), partitions=6)
    procs = [workers.start("--batch-size", "100") for _ in range(2)]
    produce_works(kafka, range(first))
    procs[0].wait_until(lambda: rows(engine)[0] >= 500, 60, "the workers under way")

    # The operator restarts the broker; the workers are not told. It is away from
    # the stop until the restarted one answers (its start-up takes seconds).
    kafka.broker.stop()
    assert refuses(kafka.bootstrap)
    assert all(w.proc.poll() is None for w in procs)
    kafka.broker.start()
    produce_works(kafka, range(first, total))

    procs[0].wait_until(lambda: total_committed(kafka) == total, 120,
                        "every record committed after the restart")
    # every worker rode the outage out: none exited on it
    assert all(w.proc.poll() is None for w in procs), [w.stderr for w in procs]
    assert rows(engine) == (total, total)
    assert dois_in(engine) == {doi(i) for i in range(total)}
    for w in procs:
        # A commit whose answer the restart lost may still be waited for when the
        # stop comes (CI, stop 45): it holds the stop for at most the grace, and
        # leaving the group for at most as long again.
        assert w.stop(signal.SIGTERM, timeout=STOP_COMMIT_GRACE + CLOSE_TIMEOUT + 10) == 0, \
            w.stderr
        assert "Traceback" not in w.stderr
        # The outage is said at most once per worker, and then its end (or, that
        # lost commit, given up at the stop). Not necessarily at all: a worker that
        # waited in one commit through the whole restart never stopped, and
        # librdkafka's reports of it, served after the broker was back, are
        # answered by the next commit (they once made two outage lines of one
        # restart).
        lines = [line for line in w.stderr.splitlines() if "Kafka at" in line]
        gave_up = [line for line in lines if "stopping without" in line]
        lines = [line for line in lines
                 if line not in gave_up and "leaving the consumer group" not in line]
        if lines:
            assert "retrying in the background" in lines[0], w.stderr
            assert len(lines) == 2 or (gave_up and len(lines) == 1), w.stderr
            assert all(line.endswith(f"Kafka at {kafka.bootstrap} answers again")
                       for line in lines[1:]), w.stderr


def busy_worker(kafka: KafkaSpace, workers: Workers, engine: Engine, records: int
                ) -> WorkerProcess:
    """One worker, batches of 100, under way through ``records`` works (at ~3,000
    a second: busy for a while yet)."""
    create_topic(kafka.bootstrap, works_topic(kafka), partitions=6)
    w = workers.start("--batch-size", "100")
    produce_works(kafka, range(records))
    w.wait_until(lambda: rows(engine)[0] >= 500, 60, "the worker under way")
    return w


@POSTGRESQL
def test_a_broker_that_hangs_is_said_and_a_stop_is_heard(
        kafka_private: KafkaSpace, workers: Workers, engine: Engine) -> None:
    """A frozen broker (SIGSTOP: connections open, nothing answered) under a busy
    worker. Its offset commit waits (librdkafka's has no timeout): the outage is
    said after COMMIT_SLOW, and its end once the broker answers again. Frozen a
    second time, a SIGTERM is heard at once, and the worker stops when the broker
    is back. Nothing is lost, nothing is stored twice. (Before: nothing at all
    was said of a 45 s freeze, and a stop waited for the broker.) The broker is
    frozen: one of the test's own."""
    kafka = kafka_private
    first, total = 30_000, 40_000
    w = busy_worker(kafka, workers, engine, first)
    kafka.broker.freeze()
    try:
        w.wait_until(lambda: "retrying in the background" in w.stderr, 30, "the outage said")
        assert rows(engine)[0] < first, "the worker should have been busy"
    finally:
        kafka.broker.thaw()
    w.wait_until(lambda: "answers again" in w.stderr, 60, "the outage's end said")
    w.wait_until(lambda: total_committed(kafka) == first, 120, "every record committed")

    produce_works(kafka, range(first, total))
    w.wait_until(lambda: rows(engine)[0] >= first + 500, 60, "the worker under way again")
    kafka.broker.freeze()
    try:
        # the stop comes while the worker waits for the frozen broker
        w.wait_until(held_up(engine), 10, "the worker held up by the frozen broker",
                     interval=0.5)
        assert rows(engine)[0] < total, "the worker should have been busy"
        w.proc.send_signal(signal.SIGTERM)
        w.wait_until(lambda: "finishing the batch in hand" in w.stderr, 5,
                     "the stop heard while the broker does not answer")
        assert w.proc.poll() is None
    finally:
        kafka.broker.thaw()
    assert w.wait(60) == 0, w.stderr
    assert "Traceback" not in w.stderr
    count, distinct = rows(engine)
    assert count == distinct >= total_committed(kafka) > first
    said = [line for line in w.stderr.splitlines() if "Kafka at" in line]
    # said once (the second freeze was shorter than COMMIT_SLOW), and its end
    assert len(said) == 2 and said[1].endswith("answers again"), w.stderr


@POSTGRESQL
def test_a_second_stop_under_a_hung_broker_aborts_and_loses_nothing(
        kafka_private: KafkaSpace, workers: Workers, engine: Engine) -> None:
    """Frozen broker, busy worker, SIGTERM twice: the worker stops (130) within
    CLOSE_TIMEOUT, without waiting for the broker to leave its group. (Before, it
    hung in the consumer's close, which waits for the unanswered commit.) A worker
    started after the broker is back stores what the first one had not
    committed: every record once. The broker is frozen: one of the test's own."""
    kafka = kafka_private
    total = 30_000
    w = busy_worker(kafka, workers, engine, total)
    kafka.broker.freeze()
    try:
        # the stops come while the worker waits for the frozen broker
        w.wait_until(held_up(engine), 10, "the worker held up by the frozen broker",
                     interval=0.5)
        w.proc.send_signal(signal.SIGTERM)
        w.wait_until(lambda: "finishing the batch in hand" in w.stderr, 5, "the first stop")
        w.proc.send_signal(signal.SIGTERM)
        assert w.wait(30) == 130, w.stderr
    finally:
        kafka.broker.thaw()
    assert "leaving the consumer group did not finish" in w.stderr, w.stderr
    assert "Traceback" not in w.stderr
    assert rows(engine)[0] < total

    again = workers.start("--batch-size", "1000")
    again.wait_until(lambda: total_committed(kafka) == total, 120,
                     "every record committed by the next worker")
    assert rows(engine) == (total, total)
    assert again.stop(signal.SIGTERM) == 0, again.stderr


def test_revoked_partition_batch_in_hand_is_not_committed(kafka: KafkaSpace) -> None:
    """A rebalance takes a partition away while its records are in hand: the old
    owner's ack commits only the partitions it still holds, and the new owner reads
    the revoked one again from the last commit."""
    from confluent_kafka import Producer

    topic, group = kafka.topic("rebalance"), kafka.group("rebalance")
    create_topic(kafka.bootstrap, topic, partitions=2)
    producer = Producer({"bootstrap.servers": kafka.bootstrap})
    for p in (0, 1):
        for i in range(10):
            producer.produce(topic, f"p{p}-{i}".encode(), partition=p)
    assert producer.flush(30) == 0

    config = consumer_config(load_settings(kafka_brokers=kafka.bootstrap).kafka, group,
                             **{"session.timeout.ms": 6000})
    stop = threading.Event()
    a = KafkaSource(config, topic, stop=stop, poll_timeout=0.2)
    b: KafkaSource | None = None
    try:
        a_batches = a.batches(100)
        in_hand: list = []
        wait_until(lambda: in_hand.extend(next(a_batches)) or len(in_hand) == 20, 30,
                   "the first member reading both partitions")

        b = KafkaSource(config, topic, stop=stop, poll_timeout=0.2)
        b_batches = b.batches(100)
        b_read: list = []

        def rebalanced() -> bool:
            next(a_batches)  # the old member takes part in the rebalance as it polls
            b_read.extend(next(b_batches))
            return len(b_read) == 10

        wait_until(rebalanced, 60, "the second member reading the partition it was given")
        moved = {item.token[1] for item in b_read}
        assert len(moved) == 1
        kept = ({0, 1} - moved).pop()

        a.ack(in_hand)  # the batch read before the rebalance, now durable
        assert committed(kafka.bootstrap, group, topic) == {kept: 10}
        # the new owner commits what it read; the old owner's late ack did not interfere
        b.ack(b_read)
        assert committed(kafka.bootstrap, group, topic) == {0: 10, 1: 10}
    finally:
        stop.set()
        a.close()
        if b is not None:
            b.close()


@pytest.fixture
def ingest_workers(tmp_path: Path, kafka: KafkaSpace) -> Iterator[Workers]:
    ws = Workers(tmp_path, kafka.settings_env, "ingest-file")
    try:
        yield ws
    finally:
        ws.kill_all()


def test_poison_records_get_a_status_and_offsets_move_on(
        kafka: KafkaSpace, ingest_workers: Workers) -> None:
    requests, results = kafka.topic("ingest-file-requests"), kafka.topic("ingest-file-results")
    group = kafka.group("ingest-file")
    poison = [
        b"this is not json {",  # bad-json: a result with an empty request
        b"\xff\xfe not utf-8",  # bad-utf8: likewise
        orjson.dumps({"ingest_type": "pdf"}),  # no base_url: a bad-request result
        orjson.dumps({"ingest_type": "pdf", "base_url": 42}),  # wrong type: bad-request
        orjson.dumps(["a", "list"]),  # not an object: bad-request, an empty request
        orjson.dumps({"ingest_type": "software", "base_url": "https://x.example/"}),
    ]
    create_topic(kafka.bootstrap, requests, partitions=1)
    produce(kafka.bootstrap, requests, poison)
    w = ingest_workers.start()
    w.wait_until(lambda: sum(committed(kafka.bootstrap, group, requests).values())
                 == len(poison), 60,
                 "the poison records committed")
    got = [orjson.loads(m) for m in consume(kafka.bootstrap, results, 5)]
    assert all(r["hit"] is False for r in got)
    # what is not a JSON object has no request to echo; its message says where it is
    # (the results are unkeyed: in no particular order across partitions)
    where = {int(m.group(1)): r for r in got
             if (m := re.search(rf"\(record at {re.escape(requests)}\[0\]@(\d+)\)$",
                                r["error_message"]))}
    assert {o: (r["status"], r["request"]) for o, r in where.items()} == {
        0: ("bad-json", {}), 1: ("bad-utf8", {}), 4: ("bad-request", {})}
    echoed = sorted((r for r in got if r["request"]), key=lambda r: len(r["request"]))
    assert [(r["status"], r["request"]) for r in echoed] == [
        ("bad-request", {"ingest_type": "pdf"}),
        ("bad-request", {"ingest_type": "pdf", "base_url": 42})]
    assert "base_url" in echoed[1]["error_message"]
    # the worker keeps going: a later record is handled too
    produce(kafka.bootstrap, requests, [orjson.dumps({"ingest_type": "pdf", "base_url": 7})])
    w.wait_until(lambda: sum(committed(kafka.bootstrap, group, requests).values())
                 == len(poison) + 1, 60,
                 "the next record committed")
    assert w.proc.poll() is None
    assert w.stop(signal.SIGTERM) == 0, w.stderr
    for status in ("bad-json", "bad-utf8", "bad-request"):
        assert f": {status}: " in w.stderr
    assert "Traceback" not in w.stderr


@pytest.fixture
def secured_kafka(kafka_libs: Path, tmp_path: Path) -> Iterator[KafkaSpace]:
    """A broker whose client listener speaks only TLS (a certificate of its own, for
    127.0.0.1) and takes only SASL (PLAIN) logins: SASL_SSL, as a secured cluster."""
    with KafkaBroker(kafka_libs, tmp_path / "kafka-secured",
                     sasl_users={"sandcrawler": "s3cret"}, tls=True) as broker:
        yield KafkaSpace(broker, "secured")


def secured_options(broker: KafkaBroker, password: str, *, trust: bool = True) -> str:
    options = {"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN",
               "sasl.username": "sandcrawler", "sasl.password": password}
    if trust:  # without it librdkafka checks the certificate against the system's CAs
        options["ssl.ca.location"] = str(broker.ca_file)
    return orjson.dumps(options).decode()


def test_secured_cluster_with_the_configured_tls_and_login(
        secured_kafka: KafkaSpace, engine: Engine, migrated_db_url: str, tmp_path: Path) -> None:
    """[kafka.options] reach librdkafka: with the broker's certificate trusted and the
    right login the worker consumes and commits; with a wrong login, or a certificate
    it does not trust, it says so in one line, commits nothing and keeps trying."""
    broker = secured_kafka.broker
    admin = secured_kafka.client_config
    assert admin["security.protocol"] == "SASL_SSL"
    topic, group = works_topic(secured_kafka), secured_kafka.group(WORKER)
    create_topic(admin, topic, partitions=2)
    produce(admin, topic, [work(i) for i in range(50)])
    ws = Workers(tmp_path, {**secured_kafka.settings_env,
                            "SANDCRAWLER_DATABASE_URL": migrated_db_url}, WORKER)
    try:
        said = []
        for options, what in ((secured_options(broker, "wrong"), "Authentication failed"),
                              (secured_options(broker, "s3cret", trust=False),
                               "certificate verify failed")):
            bad = ws.start(env={"SANDCRAWLER_KAFKA_OPTIONS": options})
            bad.wait_until(lambda b=bad: "retrying in the background" in b.stderr, 30,
                           f"the failure said ({what})")
            assert what in bad.stderr, bad.stderr
            assert bad.stop(signal.SIGTERM) == 0, bad.stderr
            assert bad.stderr.count("retrying in the background") == 1, bad.stderr
            said.append(bad.stderr)
            assert committed(admin, group, topic) == {}
            assert rows(engine) == (0, 0)

        right = ws.start(env={"SANDCRAWLER_KAFKA_OPTIONS": secured_options(broker, "s3cret")})
        right.wait_until(lambda: sum(committed(admin, group, topic).values()) == 50, 60,
                         "every record committed")
        assert rows(engine) == (50, 50)
        assert right.stop(signal.SIGTERM) == 0, right.stderr
        assert "Traceback" not in "".join(said) + right.stderr
    finally:
        ws.kill_all()

    # the admin commands take the same settings
    env = {**secured_kafka.settings_env,
           "SANDCRAWLER_KAFKA_OPTIONS": secured_options(broker, "s3cret")}
    res = run_cli(["kafka", "topics", "--create", "--json"], env=env)
    assert res.returncode == 0, res.stderr
    # exit 0: every topic is there now as the registry says (the test's own was already)
    states = [orjson.loads(x)["state"] for x in res.stdout.splitlines()]
    assert "created" in states and set(states) <= {"created", "ok"}, states


def test_broker_restart_under_a_worker_that_publishes(
        kafka_private: KafkaSpace, engine: Engine, migrated_db_url: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The broker goes away while `worker process-pdf` is consuming and publishing
    results: the worker waits for it, and every file gets its result (at least once)
    and its offset committed. (The broker is restarted: one of the test's own.)"""
    from sandcrawler_testkit.kafka_clients import end_offsets
    from sandcrawler_testkit.pdfs import make_pdf

    kafka = kafka_private
    monkeypatch.setenv("SANDCRAWLER_ENV", kafka.env)
    files, results = kafka.topic("pdf-files"), kafka.topic("pdf-results")
    paths = []
    for i in range(40):
        path = tmp_path / f"paper{i}.pdf"
        path.write_bytes(make_pdf([f"paper number {i}, before and after the restart"]))
        paths.append(str(path))
    create_topic(kafka.bootstrap, files, partitions=2)
    create_topic(kafka.bootstrap, results, partitions=2)
    produce(kafka.bootstrap, files, [p.encode() for p in paths[:20]])
    ws = Workers(tmp_path, {**kafka.settings_env, "SANDCRAWLER_DATABASE_URL": migrated_db_url},
                 "process-pdf")
    try:
        w = ws.start("--batch-size", "2")
        w.wait_until(lambda: sum(end_offsets(kafka.bootstrap, results).values()) >= 6, 90,
                     "the first results")
        # away from the stop until the restarted broker answers (seconds of start-up)
        kafka.broker.stop()
        assert refuses(kafka.bootstrap)
        assert w.proc.poll() is None
        kafka.broker.start()
        produce(kafka.bootstrap, files, [p.encode() for p in paths[20:]])
        w.wait_until(lambda: sum(committed(kafka.bootstrap, kafka.group("process-pdf"),
                                           files).values()) == len(paths), 120,
                     "every file committed after the restart")
        assert w.proc.poll() is None, w.stderr  # it rode the outage out
        published = sum(end_offsets(kafka.bootstrap, results).values())
        got = [orjson.loads(m) for m in consume(kafka.bootstrap, results, published)]
        # each file processed once; a file read again around the outage (its commit
        # failed while the broker was away) is found already done: "exists"
        assert sorted(r["path"] for r in got if r["status"] == "success") == sorted(paths)
        assert {r["status"] for r in got} <= {"success", "exists"}
        assert w.stop(signal.SIGTERM) == 0, w.stderr
        assert "Traceback" not in w.stderr
    finally:
        ws.kill_all()
