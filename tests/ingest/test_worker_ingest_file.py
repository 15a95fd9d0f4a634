"""File ingest end to end through Kafka, with real processes: requests on a real Kafka
broker → `worker ingest-file` (crawling made-up publisher sites on loopback,
reached through ``http.routes``) → the results topic → `worker persist-ingest-file` →
``ingest_file_result`` and ``ingest_request`` rows; on SQLite and PostgreSQL, with
the store on local disk and on the real S3 server (OpenStack Swift). A worker
SIGKILLed mid-stream and restarted leaves every request with exactly one result
row and nothing half-archived."""

from __future__ import annotations

import hashlib
import io
import re
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from sqlalchemy import Engine, func, select
from warcio.archiveiterator import ArchiveIterator

from sandcrawler.app.services import Services
from sandcrawler.app.settings import load_settings
from sandcrawler.db.schema import ingest_file_result, ingest_request, web_cdx
from sandcrawler.records.capture import CdxRecord
from sandcrawler.storage.blobs import BlobStore
from sandcrawler.storage.local import LocalBlobStore
from sandcrawler.web.archive.captures import WARC_PREFIX
from sandcrawler_testkit.kafka_clients import consume, produce
from sandcrawler_testkit.kafka_clients import end_offsets as partition_ends
from sandcrawler_testkit.pdfs import make_pdf
from sandcrawler_testkit.publishers import Answer, WebSite, page
from tests.helpers.kafka import KafkaSpace, WorkerProcess, Workers, committed, create_topic
from tests.helpers.paths import PDFS
from tests.helpers.skips import unavailable

pytestmark = [pytest.mark.slow, pytest.mark.kafka]

#: the workers' topics, in the test's env (``KafkaSpace.topic``)
REQUESTS = "ingest-file-requests"
RESULTS = "ingest-file-results"
AGAIN = "ingest-file-requests-again"
AGAIN_RESULTS = "ingest-file-results-again"

LANDING = """<html><head><title>{title}</title>
<meta name="citation_title" content="{title}">{meta}</head>
<body><h1>{title}</h1><p>The abstract of the article, in a few words.</p>{body}</body></html>"""


def landing(title: str, meta: str = "", body: str = "", delay: float = 0.0) -> Answer:
    return page(LANDING.format(title=title, meta=meta, body=body), delay=delay)


def pdf_answer(body: bytes) -> Answer:
    return Answer(body=body, content_type="application/pdf")


@pytest.fixture
def web() -> Iterator[WebSite]:
    with WebSite() as site:
        yield site


@pytest.fixture
def workers(tmp_path: Path, kafka: KafkaSpace, web: WebSite,
            monkeypatch: pytest.MonkeyPatch) -> Iterator[Workers]:
    """Workers on the broker, crawling ``web`` (add its pages first: the routes
    are its hosts when a worker starts)."""
    monkeypatch.setenv("SANDCRAWLER_ENV", kafka.env)
    ws = Workers(tmp_path, {**kafka.settings_env, "SANDCRAWLER_HTTP_TIMEOUT": "10"},
                 "ingest-file")
    try:
        yield ws
    finally:
        ws.kill_all()


def routes_env(web: WebSite) -> dict[str, str]:
    return {"SANDCRAWLER_HTTP_ROUTES": orjson.dumps(web.routes()).decode()}


def key(result: dict[str, Any]) -> tuple[str, str]:
    request = result["request"]
    return request["ingest_type"], request["base_url"]


def end_offsets(bootstrap: str, topic: str) -> int:
    """How many messages ``topic`` holds (the sum of its partitions' high watermarks)."""
    return sum(partition_ends(bootstrap, topic).values())


def result_rows(engine: Engine) -> dict[tuple[str, str], dict[str, Any]]:
    with engine.connect() as conn:
        rows = conn.execute(select(ingest_file_result)).mappings().all()
    return {(r["ingest_type"], r["base_url"]): dict(r) for r in rows}


def count(engine: Engine, table: Any) -> int:
    with engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(table)).scalar_one())


