"""A worker's metrics (issue 17): the Prometheus metrics, the runner's observer
calls, the one-line-then-quiet back-off log, and a real `sandcrawler worker
persist-crossref --metrics-port 0` scraped over HTTP on a real broker and PostgreSQL."""

from __future__ import annotations

import logging
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import urllib.request
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path

import orjson
import pytest
from sqlalchemy import Engine

from sandcrawler.core.errors import ConfigError, DatabaseUnavailable
from sandcrawler.pipeline import Item, Outcome, RecordWorker, Runner
from sandcrawler.pipeline.metrics import WorkerMetrics, assigned_lags, serve_metrics
from sandcrawler.pipeline.sinks import Rejection
from sandcrawler.pipeline.sources import JsonLinesSource
from sandcrawler.version import __version__
from sandcrawler_testkit.kafka_clients import produce
from tests.helpers.kafka import KafkaSpace, Workers, create_topic
from tests.helpers.metrics import Samples, labelled, metrics_url, parse, scrape, value
from tests.helpers.waiting import wait_until

# --- the metrics themselves ---------------------------------------------------------------


def test_counts_latency_and_backoff_are_exposed() -> None:
    m = WorkerMetrics("persist-crossref", group="g", version="1.2.3")
    m.records_in(5)
    m.batch_done({"success": 4, "bad-json": 1}, 0.3)
    m.records_in(2)
    m.batch_done({"success": 2}, 0.02)
    m.retrying("database", 1.0)
    m.retrying("database", 2.0)
    s = parse(m.exposition().decode())
    w = {"worker": "persist-crossref"}
    assert value(s, "sandcrawler_worker_info", **w, group="g", version="1.2.3") == 1
    assert value(s, "sandcrawler_worker_records_in_total", **w) == 7
    assert value(s, "sandcrawler_worker_records_out_total", **w, status="success") == 6
    assert value(s, "sandcrawler_worker_records_out_total", **w, status="bad-json") == 1
    assert value(s, "sandcrawler_worker_batch_seconds_count", **w) == 2
    assert value(s, "sandcrawler_worker_batch_seconds_sum", **w) == pytest.approx(0.32)
    assert value(s, "sandcrawler_worker_batch_seconds_bucket", **w, le="0.05") == 1
    assert value(s, "sandcrawler_worker_backoff", **w) == 1
    assert value(s, "sandcrawler_worker_backoff_seconds", **w) == 2
    assert value(s, "sandcrawler_worker_retries_total", **w, service="database") == 2
    m.recovered()
    s = parse(m.exposition().decode())
    assert value(s, "sandcrawler_worker_backoff", **w) == 0
    assert value(s, "sandcrawler_worker_backoff_seconds", **w) == 0


def test_each_worker_metrics_has_its_own_registry() -> None:
    a, b = WorkerMetrics("a"), WorkerMetrics("b")  # the global registry would refuse a second
    a.records_in(3)
    assert value(parse(a.exposition().decode()),
                 "sandcrawler_worker_records_in_total", worker="a") == 3
    assert value(parse(b.exposition().decode()),
                 "sandcrawler_worker_records_in_total", worker="b") == 0
    assert b"worker=\"a\"" not in b.exposition()


def stats(partitions: Mapping[str, tuple[bool, int]], topic: str = "t") -> str:
    """librdkafka's statistics JSON, reduced to what the lag is read from:
    partition -> (desired, consumer_lag); partition -1 is always there, as in librdkafka's."""
    parts = {p: {"partition": int(p), "desired": desired, "consumer_lag": lag}
             for p, (desired, lag) in {**partitions, "-1": (False, -1)}.items()}
    return orjson.dumps({"name": "rdkafka#consumer-1", "type": "consumer",
                         "topics": {topic: {"topic": topic, "partitions": parts}}}).decode()


def lags(m: WorkerMetrics) -> dict[str, float]:
    s = parse(m.exposition().decode())
    return {dict(labels)["partition"]: v for (n, labels), v in s.items()
            if n == "sandcrawler_worker_consumer_lag"}


