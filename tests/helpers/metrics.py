"""Helpers of the metrics tests: scrape a worker's ``/metrics`` and read its samples."""

from __future__ import annotations

import re
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

__all__ = ["Samples", "labelled", "metrics_url", "parse", "scrape", "value"]

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def parse(text: str) -> Samples:
    """The samples of an exposition: (name, labels) -> value."""
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def value(samples: Samples, name: str, **labels: str) -> float | None:
    return samples.get((name, frozenset(labels.items())))


def labelled(samples: Samples, name: str) -> list[dict[str, str]]:
    """The label sets of every sample named ``name``."""
    return [dict(labels) for (n, labels) in samples if n == name]


def scrape(url: str) -> Samples:
    with urllib.request.urlopen(url, timeout=10) as resp:
        assert resp.status == 200
        assert resp.headers["Content-Type"].startswith("text/plain")
        return parse(resp.read().decode())


def metrics_url(stderr: str) -> str | None:
    """The URL a worker's start-up line says its metrics are on."""
    found = re.search(r"; metrics on (http://\S+/metrics)", stderr)
    return found.group(1) if found else None
