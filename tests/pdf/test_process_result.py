"""``ProcessResult``: the result line of ``process`` (and of the ``process-pdf``
worker), read back and written again byte for byte."""

from __future__ import annotations

import orjson
import pytest
from pydantic import ValidationError

from sandcrawler.app.workers import WORKERS
from sandcrawler.core.imports import load_object
from sandcrawler.records.pdf import ProcessResult
from sandcrawler.records.statuses import CdxStatus, PdfStatus, SandboxStatus

SHA1 = "2393f9c72c8661585547c1693419d1b5e720d586"
FILE = (f'"size":755,"sha1hex":"{SHA1}",'
        '"sha256hex":"736e5fc944faa6d2a45c09ca192cea384978e5c37180dffa29351f1969cce5a0",'
        '"md5hex":"501661c3b8fec5b4a91736b7e03bc6a6","mimetype":"application/pdf"')
STORED = ('"uuid":"2e22968c-3542-5a15-ab10-43a383493c74","resources":["metadata","pdf",'
          '"thumb-large","thumb-listing","thumb-medium","thumb-small"],'
          '"grobid_status":"not-run","grobid_quality":null')

# lines as `sandcrawler process` writes them
LINES = {
    "stored": '{"path":"examples/paper.pdf",' + FILE + ',"status":"success","error":null,'
              + STORED + ',"page_count":1,"word_count":7,"pdf_version":"1.4"}',
    "capture": '{"path":"https://j.example.org/42.pdf","url":"https://j.example.org/42.pdf",'
               '"dt":"20200102030405",' + FILE + ',"status":"empty-page0",'
               '"error":"page 0 has no area",' + STORED
               + ',"page_count":2,"word_count":11,"pdf_version":"1.4"}',
    "not-pdf": '{"path":"in/html.pdf",' + FILE.replace("application/pdf", "text/html")
               + ',"status":"not-pdf","error":"the file is text/html",'
               '"page_count":null,"word_count":null,"pdf_version":null}',
    "timeout": '{"path":"in/huge.pdf",' + FILE + ',"status":"timeout",'
               '"error":"took longer than 0.3 s (child killed)",'
               '"page_count":null,"word_count":null,"pdf_version":null}',
    "exists": '{"path":"in/blank0.pdf",' + FILE + ',"status":"exists","pdf_status":"empty-page0"}',
    "exists-by-sha1": f'{{"path":"{SHA1}","sha1hex":"{SHA1}","status":"exists",'
                      '"pdf_status":"success"}',
    "skipped-capture": f'{{"path":"https://example.org/papers/3","status":"skip-status",'
                       f'"sha1hex":"{SHA1}"}}',
}


@pytest.mark.parametrize("line", LINES.values(), ids=LINES.keys())
def test_lines_read_back_write_the_same_bytes(line: str) -> None:
    result = ProcessResult.model_validate_json(line)
    assert orjson.dumps(result.to_json()).decode() == line


def test_statuses_are_typed() -> None:
    assert ProcessResult.model_validate_json(LINES["timeout"]).status is SandboxStatus.TIMEOUT
    assert ProcessResult.model_validate_json(LINES["exists"]).status is PdfStatus.EXISTS
    assert (ProcessResult.model_validate_json(LINES["skipped-capture"]).status
            is CdxStatus.SKIP_STATUS)


@pytest.mark.parametrize("change", [
    {"status": "no-such-status"},
    {"sha1hex": "not-a-sha1"},
    {"dt": "2020"},
    {"grobid_quality": "excellent"},
    {"unknown_key": 1},
])
def test_what_is_not_a_result(change: dict) -> None:
    with pytest.raises(ValidationError):
        ProcessResult.model_validate({**orjson.loads(LINES["stored"]), **change})


def test_registered_as_the_output_of_process_pdf() -> None:
    assert load_object(WORKERS["process-pdf"].output) is ProcessResult
