"""The exact JSON lines of ingest results that need no crawl: a line that is no
request, a request refused before any fetch, file and dataset alike.

The expected bytes are what the results were before they became typed models
(issue 24): keys, their order, and which are left out (a worker's result for a
line that is no request has no ``hops``; a refused file request has ``hops: []``;
a fileset result has none). Consumers have seen these lines.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sandcrawler.app.services import Services
from sandcrawler.app.settings import load_settings
from sandcrawler.core.work import Item, json_line
from sandcrawler.ingest.worker import IngestWorker
from sandcrawler.records.fileset import FilesetIngestResult
from sandcrawler.records.ingest import FileIngestResult

CASES = [
    (b"[1]", "bad-request",
     b'{"hit":false,"status":"bad-request","request":{},"error_message":'
     b'"an ingest request is a JSON object (record at line 1)"}'),
    (b"not json", "bad-json",
     b'{"hit":false,"status":"bad-json","request":{},"error_message":"not JSON: invalid '
     b"literal, expected 'null': line 1 column 1 (char 0) (record at line 1)\"}"),
    (b'{"ingest_type": "pdf"}', "bad-request",
     b'{"hit":false,"status":"bad-request","request":{"ingest_type":"pdf"},'
     b'"error_message":"not an ingest request: base_url: Field required"}'),
    (b'{"ingest_type": "pdf", "base_url": "not a url", "x": [1], "ext_ids": {"doi": null}}',
     "bad-request",
     b'{"hit":false,"status":"bad-request","request":{"ingest_type":"pdf","base_url":'
     b'"not a url","ext_ids":{"doi":null},"force_recrawl":false,"x":[1]},"hops":[],'
     b'"error_message":"base_url \'not a url\' is not an http(s) URL"}'),
    (b'{"ingest_type": "html", "base_url": "https://", "link_source": "doi", '
     b'"force_recrawl": true}', "bad-request",
     b'{"hit":false,"status":"bad-request","request":{"ingest_type":"html","base_url":'
     b'"https://","link_source":"doi","force_recrawl":true},"hops":[],'
     b'"error_message":"base_url \'https://\' is not an http(s) URL"}'),
    (b'{"ingest_type": "dataset", "base_url": "http://[::1", "z": 1}', "bad-request",
     b'{"hit":false,"status":"bad-request","request":{"ingest_type":"dataset","base_url":'
     b'"http://[::1","force_recrawl":false,"z":1},'
     b'"error_message":"base_url \'http://[::1\' is not an http(s) URL"}'),
]


@pytest.fixture
def worker() -> Iterator[IngestWorker]:
    services = Services(load_settings())  # in the test's own data directory (conftest)
    worker = IngestWorker(services.file_ingester(), services.fileset_ingester())
    yield worker
    worker.close()
    services.close()


@pytest.mark.parametrize(("data", "status", "line"), CASES)
def test_result_lines_keep_their_bytes(worker: IngestWorker, data: bytes, status: str,
                                       line: bytes) -> None:
    [outcome] = worker.process_batch([Item("line 1", data)])
    assert (outcome.status, outcome.kind) == (status, "error")
    # a model until the sink writes it, once
    assert isinstance(outcome.output, FileIngestResult | FilesetIngestResult)
    assert json_line(outcome.output) == line
