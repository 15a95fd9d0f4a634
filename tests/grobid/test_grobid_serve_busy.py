"""A pool of one worker with a short time limit: a request that finds it busy is
answered 503 at once (GROBID's way; its clients retry), the PDF that overruns
is 500 ``[TIMEOUT]``, and the worker is replaced for the next request."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
import urllib3

from sandcrawler_testkit.pdfs import make_pdf
from tests.grobid.serving import PDFS, Server, start
from tests.helpers.metrics import value
from tests.helpers.waiting import wait_until

#: pages dense with text: seconds of work for the cascade, well over the limit below
LINE = ("Smith J, Doe A. A study of phosphorus in lakes and rivers of the world. "
        "J Limnol 12:100-120 (2001).")
SLOW = make_pdf(["\n".join([LINE] * 50)] * 120)
TIMEOUT = 2.5


@pytest.fixture(scope="module")
def one_worker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = start(tmp_path_factory.mktemp("grobid-serve-busy"), "--concurrency", "1",
                   env={"SANDCRAWLER_GROBID_SERVE_TIMEOUT": str(TIMEOUT)})
    yield server
    server.stop()


def _busy(server: Server) -> float | None:
    return value(server.metrics(), "sandcrawler_grobid_serve_workers_busy")


def test_busy_pool_is_503_at_once_and_a_slow_pdf_times_out(one_worker: Server) -> None:
    slow: list[urllib3.BaseHTTPResponse] = []
    thread = threading.Thread(target=lambda: slow.append(
        one_worker.pdf("/api/processFulltextDocument", SLOW)))
    thread.start()
    wait_until(lambda: _busy(one_worker) == 1, 30, "the worker to be busy")
    for send in (lambda: one_worker.form("/api/processCitation", [("citations", LINE)]),
                 lambda: one_worker.pdf("/api/processHeaderDocument",
                                        PDFS["plos"].read_bytes())):
        started = time.monotonic()
        answer = send()
        assert answer.status == 503, answer.data
        assert time.monotonic() - started < 2  # at once, not queued
        assert b"all 1 workers are busy" in answer.data
    assert one_worker.get("/api/isalive").data == b"true"  # the service itself answers
    thread.join(120)
    (answer,) = slow
    assert answer.status == 500
    assert answer.data.startswith(b"[TIMEOUT] timeout: took longer than 2.5 s"), answer.data
    # the killed worker is replaced, then free again
    wait_until(lambda: _busy(one_worker) == 0, 60, "the worker to be replaced")
    again = one_worker.pdf("/api/processHeaderDocument", PDFS["plos"].read_bytes())
    assert again.status == 200
    samples = one_worker.metrics()
    assert (value(samples, "sandcrawler_grobid_serve_busy_rejections_total",
                  endpoint="processCitation") or 0) >= 1
    assert (value(samples, "sandcrawler_grobid_serve_requests_total",
                  endpoint="processHeaderDocument", status="503") or 0) >= 1
    assert value(samples, "sandcrawler_grobid_serve_extractions_total", status="timeout") == 1
