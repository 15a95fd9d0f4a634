"""A worker process's metrics, in the Prometheus exposition format.

``WorkerMetrics`` is the runner's observer (``pipeline.observer.RunObserver``) and
reads librdkafka's statistics for the consumer lag; ``serve_metrics`` answers
``GET /metrics`` from a thread of the process. Each ``WorkerMetrics`` has a
registry of its own rather than the client library's global one, so a test can
build several and a process exposes only what it measures.
"""

from __future__ import annotations

import errno
import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from wsgiref.simple_server import WSGIServer

import orjson
from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    Info,
    ProcessCollector,
    generate_latest,
    start_http_server,
)

from sandcrawler.core.errors import ConfigError

log = logging.getLogger("sandcrawler.metrics")

#: batch latency buckets, seconds: a persist batch takes well under a second, an
#: ingest batch (a WARC file of crawls) minutes, an outage's back-off up to an hour
BATCH_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
                 600.0, 1800.0, 3600.0)
#: how often librdkafka reports its statistics (and so the lag), unless the
#: ``[kafka] options`` say otherwise: the lag changes by batches, not by the second
STATISTICS_INTERVAL_MS = 5000


class WorkerMetrics:
    """The metrics of one worker: records in and out, batch latency, back-off,
    consumer lag per partition."""

    def __init__(self, worker: str, *, group: str = "", version: str = "") -> None:
        self.worker = worker
        self.registry = CollectorRegistry()
        # CPU, memory and open files of this process, read from /proc (Linux only;
        # elsewhere the collector exposes nothing)
        ProcessCollector(registry=self.registry)
        r = self.registry
        Info("sandcrawler_worker", "The worker this process runs.",
             registry=r).info({"worker": worker, "group": group, "version": version})

        def own(kind: Any, name: str, doc: str, **kwargs: Any) -> Any:
            """A metric of this worker alone: labelled with its name once, here."""
            return kind(name, doc, ["worker"], registry=r, **kwargs).labels(worker)

        self._in = own(Counter, "sandcrawler_worker_records_in",
                       "Records read from the topics.")
        self._batch = own(Histogram, "sandcrawler_worker_batch_seconds",
                          "Seconds from reading a batch to acking it (processing, writing, "
                          "and any back-off between).", buckets=BATCH_BUCKETS)
        self._backoff = own(Gauge, "sandcrawler_worker_backoff",
                            "1 while a service is being waited out (back-off), else 0.")
        self._backoff_seconds = own(Gauge, "sandcrawler_worker_backoff_seconds",
                                    "The current back-off wait, seconds (0 when none).")
        # labelled per observation as well: by status, service, partition
        self._out = Counter("sandcrawler_worker_records_out",
                            "Records done (durable and acked), by final status.",
                            ["worker", "status"], registry=r)
        self._retries = Counter("sandcrawler_worker_retries",
                                "Attempts retried because a service failed, by service.",
                                ["worker", "service"], registry=r)
        self._lag = Gauge("sandcrawler_worker_consumer_lag",
                          "Messages behind the end of each assigned partition (from the "
                          "group's committed offset; from the log's start where the "
                          "group has committed nothing yet).",
                          ["worker", "topic", "partition"], registry=r)
        self._lag_lock = threading.Lock()
        self._lag_shown: set[tuple[str, str]] = set()

    # the runner's observer ------------------------------------------------------------

    def records_in(self, count: int) -> None:
        self._in.inc(count)

    def batch_done(self, statuses: Mapping[str, int], seconds: float) -> None:
        for status, count in statuses.items():
            self._out.labels(self.worker, status).inc(count)
        self._batch.observe(seconds)

    def retrying(self, service: str, delay: float) -> None:
        self._retries.labels(self.worker, service).inc()
        self._backoff.set(1)
        self._backoff_seconds.set(delay)

    def recovered(self) -> None:
        self._backoff.set(0)
        self._backoff_seconds.set(0)

    # librdkafka ---------------------------------------------------------------------------

    def consumer_config(self, config: dict[str, Any]) -> dict[str, Any]:
        """``config`` with librdkafka's statistics turned on and read by this object."""
        return {"statistics.interval.ms": STATISTICS_INTERVAL_MS, **config,
                "stats_cb": self.kafka_stats}

    def kafka_stats(self, stats_json: str) -> None:
        """librdkafka's statistics (its ``stats_cb``, called from the consumer's poll):
        the lag of each partition assigned to this member. A partition that is no
        longer assigned disappears, so a rebalance does not leave stale lag behind."""
        try:
            stats = orjson.loads(stats_json)
            lags = assigned_lags(stats)
        except (orjson.JSONDecodeError, AttributeError, TypeError, ValueError) as e:
            # a metric must never stop the worker; librdkafka's format is its own
            log.debug("unreadable librdkafka statistics: %s", e)
            return
        with self._lag_lock:
            for key in self._lag_shown - lags.keys():
                self._lag.remove(self.worker, *key)
            self._lag_shown &= lags.keys()
            # an assigned partition whose lag is not known now keeps its last value
            for key, lag in lags.items():
                if lag is not None:
                    self._lag.labels(self.worker, *key).set(lag)
                    self._lag_shown.add(key)

    # exposition ---------------------------------------------------------------------------

    def exposition(self) -> bytes:
        return generate_latest(self.registry)