def test_consumer_lag_of_assigned_partitions_only() -> None:
    m = WorkerMetrics("w")
    m.kafka_stats(stats({"0": (True, 12), "1": (True, -1), "2": (False, 7), "3": (True, 0)}))
    # -1: librdkafka's internal partition; lag -1: not known yet; not desired: not ours
    assert lags(m) == {"0": 12, "3": 0}
    m.kafka_stats(stats({"0": (True, 3), "1": (True, 5), "2": (False, 7), "3": (True, -1)}))
    assert lags(m) == {"0": 3, "1": 5, "3": 0}  # an unknown lag keeps the last one known
    # a rebalance took 0 and 3 away: their lag disappears rather than going stale
    m.kafka_stats(stats({"0": (False, 3), "1": (True, 0), "3": (False, 0)}))
    assert lags(m) == {"1": 0}
    s = parse(m.exposition().decode())
    assert labelled(s, "sandcrawler_worker_consumer_lag") == [
        {"worker": "w", "topic": "t", "partition": "1"}]


def test_lag_of_a_partition_never_committed_is_its_log() -> None:
    """librdkafka says -1 until the group commits on a partition; a new group reads
    from the log's start (auto.offset.reset=earliest), so the lag is the log's
    length, and an empty partition is 0, not unknown for ever (real statistics
    of a new group read off Kafka 4.1.1 with librdkafka, reduced)."""
    never = -1001  # librdkafka's RD_KAFKA_OFFSET_INVALID

    def part(n: int, lo: int, hi: int, ls: int, committed: int, lag: int) -> dict[str, object]:
        return {"partition": n, "desired": True, "lo_offset": lo, "hi_offset": hi,
                "ls_offset": ls, "committed_offset": committed, "consumer_lag": lag}

    topic = {"topic": "t", "partitions": {
        "0": part(0, 0, 10, 10, never, -1),        # records, nothing committed yet
        "1": part(1, 40, 45, 43, never, -1),       # retention moved the start; an open txn
        "2": part(2, 0, 0, 0, never, -1),          # empty
        "3": part(3, 0, 9, 9, 4, 5),               # committed: librdkafka's own figure
        "4": part(4, never, never, never, never, -1),  # watermarks not fetched yet
        "-1": {"partition": -1, "desired": False, "consumer_lag": -1}}}
    got = assigned_lags({"topics": {"t": topic}})
    assert got == {("t", "0"): 10, ("t", "1"): 3, ("t", "2"): 0, ("t", "3"): 5, ("t", "4"): None}


def test_unreadable_statistics_change_nothing() -> None:
    m = WorkerMetrics("w")
    m.kafka_stats(stats({"0": (True, 4)}))
    for junk in ("not json", "[]", '{"topics": {"t": {"partitions": {"0": 5}}}}', "null"):
        m.kafka_stats(junk)
    assert lags(m) == {"0": 4}
    assert assigned_lags({}) == {}


def test_consumer_config_turns_statistics_on_unless_told() -> None:
    m = WorkerMetrics("w")
    config = m.consumer_config({"group.id": "g"})
    assert config["statistics.interval.ms"] == 5000 and config["stats_cb"] == m.kafka_stats
    own = m.consumer_config({"group.id": "g", "statistics.interval.ms": 500})
    assert own["statistics.interval.ms"] == 500  # the [kafka] options win


def test_served_over_http_on_any_free_port() -> None:
    m = WorkerMetrics("w")
    m.records_in(1)
    server = serve_metrics(m, "127.0.0.1", 0)
    try:
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/metrics", server.url)
        assert server.server.server_port != 0
        s = scrape(server.url)
        assert value(s, "sandcrawler_worker_records_in_total", worker="w") == 1
        assert labelled(s, "process_open_fds")  # the process's own, where /proc exists
    finally:
        server.close()
    with pytest.raises(OSError):
        urllib.request.urlopen(server.url, timeout=2)


