"""`sandcrawler worker match-refs` as a real process on a real Kafka broker, the
database SQLite or PostgreSQL: grobid_refs rows from the topic become citation
rows; a bad message gets its status; an empty catalog is waited out, not
written down as empty-catalog rows."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from sqlalchemy import Engine

from sandcrawler_testkit.kafka_broker import KafkaBroker
from sandcrawler_testkit.kafka_clients import end_offsets, produce
from tests._kafka import Workers, committed, create_topic
from tests.conftest import invoke
from tests.test_match_refs import DOC_UUID, MATCHED, catalog, refs_rows, table

pytestmark = [pytest.mark.kafka, pytest.mark.slow]

TOPIC = "sandcrawler-test.grobid-refs"  # SANDCRAWLER_ENV=test
GROUP = "sandcrawler-test-match-refs"


@pytest.fixture
def workers(tmp_path: Path, kafka: KafkaBroker) -> Iterator[Workers]:
    ws = Workers(tmp_path, {"SANDCRAWLER_KAFKA_BROKERS": kafka.bootstrap,
                            "SANDCRAWLER_ENV": "test"}, "match-refs")
    try:
        yield ws
    finally:
        ws.kill_all()


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
                                             kafka: KafkaBroker, workers: Workers) -> None:
    works = persist_catalog(tmp_path, 40)
    lines, expected = refs_rows(works, citing=10)
    bad = [b"not json", orjson.dumps({"source": "pubmed", "source_id": "1", "refs_json": []})]
    create_topic(kafka.bootstrap, TOPIC)
    w = workers.start("--batch-size", "4")
    produce(kafka.bootstrap, TOPIC, [*lines, *bad])
    want = {c for c, _ in expected}
    w.wait_until(lambda: citing_works(engine) == want, 120, "every work's citation rows")
    ends = {p: o for p, o in end_offsets(kafka.bootstrap, TOPIC).items() if o}
    w.wait_until(lambda: committed(kafka.bootstrap, GROUP, TOPIC) == ends, 60,
                 "offsets committed")
    assert w.stop(signal.SIGTERM) == 0, w.stderr
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
                                           kafka: KafkaBroker, workers: Workers) -> None:
    works = catalog(30)
    lines, expected = refs_rows(works, citing=4, bad=False)
    create_topic(kafka.bootstrap, TOPIC)
    w = workers.start("--batch-size", "10")
    produce(kafka.bootstrap, TOPIC, lines)
    w.wait_until(lambda: "the match index is empty" in w.stderr, 60, "the outage line")
    assert table(engine) == []  # nothing written while there is nothing to match against
    assert committed(kafka.bootstrap, GROUP, TOPIC) == {}
    persist_catalog(tmp_path, 30)  # the same works: the feed fills the index
    want = {c for c, _ in expected}
    w.wait_until(lambda: citing_works(engine) == want, 120, "rows once the catalog is there")
    assert w.stop(signal.SIGTERM) == 0, w.stderr
    assert {s for *_, s, _sc, _r in table(engine)} == {"exact"}
