"""`sandcrawler worker process-pdf` as a real process against librdkafka's mock cluster."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from sandcrawler.config import load_settings
from sandcrawler.storage import open_pdftable
from sandcrawler.testing.kafka_mock import MockKafka, consume, produce
from sandcrawler.testing.pdfs import make_pdf
from tests.test_worker_kafka import committed, wait_until

pytestmark = pytest.mark.kafka

FILES = "sandcrawler-test.pdf-files"
RESULTS = "sandcrawler-test.pdf-results"


@pytest.fixture
def kafka() -> Iterator[MockKafka]:
    with MockKafka() as cluster:
        yield cluster


def test_worker_processes_records_and_publishes_results(
    kafka: MockKafka, engine, db_url: str, tmp_path: Path,  # type: ignore[no-untyped-def]
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SANDCRAWLER_ENV", "test")  # the worker's table and topic names
    paths = []
    for i in range(5):
        path = tmp_path / f"paper{i}.pdf"
        path.write_bytes(make_pdf([f"paper number {i} in the queue"]))
        paths.append(path)
    html = tmp_path / "page.pdf"
    html.write_bytes(b"<html><body>not a pdf</body></html>")
    records = [str(p).encode() for p in paths] + [orjson.dumps({"path": str(html),
                                                                "name": "crawl/page.pdf"})]
    produce(kafka.bootstrap, FILES, records)

    env = {**os.environ, "SANDCRAWLER_KAFKA_BROKERS": kafka.bootstrap,
           "SANDCRAWLER_ENV": "test", "SANDCRAWLER_DATABASE_URL": db_url}
    err = (tmp_path / "worker.stderr").open("wb")
    proc = subprocess.Popen([sys.executable, "-m", "sandcrawler", "worker", "process-pdf",
                             "--batch-size", "2"], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=err, env=env)
    table = open_pdftable(load_settings())
    try:
        wait_until(lambda: proc.poll() is not None or table.count_rows() == len(records), 90,
                   "all files processed")
        assert proc.poll() is None, (tmp_path / "worker.stderr").read_text()
        # the results topic exists now (it is created by the worker's first write)
        results = consume(kafka.bootstrap, RESULTS, len(records), timeout=60)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        err.close()
    stderr = (tmp_path / "worker.stderr").read_text()
    assert "Traceback" not in stderr
    got = {r["path"]: r for r in map(orjson.loads, results)}
    assert set(got) == {str(p) for p in paths} | {"crawl/page.pdf"}
    assert {r["status"] for p, r in got.items() if p != "crawl/page.pdf"} == {"success"}
    assert got["crawl/page.pdf"]["status"] == "not-pdf"
    assert table.count_rows() == len(records)
    assert "process-pdf: 6 records" in stderr
    # every record's offset was committed, once its result was with the broker
    offsets = committed(kafka.bootstrap, group="sandcrawler-test-process-pdf", topic=FILES)
    assert sum(offsets.values()) == len(records)