def test_a_port_in_use_is_one_config_error() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(ConfigError) as e:
            serve_metrics(WorkerMetrics("w"), "127.0.0.1", port)
    assert str(e.value) == (
        f"cannot serve metrics on 127.0.0.1:{port}: in use (setting worker.metrics_port, "
        "--metrics-port; 0 takes any free port)")


# --- the runner's observer calls ------------------------------------------------------------


class Echo(RecordWorker):
    """'bad' is a record error; every other line is a success."""

    def process(self, item: Item) -> Outcome:
        if item.data == b"bad":
            return Outcome(item.where, "bad-thing", kind="error", error="bad")
        return Outcome(item.where, "success", output=item.data.decode())


class DownFor(Echo):
    """Raises DatabaseUnavailable for the first ``state["failures"]`` batches, and
    notes the back-off gauge at each attempt (what a scrape would have seen then)."""

    def __init__(self, state: dict, metrics: WorkerMetrics) -> None:
        self.state, self.metrics = state, metrics

    def process_batch(self, items: list[Item]) -> list[Outcome]:
        self.state["gauge"].append(gauge(self.metrics, "sandcrawler_worker_backoff"))
        if self.state["failures"] > 0:
            self.state["failures"] -= 1
            raise DatabaseUnavailable("database db.internal unavailable: connection refused")
        return super().process_batch(items)


def gauge(m: WorkerMetrics, name: str) -> float | None:
    return value(parse(m.exposition().decode()), name, worker=m.worker)


class Keep:
    def __init__(self) -> None:
        self.outputs: list = []

    def write(self, outcomes: list[Outcome]) -> list[Rejection]:
        self.outputs += [o.output for o in outcomes if o.output is not None]
        return []

    def close(self) -> None:
        pass


def lines_source(tmp_path: Path, lines: list[str]) -> JsonLinesSource:
    path = tmp_path / "in.jsonl"
    path.write_text("".join(f"{line}\n" for line in lines))
    return JsonLinesSource(path)