def assigned_lags(stats: dict[str, Any]) -> dict[tuple[str, str], int | None]:
    """(topic, partition) -> lag of each partition librdkafka's statistics say is
    assigned ("desired") to this consumer; None where the lag is not known yet
    (no watermarks fetched). Partition -1 is librdkafka's internal partition of
    unassigned messages, never a real one."""
    out: dict[tuple[str, str], int | None] = {}
    for topic, t in (stats.get("topics") or {}).items():
        for partition, p in (t.get("partitions") or {}).items():
            if str(partition) == "-1" or not p.get("desired"):
                continue
            out[(topic, str(partition))] = _lag(p)
    return out


def _offset(p: dict[str, Any], name: str) -> int | None:
    value = p.get(name)
    return value if isinstance(value, int) and value >= 0 else None


def _lag(p: dict[str, Any]) -> int | None:
    """librdkafka's consumer_lag counts from the group's committed offset, and is
    -1 until the group has committed there. A partition never committed (a new
    group, or one that has had no records yet) is read from the start of its log
    (auto.offset.reset=earliest), so its lag is the log's length: an idle empty
    partition is 0 rather than unknown for ever, and a new group's backlog shows
    before its first commit."""
    lag = _offset(p, "consumer_lag")
    if lag is not None or _offset(p, "committed_offset") is not None:
        return lag
    # the end librdkafka measures to: the last stable offset (isolation.level
    # read_committed, its default), else the high watermark
    end, start = _offset(p, "ls_offset"), _offset(p, "lo_offset")
    end = end if end is not None else _offset(p, "hi_offset")
    return end - start if end is not None and start is not None and end >= start else None


@dataclass
class MetricsServer:
    """The HTTP server answering ``GET /metrics`` in a thread of this process."""

    server: WSGIServer
    thread: threading.Thread

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        # an IP socket's host is a str (the type allows bytes, for AF_UNIX)
        assert isinstance(host, str)
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{port}/metrics"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


def serve_metrics(metrics: WorkerMetrics, address: str, port: int) -> MetricsServer:
    """Serve ``metrics`` on ``address:port`` (0: any free port) from a thread.
    A port in use or an address that is not this host's is a ConfigError (one
    line, before the worker reads anything)."""
    try:
        server, thread = start_http_server(port, addr=address, registry=metrics.registry)
    except OSError as e:
        why = "in use" if e.errno == errno.EADDRINUSE else (e.strerror or str(e))
        raise ConfigError(
            f"cannot serve metrics on {address}:{port}: {why} (setting worker.metrics_port, "
            "--metrics-port; 0 takes any free port)") from None
    return MetricsServer(server, thread)