def persist(workers: Workers, kafka: KafkaSpace, engine: Engine, rows: int,
            w: WorkerProcess | None = None) -> str:
    """Run `worker persist-ingest-file` (or let ``w`` run) over everything on the
    results topic, until ``rows`` rows and every offset committed, then stop it;
    its stderr."""
    results = kafka.topic(RESULTS)
    total = end_offsets(kafka.bootstrap, results)
    w = w or workers.start(worker="persist-ingest-file")
    w.wait_until(lambda: count(engine, ingest_file_result) >= rows and sum(committed(
        kafka.bootstrap, kafka.group("persist-ingest-file"), results).values()) == total, 60,
        f"{rows} rows and {total} results committed")
    assert w.stop(signal.SIGTERM) == 0, w.stderr
    assert "Traceback" not in w.stderr
    return w.stderr


def check_archive(services: Services) -> list[CdxRecord]:
    """Every WARC file the index refers to is in the store, and every WARC file in
    the store reads to its end; every indexed record is where its row says (offset,
    compressed size, URL), and its payload reads back through the web archive (a
    revisit through its original) with the digest indexed. The web_cdx rows."""
    with services.engine.connect() as conn:
        rows = [CdxRecord.from_row(r._mapping) for r in conn.execute(select(web_cdx))]
    warcs = {info.key: services.blobs.get(info.key)
             for info in services.blobs.list(WARC_PREFIX + "/")}
    assert {r.warc_path for r in rows} <= set(warcs), {r.warc_path for r in rows} - set(warcs)
    for path, data in warcs.items():  # nothing half-written is visible
        kinds = [(r.rec_type, len(r.content_stream().read()))
                 for r in ArchiveIterator(io.BytesIO(data))]
        assert kinds and kinds[0][0] == "warcinfo", path
    for row in rows:
        chunk = warcs[row.warc_path][row.warc_offset:row.warc_offset + row.warc_csize]
        records = ArchiveIterator(io.BytesIO(chunk))
        record = next(records)
        assert record.rec_headers.get_header("WARC-Target-URI") == row.url
        assert record.rec_type == ("revisit" if row.is_revisit else "response"), row
        record.content_stream().read()
        assert next(records, None) is None  # exactly one record in the row's bytes
        if row.status_code == 200:
            out = io.BytesIO()
            services.web_archive.read_payload(row, out)
            assert hashlib.sha1(out.getvalue()).hexdigest() == row.sha1hex, row
    return rows


# --- 1. requests → worker → results → persist worker → rows; a second run ---------------


@pytest.fixture
def real_pdfs() -> dict[str, bytes]:
    names = ("two_pages.pdf", "submission_363.pdf", "dehypenisation1.pdf")
    if not all((PDFS / n).is_file() for n in names):
        unavailable("../shared/data/pdfs is not there", "SHARED_DATA")
    return {n: (PDFS / n).read_bytes() for n in names}


@pytest.mark.parametrize(("db_backend", "blob_store"),
                         [("sqlite", "local"), ("postgresql", "s3")], indirect=True)