class Recorder:
    """A RunObserver that keeps every call."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []
        self.lock = threading.Lock()

    def records_in(self, count: int) -> None:
        self.calls.append(("in", count))

    def batch_done(self, statuses: Mapping[str, int], seconds: float) -> None:
        assert seconds >= 0
        self.calls.append(("done", dict(statuses)))

    def retrying(self, service: str, delay: float) -> None:
        self.calls.append(("retrying", service, delay))

    def recovered(self) -> None:
        self.calls.append(("recovered",))


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_runner_tells_its_observer_each_batch(tmp_path: Path, jobs: int) -> None:
    lines = ["a", "bad", "c", "d", "bad", "f", "g"]
    rec = Recorder()
    summary = Runner(lines_source(tmp_path, lines), Echo, Keep(), batch_size=3, jobs=jobs,
                     progress=False, report=lambda _: None, observer=rec).run()
    # with -j the runner reads ahead, so reads and bookings interleave differently;
    # batches are booked in the order they were read either way
    assert [c for c in rec.calls if c[0] == "in"] == [("in", 3), ("in", 3), ("in", 1)]
    assert [c for c in rec.calls if c[0] == "done"] == [
        ("done", {"success": 2, "bad-thing": 1}), ("done", {"success": 2, "bad-thing": 1}),
        ("done", {"success": 1})]
    assert summary.counts == Counter({"success": 5, "bad-thing": 2})


def test_backoff_goes_up_then_down_and_is_said_in_two_lines(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    metrics = WorkerMetrics("persist-crossref")
    state: dict = {"failures": 6, "gauge": []}
    messages: list[str] = []
    sink = Keep()
    with caplog.at_level(logging.DEBUG, logger="sandcrawler.runner"):
        summary = Runner(lines_source(tmp_path, ["a", "b", "bad"]),
                         lambda: DownFor(state, metrics), sink, name="persist-crossref",
                         progress=False, report=messages.append, observer=metrics,
                         on_infrastructure_error="retry", max_backoff=0.01).run()
    assert sink.outputs == ["a", "b"] and summary.failure is None
    # not backing off at the first attempt, backing off at each retry, not after
    assert state["gauge"] == [0, 1, 1, 1, 1, 1, 1]
    assert gauge(metrics, "sandcrawler_worker_backoff") == 0
    assert gauge(metrics, "sandcrawler_worker_backoff_seconds") == 0
    s = parse(metrics.exposition().decode())
    w = {"worker": "persist-crossref"}
    assert value(s, "sandcrawler_worker_retries_total", **w, service="database") == 6
    assert value(s, "sandcrawler_worker_records_out_total", **w, status="success") == 2
    assert value(s, "sandcrawler_worker_records_out_total", **w, status="bad-thing") == 1
    # six failed attempts: one line when the outage begins, one when it ends...
    assert messages[0] == (
        "persist-crossref: database db.internal unavailable: connection refused; retrying in "
        "0.01s, then quietly with back-off (at most 0.01s apart) until it answers")
    assert re.fullmatch(r"persist-crossref: database reachable again after \d+s \(6 retries\)",
                        messages[1])
    assert messages[2:] == ["line 3: bad-thing: bad"]
    # ...and the five retries between at debug level
    debug = [r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG]
    assert sum("retrying in 0.01s" in m for m in debug) == 5


def test_a_stop_during_backoff_ends_it(tmp_path: Path) -> None:
    metrics = WorkerMetrics("w")
    stop = threading.Event()
    backing_off: list[bool] = []

    def stop_once_backing_off() -> None:
        # the stop comes once the runner is in its back-off (not after a fixed delay)
        try:
            backing_off.append(bool(wait_until(
                lambda: gauge(metrics, "sandcrawler_worker_backoff") == 1, 30, "the back-off")))
        finally:
            stop.set()  # in any case: the runner would retry for ever

    stopper = threading.Thread(target=stop_once_backing_off)
    stopper.start()
    state: dict = {"failures": 10**6, "gauge": []}
    try:
        summary = Runner(lines_source(tmp_path, ["a"]), lambda: DownFor(state, metrics), Keep(),
                         progress=False, report=lambda _: None, observer=metrics, stop=stop,
                         on_infrastructure_error="retry").run()
    finally:
        stop.set()
        stopper.join()
    assert backing_off == [True]
    assert summary.abandoned
    assert gauge(metrics, "sandcrawler_worker_backoff") == 0


def test_without_an_observer_nothing_is_kept(tmp_path: Path) -> None:
    runner = Runner(lines_source(tmp_path, ["a", "b"]), Echo, Keep(), batch_size=1,
                    progress=False, report=lambda _: None)
    runner.run()
    assert not runner._read_at


# --- a real worker, scraped ---------------------------------------------------------------

INDEXED = {"date-time": "2021-05-10T22:08:45Z"}


@pytest.fixture
def workers(tmp_path: Path, kafka: KafkaSpace) -> Iterator[Workers]:
    ws = Workers(tmp_path, {**kafka.settings_env,
                            # the lag is read from librdkafka's statistics: every 0.5 s
                            # rather than the default 5 s, so the test need not wait
                            "SANDCRAWLER_KAFKA_OPTIONS": '{"statistics.interval.ms": 500}'},
                 "persist-crossref")
    try:
        yield ws
    finally:
        ws.kill_all()


@pytest.mark.kafka
@pytest.mark.parametrize("db_backend", ["postgresql"], indirect=True)
def test_a_worker_serves_its_metrics(kafka: KafkaSpace, workers: Workers, engine: Engine,
                                     migrated_db_url: str) -> None:
    partitions = 4
    topic, group = kafka.topic("api-crossref", prefix="fatcat"), kafka.group("persist-crossref")
    create_topic(kafka.bootstrap, topic, partitions)
    w = workers.start("--metrics-port", "0", "--batch-size", "25",
                      env={"SANDCRAWLER_DATABASE_URL": migrated_db_url})
    url = w.wait_until(lambda: metrics_url(w.stderr), 30, "the start-up line's metrics URL")
    assert re.fullmatch(r"http://127\.0\.0\.1:[1-9]\d*/metrics", url)
    assert f"persist-crossref: consuming {topic} as {group}" in w.stderr
    # served before anything is read
    s = scrape(url)
    worker = {"worker": "persist-crossref"}
    assert value(s, "sandcrawler_worker_records_in_total", **worker) == 0

    dois = [f"10.1234/M.{i}" for i in range(200)]
    works = [orjson.dumps({"DOI": doi, "indexed": INDEXED, "reference": []}) for doi in dois]
    bad = [b"not json {"] * 3 + [orjson.dumps({"indexed": INDEXED, "reference": []})] * 2
    # keyed as the real producers key them (by DOI), so the records are spread over
    # the partitions the same way every run; unkeyed, librdkafka's sticky partitioner
    # put all of them in one partition when the machine was quick, in several when not
    keys = [doi.encode() for doi in dois] + [f"bad-{i}".encode() for i in range(len(bad))]
    placed = produce(kafka.bootstrap, topic, works + bad, keys=keys)
    assert {partition for partition, _ in placed} == set(range(partitions))
    expected = {"success": 200, "bad-json": 3, "missing-doi": 2}

    def settled() -> Samples | None:
        s = scrape(url)
        out = {dict(labels)["status"]: v for (n, labels), v in s.items()
               if n == "sandcrawler_worker_records_out_total"}
        lag = {dict(labels)["partition"]: v for (n, labels), v in s.items()
               if n == "sandcrawler_worker_consumer_lag"}
        done = out == expected and len(lag) == partitions and set(lag.values()) == {0}
        return s if done else None

    s = w.wait_until(settled, 60, f"records out by status {expected} and no lag left")
    assert value(s, "sandcrawler_worker_records_in_total", **worker) == len(works + bad)
    assert (value(s, "sandcrawler_worker_batch_seconds_count", **worker) or 0) > 0
    assert sorted(labelled(s, "sandcrawler_worker_consumer_lag"),
                  key=lambda d: d["partition"]) == [
        {**worker, "topic": topic, "partition": str(p)} for p in range(partitions)]
    assert value(s, "sandcrawler_worker_backoff", **worker) == 0
    assert value(s, "sandcrawler_worker_info", **worker, group=group, version=__version__) == 1

    assert w.stop(signal.SIGTERM) == 0, w.stderr
    assert "Traceback" not in w.stderr
    with pytest.raises(OSError):  # the server went with the worker
        urllib.request.urlopen(url, timeout=2)


@pytest.mark.parametrize("how", ["option", "setting"])
def test_a_metrics_port_in_use_stops_the_worker_at_once(tmp_path: Path, how: str) -> None:
    with socket.socket() as taken, socket.socket() as no_broker:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        no_broker.bind(("127.0.0.1", 0))  # a broker address nobody answers: never reached
        broker = f"127.0.0.1:{no_broker.getsockname()[1]}"
        env = {**os.environ, "SANDCRAWLER_KAFKA_BROKERS": broker,
               "SANDCRAWLER_DATA_DIR": str(tmp_path / "data"),
               "SANDCRAWLER_DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}"}
        args = ["--metrics-port", str(port)] if how == "option" else []
        if how == "setting":
            env["SANDCRAWLER_WORKER_METRICS_PORT"] = str(port)
        result = subprocess.run(
            [sys.executable, "-m", "sandcrawler", "worker", "persist-crossref", *args],
            stdin=subprocess.DEVNULL, capture_output=True, timeout=60, env=env)
    assert result.returncode == 1, result.stderr
    assert result.stderr.decode().splitlines() == [
        f"Error: cannot serve metrics on 127.0.0.1:{port}: in use (setting "
        "worker.metrics_port, --metrics-port; 0 takes any free port)"]
