"""Dataset ingest end to end: requests on a real Kafka broker → `worker
ingest-fileset` (real processes, loopback platforms reached by real HTTP) →
result topics → `worker persist-ingest-fileset` → SQL rows (SQLite and PostgreSQL)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from sqlalchemy import select

from sandcrawler.db.schema import ingest_file_result, ingest_fileset_platform, web_cdx
from sandcrawler_testkit.kafka_clients import consume, produce
from sandcrawler_testkit.platforms import FakeFile, PlatformServer
from tests.helpers.cli import invoke
from tests.helpers.kafka import KafkaSpace, committed, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.kafka]

#: the worker's topics, in the test's env (``KafkaSpace.topic``)
REQUESTS = "ingest-file-requests"
RESULTS = "ingest-fileset-results"
FILE_RESULTS = "ingest-file-results"


@pytest.fixture
def platforms() -> Iterator[PlatformServer]:
    with PlatformServer() as server:
        server.add_zenodo(5703112, [FakeFile("table.csv", b"a,b\n1,2\n" * 500)])
        server.add_zenodo(5703113, [FakeFile(f"part{i}.bin", bytes([i]) * 4096)
                                    for i in range(3)])
        server.add_figshare(1234, 2, [FakeFile(f"f{i}.txt", f"file {i}\n".encode() * 100)
                                      for i in range(12)])
        yield server


def _requests() -> list[dict]:
    return [
        {"ingest_type": "dataset", "base_url": "https://zenodo.org/records/5703112",
         "link_source": "doi", "link_source_id": "10.5281/zenodo.5703112"},
        {"ingest_type": "dataset", "base_url": "https://zenodo.org/records/5703113"},
        {"ingest_type": "dataset", "base_url": "https://figshare.com/articles/dataset/x/1234/2"},
        {"ingest_type": "dataset", "base_url": "https://zenodo.org/records/999"},  # platform-404
        {"ingest_type": "pdf", "base_url": "https://example.org/paper.pdf"},  # not ours: skipped
    ]


def _worker(name: str, tmp_path: Path, env: dict[str, str], *args: str) -> subprocess.Popen:
    err = (tmp_path / f"{name}.stderr").open("wb")
    return subprocess.Popen([sys.executable, "-m", "sandcrawler", "worker", name, *args],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                            env={**os.environ, **env})


def _stop(proc: subprocess.Popen, tmp_path: Path, name: str) -> str:
    proc.send_signal(signal.SIGTERM)
    try:
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    stderr = (tmp_path / f"{name}.stderr").read_text()
    assert "Traceback" not in stderr, stderr
    return stderr


def test_requests_to_results_topics_to_rows(
    kafka: KafkaSpace, platforms: PlatformServer, engine,  # type: ignore[no-untyped-def]
    migrated_db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SANDCRAWLER_ENV", kafka.env)
    env = {**kafka.settings_env, "SANDCRAWLER_DATABASE_URL": migrated_db_url,
           "SANDCRAWLER_HTTP_ROUTES": orjson.dumps(platforms.routes()).decode(),
           "SANDCRAWLER_FETCH_TIMEOUT": "5"}
    requests = _requests()
    produce(kafka.bootstrap, kafka.topic(REQUESTS), [orjson.dumps(r) for r in requests])

    proc = _worker("ingest-fileset", tmp_path, env)
    try:
        # offsets are committed once the results are on the broker (and the
        # result topics exist: they are created by the worker's first write)
        wait_until(lambda: proc.poll() is not None or sum(committed(
            kafka.bootstrap, kafka.group("ingest-fileset"), kafka.topic(REQUESTS)).values())
            == len(requests), 90, "offsets of all requests committed")
        assert proc.poll() is None
        results = [orjson.loads(m)
                   for m in consume(kafka.bootstrap, kafka.topic(RESULTS), 4, timeout=30)]
        file_results = [orjson.loads(m) for m in consume(
            kafka.bootstrap, kafka.topic(FILE_RESULTS), 1, timeout=30)]
    finally:
        stderr = _stop(proc, tmp_path, "ingest-fileset")
    assert "platform-404" in stderr  # a failed ingest is reported, and published

    by_url = {r["request"]["base_url"]: r for r in results}
    assert set(by_url) == {r["base_url"] for r in requests[:4]}
    single = by_url["https://zenodo.org/records/5703112"]
    assert (single["status"], single["ingest_strategy"], single["hit"]) == (
        "success-file", "web-file", True)
    assert single["request"]["link_source_id"] == "10.5281/zenodo.5703112"  # request echoed
    assert by_url["https://zenodo.org/records/5703113"]["status"] == "success"
    bundled = by_url["https://figshare.com/articles/dataset/x/1234/2"]
    assert (bundled["status"], bundled["ingest_strategy"]) == ("success", "web-fileset-bundled")
    assert bundled["file_count"] == 12 and bundled["fileset_bundle"]["cdx"]["warc_path"]
    missing = by_url["https://zenodo.org/records/999"]
    assert (missing["status"], missing["hit"]) == ("platform-404", False)

    # the single-file dataset is also an ingest-file result, ingest type dataset-file
    [file_result] = file_results
    assert file_result["request"]["ingest_type"] == "dataset-file"
    assert file_result["status"] == "success" and file_result["hit"] is True
    assert file_result["file_meta"] == single["fileset_file"]["file_meta"]

    # captures are indexed in the database the worker wrote to
    with engine.connect() as conn:
        urls = {r.url for r in conn.execute(select(web_cdx.c.url))}
    assert "https://zenodo.org/records/5703112" in urls  # the landing page

    persist = _worker("persist-ingest-fileset", tmp_path, env)
    try:
        def rows() -> tuple[list, list]:
            with engine.connect() as conn:
                return (conn.execute(select(ingest_fileset_platform)).mappings().all(),
                        conn.execute(select(ingest_file_result)).mappings().all())

        wait_until(lambda: len(rows()[1]) == 5 and persist.poll() is None, 60,
                   "five ingest_file_result rows")
    finally:
        _stop(persist, tmp_path, "persist-ingest-fileset")
    platform_rows, file_rows = rows()
    by_key = {(r["ingest_type"], r["base_url"]): r for r in file_rows}
    assert by_key[("dataset-file", "https://zenodo.org/records/5703112")]["terminal_sha1hex"] \
        == single["fileset_file"]["file_meta"]["sha1hex"]
    landing = by_key[("dataset", "https://zenodo.org/records/5703112")]
    assert landing["terminal_url"] == single["terminal"]["terminal_url"]
    assert landing["status"] == "success-file" and landing["hit"] is True
    assert by_key[("dataset", "https://zenodo.org/records/999")]["status"] == "platform-404"
    # platform rows only where the platform identified the dataset
    platform_by_url = {r["base_url"]: r for r in platform_rows}
    assert set(platform_by_url) == {r["base_url"] for r in requests[:3]}
    row = platform_by_url["https://figshare.com/articles/dataset/x/1234/2"]
    assert (row["platform_name"], row["platform_domain"], row["platform_id"]) == (
        "figshare", "figshare.com", "1234")
    assert row["ingest_strategy"] == "web-fileset-bundled" and row["file_count"] == 12
    assert row["web_bundle_url"] == bundled["fileset_bundle"]["terminal"]["terminal_url"]
    assert len(row["web_bundle_dt"]) == 14
    assert len(row["manifest"]) == 12 and row["manifest"][0]["sha1"]


def test_ingest_requests_then_persist_without_kafka(
    platforms: PlatformServer, engine, tmp_path: Path,  # type: ignore[no-untyped-def]
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The batch commands chain the same way: requests → results → rows."""
    monkeypatch.setenv("SANDCRAWLER_HTTP_ROUTES", orjson.dumps(platforms.routes()).decode())
    # `ingest requests` takes every type (the pdf one is file ingest's, tested in
    # test_ingest_file.py); a type nobody handles is skipped
    requests = [*_requests()[:4], {"ingest_type": "component", "base_url": "https://x.org/a"}]
    lines = b"".join(orjson.dumps(r) + b"\n" for r in requests)
    res = invoke(["ingest", "requests", "-", "--no-progress"], input=lines)
    assert res.exit_code == 0, res.stderr
    results = [orjson.loads(line) for line in res.stdout.splitlines()]
    assert [r["status"] for r in results] == ["success-file", "success", "success",
                                             "platform-404"]
    assert "skip-ingest-type 1" in res.stderr
    res = invoke(["persist", "ingest-fileset", "-", "--no-progress"], input=res.stdout)
    assert res.exit_code == 0, res.stderr
    with engine.connect() as conn:
        assert conn.execute(select(ingest_fileset_platform.c.base_url)).all().__len__() == 3
        assert conn.execute(select(ingest_file_result.c.base_url)).all().__len__() == 4

    # a second run finds everything archived; nothing is downloaded again
    platforms.clear_requests()
    res = invoke(["ingest", "requests", "-", "--no-progress"], input=lines)
    again = [orjson.loads(line) for line in res.stdout.splitlines()]
    assert [r["status"] for r in again] == ["success-existing"] * 3 + ["platform-404"]
    # file downloads and the figshare bundle (API calls and landing pages are fine)
    downloads = [(host, path) for host, _m, path in platforms.requests
                 if host == "ndownloader.figshare.com" or path.endswith("/content")]
    assert downloads == []


def test_ingest_fileset_command_prints_the_result(
    platforms: PlatformServer, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SANDCRAWLER_HTTP_ROUTES", orjson.dumps(platforms.routes()).decode())
    res = invoke(["ingest", "fileset", "https://zenodo.org/records/5703112", "--file-result"])
    assert res.exit_code == 0, res.stderr
    first, second = res.stdout.splitlines()  # one JSON line each
    result = orjson.loads(first)
    assert result["status"] == "success-file"
    assert orjson.loads(second)["request"]["ingest_type"] == "dataset-file"
    # recorded as `persist ingest-fileset` records it
    counts = orjson.loads(invoke(["db", "status", "--json"]).stdout)["row_counts"]
    assert counts["ingest_file_result"] == 1 and counts["ingest_fileset_platform"] == 1
    pretty = invoke(["ingest", "fileset", "--pretty", "https://zenodo.org/records/5703112"])
    assert pretty.stdout.startswith("{\n  ")
    assert orjson.loads(pretty.stdout)["status"] == "success-existing"
    res = invoke(["ingest", "fileset", "https://zenodo.org/records/999"])
    assert res.exit_code == 1
    assert orjson.loads(res.stdout)["status"] == "platform-404"
    assert "platform-404" in res.stderr