def test_requests_to_results_to_rows_and_a_second_run(
        kafka: KafkaSpace, web: WebSite, workers: Workers, engine: Engine,
        blob_store: BlobStore, migrated_db_url: str, real_pdfs: dict[str, bytes]) -> None:
    requests_topic, results_topic = kafka.topic(REQUESTS), kafka.topic(RESULTS)
    again_topic, again_results = kafka.topic(AGAIN), kafka.topic(AGAIN_RESULTS)
    a, b, c = real_pdfs.values()
    web.add("https://journal-a.example/article/1", landing(
        "Article one", '<meta name="citation_pdf_url" content="/article/1.pdf">'))
    web.add("https://journal-a.example/article/1.pdf", pdf_answer(a))
    web.add("https://journal-b.example/view/2", landing(
        "Article two", body='<a href="/download/2/paper.pdf">Download PDF</a>'))
    web.add("https://journal-b.example/download/2/paper.pdf", pdf_answer(b))
    web.add("https://files.example/preprint.pdf", pdf_answer(c))
    web.add("https://journal-a.example/article/3", landing("Article three, HTML only"))
    requests: list[dict[str, Any] | bytes] = [
        {"ingest_type": "pdf", "base_url": "https://journal-a.example/article/1",
         "link_source": "doi", "link_source_id": "10.1234/a.1",
         "ext_ids": {"doi": "10.1234/a.1"}, "ingest_request_source": "e2e-test"},
        {"ingest_type": "pdf", "base_url": "https://journal-b.example/view/2"},
        {"ingest_type": "pdf", "base_url": "https://files.example/preprint.pdf",
         "link_source": "arxiv", "link_source_id": "2101.00001"},
        {"ingest_type": "pdf", "base_url": "https://journal-a.example/article/404"},
        {"ingest_type": "pdf", "base_url": "https://journal-a.example/article/3",
         "link_source": "doi", "link_source_id": "10.1234/a.3"},
        {"ingest_type": "dataset", "base_url": "https://zenodo.org/records/5703112"},
        b"this is not json {",
        {"ingest_type": "pdf", "link_source": "doi", "link_source_id": "10.1234/none"},
    ]
    messages = [r if isinstance(r, bytes) else orjson.dumps(r) for r in requests]
    produce(kafka.bootstrap, requests_topic, messages)
    expected = {
        ("pdf", "https://journal-a.example/article/1"): "success",
        ("pdf", "https://journal-b.example/view/2"): "success",
        ("pdf", "https://files.example/preprint.pdf"): "success",
        ("pdf", "https://journal-a.example/article/404"): "terminal-bad-status",
        ("pdf", "https://journal-a.example/article/3"): "no-pdf-link",
    }

    # every worker is started now: each joins its group while the others work
    for topic in (results_topic, again_topic):
        create_topic(kafka.bootstrap, topic)
    persisting = workers.start(worker="persist-ingest-file")
    first = workers.start("--limit", str(len(requests)), env=routes_env(web))
    # the second run's worker, on a topic of its own, waits for the requests again
    again = workers.start("--limit", str(len(requests)), "--topic", again_topic,
                          "--group", kafka.group("again"), "--results-topic", again_results,
                          env=routes_env(web))
    assert first.wait(90) == 0, first.stderr
    assert "Traceback" not in first.stderr
    results = [orjson.loads(m)
               for m in consume(kafka.bootstrap, results_topic, len(expected) + 2)]
    assert end_offsets(kafka.bootstrap, results_topic) == len(results)  # and no more
    assert sum(committed(kafka.bootstrap, kafka.group("ingest-file"),
                         requests_topic).values()) == len(requests)

    # one result per request of a file type, a miss included; the request without
    # base_url gets a bad-request result echoing it; the line that is not JSON a
    # bad-json result with an empty request, saying where the line is; the
    # dataset none (the fileset worker's)
    [not_json, bad] = sorted((r for r in results if "base_url" not in r["request"]),
                             key=lambda r: r["status"])
    assert (bad["status"], bad["hit"]) == ("bad-request", False)
    assert bad["request"]["link_source_id"] == "10.1234/none"
    assert (not_json["status"], not_json["hit"], not_json["request"]) == ("bad-json", False, {})
    assert re.search(rf"\(record at {re.escape(requests_topic)}\[\d+\]@\d+\)$",
                     not_json["error_message"]), not_json
    by_key = {key(r): r for r in results if "base_url" in r["request"]}
    assert len(by_key) == len(results) - 2
    assert {k: r["status"] for k, r in by_key.items()} == expected
    assert "bad-json" in first.stderr
    one = by_key[("pdf", "https://journal-a.example/article/1")]
    assert one["hit"] is True and one["request"]["ingest_request_source"] == "e2e-test"
    assert one["hops"] == ["https://journal-a.example/article/1",
                           "https://journal-a.example/article/1.pdf"]
    sha1 = {n: hashlib.sha1(body).hexdigest() for n, body in zip("abc", (a, b, c), strict=True)}
    assert one["file_meta"]["sha1hex"] == sha1["a"] == one["terminal"]["terminal_sha1hex"]
    assert by_key[("pdf", "https://journal-b.example/view/2")]["file_meta"]["sha1hex"] == sha1["b"]
    assert by_key[("pdf", "https://journal-a.example/article/404")]["terminal"][
        "terminal_status_code"] == 404

    # the worker's captures are indexed, and in the store the test sees
    services = Services(load_settings(database_url=migrated_db_url))
    try:
        rows = check_archive(services)
        assert {r.url for r in rows} >= {
            "https://journal-a.example/article/1", "https://journal-a.example/article/1.pdf",
            "https://journal-b.example/view/2", "https://journal-b.example/download/2/paper.pdf",
            "https://files.example/preprint.pdf", "https://journal-a.example/article/404",
            "https://journal-a.example/article/3"}
        # (one WARC file a batch: a batch is what the consumer had at hand)
        assert all(blob_store.exists(path) for path in {r.warc_path for r in rows})
        # each PDF is catalogued by its sha1, and stored under its document
        for name, digest in zip(("a", "b", "c"), sha1.values(), strict=True):
            [doc] = services.catalogue.lookup("sha1", digest)
            body = dict(zip("abc", (a, b, c), strict=True))[name]
            assert services.resources.get(doc, "pdf") == body
        assert one["processing"]["uuid"] == services.catalogue.lookup("sha1", sha1["a"])[0]
    finally:
        services.close()

    persist_err = persist(workers, kafka, engine, len(expected), persisting)
    # the bad requests' results have no row: no base_url
    assert persist_err.count(": bad-result: ") == 2, persist_err
    got = result_rows(engine)
    assert {k: r["status"] for k, r in got.items()} == expected
    assert {k for k, r in got.items() if r["hit"]} == {k for k, s in expected.items()
                                                       if s == "success"}
    row = got[("pdf", "https://journal-a.example/article/1")]
    assert (row["terminal_url"], row["terminal_status_code"], row["terminal_sha1hex"]) == (
        "https://journal-a.example/article/1.pdf", 200, sha1["a"])
    with engine.connect() as conn:
        req_rows = conn.execute(select(ingest_request)).mappings().all()
    # requests naming their link_source and link_source_id (and a base_url) have one
    assert sorted((r["link_source"], r["link_source_id"]) for r in req_rows) == [
        ("arxiv", "2101.00001"), ("doi", "10.1234/a.1"), ("doi", "10.1234/a.3")]

    # a second run of the same requests fetches nothing of the hits: they are
    # success-existing
    hits = [k for k, s in expected.items() if s == "success"]
    web.clear()
    produce(kafka.bootstrap, again_topic, messages)
    assert again.wait(90) == 0, again.stderr
    second = [orjson.loads(m) for m in consume(kafka.bootstrap, again_results,
                                               len(expected) + 2)]
    statuses = {key(r): r["status"] for r in second if "base_url" in r["request"]}
    assert statuses == {**expected, **dict.fromkeys(hits, "success-existing")}
    # only the 404 is asked again (and robots.txt, for it); the page without a PDF
    # link is replayed from the archive
    assert set(web.requests) == {"journal-a.example/robots.txt",
                                 "journal-a.example/article/404"}, web.requests
    existing = next(r for r in second
                    if r["request"].get("base_url") == "https://journal-a.example/article/1")
    assert existing["terminal"]["terminal_sha1hex"] == sha1["a"]
    assert existing["cdx"]["url"] == "https://journal-a.example/article/1.pdf"


