"""``grobid-serve``'s Prometheus metrics (``GET /metrics``), in a registry of
their own as the workers' are (``pipeline.metrics``): requests by endpoint and
status, their durations, the busy workers, the requests turned away busy
(503), and what the cascade made of each PDF."""

from __future__ import annotations

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    Info,
    ProcessCollector,
    generate_latest,
)

#: request latency buckets, seconds: a citation in milliseconds, a long PDF in a minute
REQUEST_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0,
                   7.5, 10.0, 15.0, 20.0, 30.0, 60.0, 120.0, 300.0)


class ServiceMetrics:
    def __init__(self, *, workers: int, version: str = "") -> None:
        self.registry = r = CollectorRegistry()
        ProcessCollector(registry=r)
        Info("sandcrawler_grobid_serve", "The GROBID-compatible service this process runs.",
             registry=r).info({"version": version})
        self.requests = Counter("sandcrawler_grobid_serve_requests",
                                "Requests answered, by endpoint and HTTP status.",
                                ["endpoint", "status"], registry=r)
        self.seconds = Histogram("sandcrawler_grobid_serve_request_seconds",
                                 "Seconds from a request's arrival to its answer (its upload "
                                 "included), by endpoint.", ["endpoint"],
                                 buckets=REQUEST_BUCKETS, registry=r)
        self.busy = Gauge("sandcrawler_grobid_serve_workers_busy",
                          "Workers processing a request now.", registry=r)
        self.workers = Gauge("sandcrawler_grobid_serve_workers",
                             "Workers in the pool (grobid_serve.concurrency).", registry=r)
        self.workers.set(workers)
        self.rejected = Counter("sandcrawler_grobid_serve_busy_rejections",
                                "Requests answered 503 because every worker was busy, "
                                "by endpoint.", ["endpoint"], registry=r)
        self.extractions = Counter("sandcrawler_grobid_serve_extractions",
                                   "PDFs through the cascade, by its status (success, "
                                   "partial, not-pdf, timeout, ...).", ["status"], registry=r)

    def observe(self, endpoint: str, status: int, seconds: float) -> None:
        self.requests.labels(endpoint, str(status)).inc()
        self.seconds.labels(endpoint).observe(seconds)
        if status == 503:
            self.rejected.labels(endpoint).inc()

    def exposition(self) -> bytes:
        return generate_latest(self.registry)
