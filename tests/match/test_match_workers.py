"""`sandcrawler worker match-refs` as a real process on a real Kafka broker, the
database SQLite or PostgreSQL: grobid_refs rows from the topic become citation
rows; a bad message gets its status; an empty catalog is waited out, not
written down as empty-catalog rows."""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from pathlib import Path

import orjson
import pytest
from sqlalchemy import Engine

from sandcrawler_testkit.kafka_clients import end_offsets, produce
from tests.helpers.cli import invoke
from tests.helpers.kafka import KafkaSpace, WorkerProcess, Workers, committed, create_topic
from tests.match.test_match_refs import DOC_UUID, MATCHED, catalog, refs_rows, table

pytestmark = [pytest.mark.kafka, pytest.mark.slow]

WORKER = "match-refs"


@pytest.fixture
def workers(tmp_path: Path, kafka: KafkaSpace) -> Iterator[Workers]:
    with Workers(tmp_path, kafka.settings_env, WORKER) as ws:
        yield ws


def persist_catalog(tmp_path: Path, n: int) -> list[dict[str, object]]:
    works = catalog(n)
    path = tmp_path / "works.jsonl"
    path.write_bytes(b"".join(orjson.dumps(w) + b"\n" for w in works))
    result = invoke(["persist", "crossref", str(path)])  # the index is fed as it writes
    assert result.exit_code == 0, result.stderr
    return works


def citing_works(engine: Engine) -> set[str]:
    return {c for c, *_ in table(engine)}


def test_worker_resolves_rows_from_the_topic(engine: Engine, tmp_path: Path,
                                             kafka: KafkaSpace, workers: Workers) -> None:
    topic, group = kafka.topic("grobid-refs"), kafka.group(WORKER)
    works = persist_catalog(tmp_path, 40)
    lines, expected = refs_rows(works, citing=10)
    bad = [b"not json", orjson.dumps({"source": "pubmed", "source_id": "1", "refs_json": []})]
    want = {c for c, _ in expected}
    w = run_until_resolved(workers, kafka, topic, group, [*lines, *bad],
                           lambda: citing_works(engine) == want)
    rows = table(engine)
    assert [(c, i) for c, i, *_ in rows] == sorted(expected)
    for c, i, _key, doi, status, *_ in rows:
        if expected[(c, i)] is not None:
            assert (doi, status) == (expected[(c, i)], "exact")
        else:
            assert doi is None and status not in MATCHED
    assert f"uuid:{DOC_UUID}" in want
    assert ": bad-json: " in w.stderr
    assert "bad-row: grobid_refs source 'pubmed' names no citing work" in w.stderr


def test_worker_waits_out_an_empty_catalog(engine: Engine, tmp_path: Path,
                                           kafka: KafkaSpace, workers: Workers) -> None:
    topic, group = kafka.topic("grobid-refs"), kafka.group(WORKER)
    works = catalog(30)
    lines, expected = refs_rows(works, citing=4, bad=False)
    create_topic(kafka.bootstrap, topic)
    w = workers.start("--batch-size", "10")
    produce(kafka.bootstrap, topic, lines)
    w.wait_until(lambda: "the match index is empty" in w.stderr, 60, "the outage line")
    assert table(engine) == []  # nothing written while there is nothing to match against
    assert committed(kafka.bootstrap, group, topic) == {}
    persist_catalog(tmp_path, 30)  # the same works: the feed fills the index
    want = {c for c, _ in expected}
    w.wait_until(lambda: citing_works(engine) == want, 120, "rows once the catalog is there")
    assert w.stop(signal.SIGTERM) == 0, w.stderr
    assert {s for *_, s, _sc, _r in table(engine)} == {"exact"}


def run_until_resolved(workers: Workers, kafka: KafkaSpace, topic: str, group: str,
                       records: list[bytes], resolved: Callable[[], bool]) -> WorkerProcess:
    """A ``match-refs`` worker fed ``records`` on ``topic``: waits until ``resolved()``
    and every offset is committed, then stops it with SIGTERM (exit 0)."""
    create_topic(kafka.bootstrap, topic)
    w = workers.start("--batch-size", "4")
    produce(kafka.bootstrap, topic, records)
    w.wait_until(resolved, 120, "every work's citation rows")
    ends = {p: o for p, o in end_offsets(kafka.bootstrap, topic).items() if o}
    w.wait_until(lambda: committed(kafka.bootstrap, group, topic) == ends, 60,
                 "offsets committed")
    assert w.stop(signal.SIGTERM) == 0, w.stderr
    return w