# --- 2. SIGKILL mid-stream: every request ends with exactly one result row ---------------

SITES = 4
N = 120
DUPLICATES = 10  # requests sent twice: still one row each
DISTINCT_PDFS = 6


@pytest.mark.parametrize(("db_backend", "blob_store"),
                         [("sqlite", "local"), ("postgresql", "s3")], indirect=True)
def test_sigkill_mid_stream_every_request_ends_with_one_row(
        kafka: KafkaSpace, web: WebSite, workers: Workers, engine: Engine,
        blob_store: BlobStore, migrated_db_url: str) -> None:
    requests_topic, results_topic = kafka.topic(REQUESTS), kafka.topic(RESULTS)
    ingest_group = kafka.group("ingest-file")
    urls = [f"https://site{i % SITES}.example/article/{i}" for i in range(N)]
    # a few distinct PDFs: the others are the same payloads again, archived as
    # revisit records (and processed once)
    pdfs = [make_pdf([f"Article {i}, a small paper.", None], title=f"Article {i}")
            for i in range(DISTINCT_PDFS)]
    for i, url in enumerate(urls):
        body = pdfs[i % DISTINCT_PDFS]
        # the delay keeps the worker mid-batch most of the time
        web.add(url, landing(url, f'<meta name="citation_pdf_url" content="{url}.pdf">',
                             delay=0.03))
        web.add(f"{url}.pdf", pdf_answer(body))
    requests = [{"ingest_type": "pdf", "base_url": u, "link_source": "doi",
                 "link_source_id": f"10.1234/sk.{i}"} for i, u in enumerate(urls)]
    requests += requests[50:50 + DUPLICATES]
    produce(kafka.bootstrap, requests_topic, [orjson.dumps(r) for r in requests])
    # a dead member keeps its partitions until its session times out: 6 s keeps
    # the restarted worker's wait short
    env = {**routes_env(web), "SANDCRAWLER_KAFKA_OPTIONS": '{"session.timeout.ms": 6000}'}

    # the whole pipeline runs: the persist worker is up from the start
    create_topic(kafka.bootstrap, results_topic)
    persisting = workers.start(worker="persist-ingest-file")
    first = workers.start("--batch-size", "10", env=env)
    first.wait_until(lambda: end_offsets(kafka.bootstrap, results_topic) >= 20, 60,
                     "the first results")
    # and then into the next batch's crawl
    seen = len(web.requests)
    first.wait_until(lambda: len(web.requests) >= seen + 5, 30, "more pages fetched")
    first.proc.kill()  # SIGKILL: no chance to finish the batch, publish or commit
    assert first.proc.wait(timeout=10) == -signal.SIGKILL
    at_kill = end_offsets(kafka.bootstrap, results_topic)
    assert 0 < at_kill < N, "the worker should be killed mid-stream"
    assert sum(committed(kafka.bootstrap, ingest_group, requests_topic).values()) <= at_kill
    if isinstance(blob_store, LocalBlobStore):  # the batch's WARC file, half written
        assert any(f.stat().st_size > 0 for f in blob_store.tmp_dir.iterdir())

    second = workers.start("--batch-size", "10", env=env)
    second.wait_until(lambda: sum(committed(kafka.bootstrap, ingest_group,
                                            requests_topic).values())
                      == len(requests), 90, "every request committed")
    assert second.stop(signal.SIGTERM) == 0, second.stderr
    assert "Traceback" not in first.stderr + second.stderr

    # at least once: every request has a result, some have two
    results = [orjson.loads(m) for m in consume(kafka.bootstrap, results_topic,
                                                end_offsets(kafka.bootstrap, results_topic))]
    assert {key(r) for r in results} == {("pdf", u) for u in urls}
    assert len(results) >= len(requests)
    assert {r["status"] for r in results} <= {"success", "success-existing"}

    # ... and exactly one row
    persist(workers, kafka, engine, N, persisting)
    rows = result_rows(engine)
    assert len(rows) == count(engine, ingest_file_result) == N
    assert set(rows) == {("pdf", u) for u in urls}
    assert all(r["hit"] and r["terminal_url"] == f"{u}.pdf" for (_t, u), r in rows.items())
    assert count(engine, ingest_request) == N

    # nothing half-archived is visible; every capture reads back; each PDF is
    # catalogued once
    services = Services(load_settings(database_url=migrated_db_url))
    try:
        cdx = check_archive(services)
        sha1 = {hashlib.sha1(body).hexdigest() for body in pdfs}
        assert {r["terminal_sha1hex"] for r in rows.values()} == sha1
        assert {r.url for r in cdx} >= {*urls, *(f"{u}.pdf" for u in urls)}
        for digest in sha1:
            assert len(services.catalogue.lookup("sha1", digest)) == 1
    finally:
        services.close()
