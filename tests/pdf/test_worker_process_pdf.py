"""`sandcrawler worker process-pdf` as a real process against a real Kafka broker."""

from __future__ import annotations

import hashlib
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from sandcrawler.app.services import Services
from sandcrawler.app.settings import load_settings
from sandcrawler.web.archive.cdx import parse_cdx_line
from sandcrawler_testkit.grobid_server import FakeGrobid
from sandcrawler_testkit.http_files import FileServer
from sandcrawler_testkit.kafka_clients import consume, produce
from sandcrawler_testkit.pdfs import make_pdf
from sandcrawler_testkit.warcs import Capture, write_warc
from tests.helpers.cli import invoke
from tests.helpers.kafka import KafkaSpace, committed, wait_until
from tests.helpers.paths import FIXTURES

pytestmark = [pytest.mark.slow, pytest.mark.kafka]

#: the worker's topics, in the test's env (``KafkaSpace.topic``)
FILES = "pdf-files"
RESULTS = "pdf-results"


def run_worker(kafka: KafkaSpace, db_url: str, tmp_path: Path, *, rows: int, results: int,
               args: tuple[str, ...] = (), topic: str = RESULTS) -> tuple[list[bytes], str]:
    """Run the worker until the PDF table has ``rows`` rows, read ``results`` results
    (of ``topic``), stop it with SIGTERM (exit 0 expected); (results, stderr)."""
    env = {**os.environ, **kafka.settings_env, "SANDCRAWLER_DATABASE_URL": db_url}
    err = (tmp_path / "worker.stderr").open("wb")
    proc = subprocess.Popen([sys.executable, "-m", "sandcrawler", "worker", "process-pdf",
                             "--batch-size", "2", *args], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=err, env=env)
    table = Services(load_settings()).pdftable
    try:
        wait_until(lambda: proc.poll() is not None or table.count_rows() == rows, 90,
                   "all files processed")
        assert proc.poll() is None, (tmp_path / "worker.stderr").read_text()
        try:
            got = consume(kafka.bootstrap, kafka.topic(topic), results, timeout=60)
        except RuntimeError as exc:
            raise AssertionError(f"{exc}; the worker said:\n"
                                 f"{(tmp_path / 'worker.stderr').read_text()}") from exc
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        err.close()
    stderr = (tmp_path / "worker.stderr").read_text()
    assert "Traceback" not in stderr
    return got, stderr


