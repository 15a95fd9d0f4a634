"""``persist ingest-fileset`` reads results as ``IngestResultView``: ours, and
ingest-file results of other producers; ``bad-result`` for what is not one."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import orjson
import pytest
from pydantic import BaseModel

from sandcrawler.app.workers import WORKERS
from sandcrawler.core.imports import load_object
from sandcrawler.core.work import Item, Outcome, Rows
from sandcrawler.fileset.worker import PersistIngestFilesetWorker
from sandcrawler.ingest.worker import PersistIngestFileWorker
from sandcrawler.records.fileset import IngestResultView
from sandcrawler.records.refs import GrobidRefsRow

SHA1 = "e0" * 20
TERMINAL = {"terminal_url": "https://figshare.com/articles/dataset/x/1234/2",
            "terminal_dt": "20240105010203", "terminal_status_code": 200,
            "terminal_sha1hex": SHA1}
BUNDLE_TERMINAL = {"terminal_url": "https://ndownloader.figshare.com/articles/1234/versions/2",
                   "terminal_dt": "20240105010207", "terminal_status_code": 200,
                   "terminal_sha1hex": "b1" * 20}
MANIFEST = [{"path": "data/a.csv", "size": 3, "sha1": "a" * 40, "status": "success"}]
REQUEST = {"ingest_type": "dataset", "base_url": "https://figshare.com/articles/dataset/x/1234/2"}

# a fileset result as `ingest fileset` writes it (fields that are None left out)
FILESET_RESULT = {
    "hit": True, "status": "success", "request": {**REQUEST, "link_source": "doi"},
    "terminal": TERMINAL,
    "cdx": {"surt": "com,figshare)/x", "datetime": "20240105010203",
            "url": TERMINAL["terminal_url"], "mimetype": "text/html", "status_code": 200,
            "sha1b32": None, "sha1hex": None, "warc_csize": 1, "warc_offset": 0,
            "warc_path": "a.warc.gz"},
    "manifest": MANIFEST, "platform_name": "figshare", "platform_domain": "figshare.com",
    "platform_id": "1234", "platform_base_url": TERMINAL["terminal_url"],
    "ingest_strategy": "web-fileset-bundled", "file_count": 1, "total_size": 3,
    "fileset_bundle": {"file_meta": None, "terminal": BUNDLE_TERMINAL, "cdx": None},
}
# an ingest-file result of another producer: no platform, fields this code never wrote
FILE_RESULT = {
    "hit": True, "status": "success",
    "request": {"ingest_type": "pdf", "base_url": "https://example.org/a.pdf",
                "ext_ids": {"doi": "10.1/x"}},
    "terminal": {**TERMINAL, "terminal_url": "https://example.org/a.pdf"},
    "file_meta": {"size_bytes": 3, "sha1hex": SHA1, "mimetype": "application/pdf"},
    "grobid": {"status": "success", "status_code": 200}, "duration": 1.5,
}


def persist(result: Any) -> Outcome:
    data = result if isinstance(result, bytes) else orjson.dumps(result)
    [outcome] = PersistIngestFilesetWorker().process_batch([Item("line 1", data)])
    return outcome


def tables(out: Outcome) -> dict[str, dict[str, Any]]:
    """The rows of an outcome by table, as the database sink writes them."""
    assert isinstance(out.output, Rows)
    return {row.table: row.columns() for row in out.output.rows}


def test_a_fileset_result_gives_both_rows() -> None:
    out = persist(FILESET_RESULT)
    assert out.status == "success" and out.kind == "ok"
    common = {**REQUEST, "hit": True, "status": "success"}
    assert tables(out) == {
        "ingest_file_result": {**common, **TERMINAL},
        "ingest_fileset_platform": {
            **common, "platform_name": "figshare", "platform_domain": "figshare.com",
            "platform_id": "1234", "ingest_strategy": "web-fileset-bundled", "total_size": 3,
            "file_count": 1, "archiveorg_item_name": None, "archiveorg_item_bundle_path": None,
            "web_bundle_url": BUNDLE_TERMINAL["terminal_url"],
            "web_bundle_dt": BUNDLE_TERMINAL["terminal_dt"], "manifest": MANIFEST,
        },
    }


def test_another_producers_file_result_gives_its_file_row() -> None:
    out = persist(FILE_RESULT)
    assert out.status == "success"
    assert tables(out) == {"ingest_file_result": {
        "ingest_type": "pdf", "base_url": "https://example.org/a.pdf", "hit": True,
        "status": "success", **FILE_RESULT["terminal"]}}


@pytest.mark.parametrize(("result", "row"), [
    # a failure before any fetch: no terminal, no hit
    ({"status": "bad-url", "request": REQUEST},
     {"hit": False, "status": "bad-url", "terminal_url": None, "terminal_status_code": None}),
    ({"hit": None, "status": "", "request": REQUEST, "terminal": None},
     {"hit": False, "status": None}),
    ({"hit": False, "status": "platform-404", "request": REQUEST, "terminal": {},
      "platform_name": "zenodo", "platform_domain": "", "platform_id": "1"},
     {"hit": False, "status": "platform-404", "terminal_dt": None}),
    # a terminal missing some of its keys, with keys of its own
    ({"status": "no-capture", "request": REQUEST,
      "terminal": {"terminal_url": "https://x.org/", "terminal_dt": None, "extra": 1}},
     {"terminal_url": "https://x.org/", "terminal_dt": None, "terminal_sha1hex": None}),
])
def test_lenient_about_what_may_be_missing(result: dict, row: dict) -> None:
    out = persist(result)
    assert out.status == "success" and set(tables(out)) == {"ingest_file_result"}
    assert tables(out)["ingest_file_result"].items() >= row.items()


@pytest.mark.parametrize(("data", "problem"), [
    (b"[1, 2]", "an ingest result is a JSON object"),
    (b'{"status": "success"}', "request: Field required"),
    (orjson.dumps({"status": "success", "request": {"ingest_type": "dataset"}}),
     "request.base_url: Field required"),
    (orjson.dumps({"status": "success", "request": {**REQUEST, "base_url": ""}}),
     "request.base_url: String should have at least 1 character"),
    (orjson.dumps({"status": 7, "request": REQUEST}), "status: Input should be a valid string"),
    (orjson.dumps({"request": REQUEST}), "status: Field required"),
    (orjson.dumps({"status": "success", "request": REQUEST, "terminal": "x"}), "terminal: "),
    (orjson.dumps({**FILESET_RESULT, "manifest": {"path": "a"}}), "manifest: "),
    (orjson.dumps({**FILESET_RESULT, "file_count": "many"}), "file_count: "),
])
def test_what_is_not_a_result_is_bad_result(data: bytes, problem: str) -> None:
    out = persist(data)
    assert (out.status, out.kind, out.output) == ("bad-result", "error", None)
    assert problem in (out.error or "")


def test_bad_json_keeps_its_status() -> None:
    assert persist(b"{not json").status == "bad-json"


def test_registered_input_models() -> None:
    assert load_object(WORKERS["persist-ingest-fileset"].input) is IngestResultView
    assert load_object(WORKERS["persist-grobid-refs"].input) is GrobidRefsRow
    assert load_object(WORKERS["parse-crossref-refs"].output) is GrobidRefsRow
    for spec in WORKERS.values():  # every model the registry names exists
        for path in (spec.input, spec.output):
            assert path is None or issubclass(load_object(path), BaseModel)


@pytest.mark.parametrize(("request_fields", "row"), [
    # the original system's key, and the request kept whole
    ({"link_source": "doi", "link_source_id": "10.1/x", "ingest_request_source": "fatcat",
      "release_stage": "", "odd": [1]},
     {"link_source": "doi", "link_source_id": "10.1/x", "ingest_type": "pdf",
      "base_url": "https://example.org/a.pdf", "ingest_request_source": "fatcat",
      "release_stage": None}),
    # without the whole key: no row
    ({"link_source": "doi"}, None),
    ({"link_source": "doi", "link_source_id": 7}, None),
])
def test_file_results_give_an_ingest_request_row_when_keyed(
        request_fields: dict[str, Any], row: dict[str, Any] | None) -> None:
    result = {**FILE_RESULT, "request": {**FILE_RESULT["request"], **request_fields}}
    [out] = PersistIngestFileWorker().process_batch([Item("line 1", orjson.dumps(result))])
    got = tables(out)
    assert got["ingest_file_result"]["status"] == "success"
    if row is None:
        assert set(got) == {"ingest_file_result"}
        return
    columns = got["ingest_request"]
    assert columns.items() >= row.items()
    assert columns["request"] == result["request"]  # unknown fields kept
    assert isinstance(columns["created"], datetime)