def test_worker_processes_records_and_publishes_results(
    kafka: KafkaSpace, engine, migrated_db_url: str,  # type: ignore[no-untyped-def]
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SANDCRAWLER_ENV", kafka.env)  # the worker's table and topic names
    paths = []
    for i in range(5):
        path = tmp_path / f"paper{i}.pdf"
        path.write_bytes(make_pdf([f"paper number {i} in the queue"]))
        paths.append(path)
    html = tmp_path / "page.pdf"
    html.write_bytes(b"<html><body>not a pdf</body></html>")
    records = [str(p).encode() for p in paths] + [orjson.dumps({"path": str(html),
                                                                "name": "crawl/page.pdf"})]
    produce(kafka.bootstrap, kafka.topic(FILES), records)

    results, stderr = run_worker(kafka, migrated_db_url, tmp_path, rows=len(records),
                                 results=len(records))
    table = Services(load_settings()).pdftable
    got = {r["path"]: r for r in map(orjson.loads, results)}
    assert set(got) == {str(p) for p in paths} | {"crawl/page.pdf"}
    assert {r["status"] for p, r in got.items() if p != "crawl/page.pdf"} == {"success"}
    assert got["crawl/page.pdf"]["status"] == "not-pdf"
    assert table.count_rows() == len(records)
    assert "process-pdf: 6 records" in stderr
    # every record's offset was committed, once its result was with the broker
    offsets = committed(kafka.bootstrap, group=kafka.group("process-pdf"),
                        topic=kafka.topic(FILES))
    assert sum(offsets.values()) == len(records)


def test_worker_fetches_urls_warc_captures_and_stored_files(
    kafka: KafkaSpace, engine, migrated_db_url: str,  # type: ignore[no-untyped-def]
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SANDCRAWLER_ENV", kafka.env)
    files = kafka.topic(FILES)
    # the loopback server stands for an intranet the operator allows
    monkeypatch.setenv("SANDCRAWLER_HTTP_ALLOW_NETWORKS", '["127.0.0.0/8"]')
    web = tmp_path / "web"
    web.mkdir()
    by_url, in_warc, stored = (make_pdf([f"{what} paper"]) for what in ("fetched", "archived",
                                                                          "stored"))
    (web / "paper.pdf").write_bytes(by_url)
    line = write_warc(web / "c.warc.gz", [Capture("http://example.org/a.pdf", in_warc)])[0]
    cdx = parse_cdx_line(line)
    (tmp_path / "stored.pdf").write_bytes(stored)
    assert invoke(["process", str(tmp_path / "stored.pdf")]).exit_code == 0

    with FileServer(web) as server:
        base = server.url
        records = [
            {"url": f"{server.url}/paper.pdf"},
            {"warc_path": "c.warc.gz", "warc_offset": cdx.warc_offset,
             "warc_csize": cdx.warc_csize, "sha1": cdx.sha1hex, "name": "archived"},
            {"sha1": hashlib.sha1(stored).hexdigest(), "name": "stored"},
            {"url": f"{server.url}/missing.pdf"},
            b"{not json",
            # a path of bytes that are not UTF-8: its result once stopped every worker
            # that read it (the name could not be written as JSON)
            b"/no/such/dir/\xff.pdf",
        ]
        produce(kafka.bootstrap, files, [r if isinstance(r, bytes) else orjson.dumps(r)
                                         for r in records])
        results, stderr = run_worker(kafka, migrated_db_url, tmp_path, rows=3, results=6,
                                     args=("--source", server.url, "--force"))
    got = {r["path"]: r for r in map(orjson.loads, results)}
    [poison] = [p for p in got if p.startswith(f"{files}[")]  # named by where it is
    assert re.fullmatch(rf"{re.escape(files)}\[\d+\]@\d+", poison)
    assert {p: r["status"] for p, r in got.items()} == {
        f"{base}/paper.pdf": "success", "archived": "success", "stored": "success",
        # a file that cannot be fetched, and a record that is not JSON, have results too
        f"{base}/missing.pdf": "http-error", poison: "bad-json",
        "/no/such/dir/\\xff.pdf": "unreadable"}
    assert got["archived"]["sha1hex"] == hashlib.sha1(in_warc).hexdigest()
    assert "404" in got[f"{base}/missing.pdf"]["error"]
    assert "http-error" in stderr and "missing.pdf" in stderr
    offsets = committed(kafka.bootstrap, group=kafka.group("process-pdf"), topic=files)
    assert sum(offsets.values()) == len(records)


def test_worker_publishes_the_original_systems_messages(
    kafka: KafkaSpace, engine, migrated_db_url: str,  # type: ignore[no-untyped-def]
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """kafka.message_format original: GROBID output and PDF text, keyed by sha1, in
    the original system's shapes (docs/original-messages.md)."""
    tei = FIXTURES / "grobid-0.4.1-sample2.tei.fulltext.xml"
    if not tei.is_file():
        pytest.skip("../shared/data not present")
    monkeypatch.setenv("SANDCRAWLER_ENV", kafka.env)
    monkeypatch.setenv("SANDCRAWLER_KAFKA_MESSAGE_FORMAT", "original")
    pdfs = {f"p{i}": make_pdf([f"paper number {i} in the queue"]) for i in range(2)}
    for name, data in pdfs.items():
        (tmp_path / f"{name}.pdf").write_bytes(data)
    (tmp_path / "page.pdf").write_bytes(b"<html><body>not a pdf</body></html>")
    produce(kafka.bootstrap, kafka.topic(FILES),
            [str(tmp_path / f"{name}.pdf").encode() for name in (*pdfs, "page")])
    with FakeGrobid(fulltext_tei=tei) as grobid:
        monkeypatch.setenv("SANDCRAWLER_GROBID_URL", grobid.url)
        texts, stderr = run_worker(kafka, migrated_db_url, tmp_path, rows=3, results=3,
                                   topic="pdf-text")
    assert "results to " + kafka.topic("grobid-output-pg") in stderr
    sha1s = {hashlib.sha1(data).hexdigest(): name for name, data in pdfs.items()}
    got = {m["key"]: m for m in map(orjson.loads, texts)}
    assert {m["status"] for k, m in got.items() if k in sha1s} == {"success"}
    [page] = [m for k, m in got.items() if k not in sha1s]
    assert (page["status"], page["text"], page["pdf_extra"]) == ("not-pdf", None, None)
    for sha1, name in sha1s.items():
        assert f"paper number {name[1]}" in got[sha1]["text"]
        assert got[sha1]["pdf_extra"]["page_count"] == 1
        assert got[sha1]["file_meta"]["sha1hex"] == sha1
    outputs = [orjson.loads(m) for m in consume(kafka.bootstrap,
                                                kafka.topic("grobid-output-pg"), 2, timeout=60)]
    assert {m["key"] for m in outputs} == set(sha1s)
    assert all((m["status_code"], m["status"]) == (200, "success") and m["tei_xml"]
               for m in outputs)
