"""The original system's Kafka messages (``kafka.original``, setting
kafka.message_format original) made from the demo's real results and PDF-table
cells: their shapes, always; and, where the original's code can be had, its own
persist workers run on them in a program of their own, with the rows they would
write checked (docs/original-messages.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from sandcrawler.app.demo import run_demo
from sandcrawler.app.publishing import publishing
from sandcrawler.app.services import Services
from sandcrawler.app.settings import load_settings
from sandcrawler.core.errors import ConfigError
from sandcrawler.core.work import Item, Rows, json_line
from sandcrawler.demo import DemoSite
from sandcrawler.ingest.worker import PersistIngestFileWorker
from sandcrawler.kafka.original import (
    MAX_TEXT_CHARS,
    NO_TEIXML,
    FileFacts,
    grobid_metadata,
    grobid_output,
    ingest_grobid,
    original_request,
    pdf_date,
    pdf_text,
)
from sandcrawler.pdf.fulltext import fulltext_from_tei
from sandcrawler.records.files import FileMeta
from sandcrawler.records.ingest import FileIngestResult, IngestFileResultRow
from sandcrawler.records.pdf import ProcessResult
from sandcrawler_testkit.original_sandcrawler import OriginalUnavailable, package
from tests.helpers.isolation import isolated
from tests.helpers.paths import FIXTURES
from tests.helpers.skips import unavailable

ENV = "test"
RESULTS, GROBID, PDF_TEXT = (f"sandcrawler-{ENV}.{name}" for name in
                             ("ingest-file-results", "grobid-output-pg", "pdf-text"))
#: real GROBID full text (GROBID 0.4.1), from the shared fixtures
GROBID_TEI = FIXTURES / "grobid-0.4.1-sample2.tei.fulltext.xml"


@dataclass(frozen=True, slots=True)
class Demo:
    results: list[FileIngestResult]
    #: what `worker ingest-file` publishes of each result: (topic, JSON, key)
    ingest: list[list[tuple[str, dict[str, Any], str | bytes | None]]]
    #: what `worker process-pdf` publishes of each PDF's processing result
    processed: list[list[tuple[str, dict[str, Any], str | bytes | None]]]
    #: each hit's PDF-table cells
    cells: dict[str, dict[str, Any]]


def _published(pub: Any, output: Any) -> list[tuple[str, dict[str, Any], str | bytes | None]]:
    """The messages the sink would write: topic, the JSON it produces, the key."""
    return [(topic, orjson.loads(json_line(m)), pub.key(m)) for topic, m in pub.route(output)]


def _processed(result: FileIngestResult) -> ProcessResult:
    """The processing result `sandcrawler process` gives for the PDF this ingest stored."""
    meta, processing = result.file_meta, result.processing
    assert meta is not None and processing is not None
    return ProcessResult(path=f"{meta.sha1hex}.pdf", size=meta.size_bytes, sha1hex=meta.sha1hex,
                         sha256hex=meta.sha256hex, md5hex=meta.md5hex, mimetype=meta.mimetype,
                         status=processing.status, uuid=processing.uuid,
                         resources=processing.resources)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    """The demo ingested (no GROBID server: the embedded cascade's TEI stands in, as
    in the PDF table), and its results published in the original's shapes."""
    directory = tmp_path_factory.mktemp("demo")
    # a module's fixture runs before the per-test isolation: its own, with the
    # cascade on (the isolation turns it off), as `ingest demo` runs it
    with isolated(directory / "env"), DemoSite() as site:
        services = Services.for_process(load_settings({
            "data_dir": str(directory), "database_url": f"sqlite:///{directory}/db.sqlite3",
            "store_url": str(directory / "store"), "http_routes": site.routes(),
            "crawl_host_delay": 0, "env": ENV, "kafka_message_format": "original",
            "extract_enabled": True}))
        try:
            results = run_demo(services).results
            ingest = publishing("ingest-file", services)
            process = publishing("process-pdf", services)
            assert ingest.topics == (RESULTS, GROBID, PDF_TEXT)
            assert process.topics == (GROBID, PDF_TEXT)
            cells = {}
            for r in results:
                if r.hit and r.file_meta is not None:
                    row = services.pdftable.get(r.file_meta.sha1hex)
                    cells[r.file_meta.sha1hex] = row.cells if row is not None else {}
            return Demo(results, [_published(ingest, r) for r in results],
                        [_published(process, _processed(r)) for r in results
                         if r.hit and r.processing is not None and r.processing.kind == "pdf"],
                        cells)
        finally:
            services.close()


def _by_kind(demo: Demo, kind: str) -> list[int]:
    return [i for i, r in enumerate(demo.results)
            if r.hit and r.processing is not None and r.processing.kind == kind]


# --- our messages' shapes (always) -----------------------------------------------------


def test_every_result_is_one_results_message_keyed_by_base_url(demo: Demo) -> None:
    for result, messages in zip(demo.results, demo.ingest, strict=True):
        topic, message, key = messages[0]
        assert topic == RESULTS and key == result.request["base_url"]
        assert message["request"] == {k: v for k, v in result.request.items()}
        assert (message["hit"], message["status"]) == (result.hit, result.status)
        assert "processing" not in message
        for name in ("terminal", "file_meta", "cdx"):
            ours = getattr(result, name)
            assert message.get(name) == (ours.model_dump(mode="json") if ours else None)


def test_a_pdf_hit_has_the_originals_grobid_and_pdf_meta(demo: Demo) -> None:
    pdfs = _by_kind(demo, "pdf")
    assert len(pdfs) == 3
    for i in pdfs:
        result = demo.results[i]
        assert result.file_meta is not None
        sha1 = result.file_meta.sha1hex
        cells = demo.cells[sha1]
        message = demo.ingest[i][0][1]
        grobid = message["grobid"]
        # the cascade's TEI stands in for GROBID's, with GROBID's 200
        assert (grobid["status_code"], grobid["status"]) == (200, "success")
        assert set(grobid) == {"status_code", "status", "metadata", "fatcat_release",
                               "grobid_version"}
        assert grobid["grobid_version"] == cells["grobid0"]["status"]["grobid_version"]
        biblio = grobid["metadata"]["biblio"]
        assert biblio["title"] == cells["grobid0"]["metadata"]["title"]
        assert biblio["doi"] == cells["grobid0"]["metadata"]["doi"]
        assert "abstract" not in grobid["metadata"]  # removed as the original did
        meta = message["pdf_meta"]
        assert set(meta) == {"key", "sha1hex", "status", "file_meta", "error_msg", "text",
                             "has_page0_thumbnail", "meta_xml", "pdf_info", "pdf_extra",
                             "source"}
        assert (meta["key"], meta["sha1hex"], meta["status"]) == (sha1, sha1, "success")
        assert meta["file_meta"] is None and meta["text"] is None  # as in the original's
        assert meta["has_page0_thumbnail"] is True
        pdf0 = cells["pdf0"]["pdf_meta"]
        assert meta["pdf_extra"]["page_count"] == pdf0["page_count"] > 0
        assert meta["pdf_extra"]["pdf_version"] == pdf0["pdf_version"]
        assert meta["pdf_info"]["Title"] == pdf0["info"]["title"]
        assert "contrib_raw_names" not in message["html_biblio"]


def test_a_processed_pdf_is_published_as_grobid_output_and_pdf_text(demo: Demo) -> None:
    for i, processed in zip(_by_kind(demo, "pdf"), demo.processed, strict=True):
        result = demo.results[i]
        assert result.file_meta is not None
        sha1 = result.file_meta.sha1hex
        cells = demo.cells[sha1]
        # ingest-file publishes them beside the result, process-pdf alone
        assert demo.ingest[i][1:] == processed
        assert [(topic, key) for topic, _, key in processed] == [(GROBID, sha1),
                                                                 (PDF_TEXT, sha1)]
        grobid, text = processed[0][1], processed[1][1]
        assert grobid == {"key": sha1, "status_code": 200, "status": "success",
                          "tei_xml": cells["grobid0"]["tei_xml"],
                          "file_meta": result.file_meta.model_dump(mode="json")}
        assert text["text"] == cells["pdf0"]["text"] and text["text"]
        assert text["file_meta"] == result.file_meta.model_dump(mode="json")


def test_an_html_hit_has_the_originals_html_fields(demo: Demo) -> None:
    [i] = _by_kind(demo, "html")
    message = demo.ingest[i][0][1]
    processing = demo.results[i].processing
    assert processing is not None and processing.word_count is not None
    # no TEI is made of a page: anything but success, so has_teixml stays false
    assert message["html_body"]["status"] == NO_TEIXML
    assert message["html_body"]["word_count"] == processing.word_count > 50
    assert message["html_body"]["agent"].startswith("trafilatura/")
    assert message["scope"] == "article-fulltext"
    assert message["html_biblio"]["contrib_names"] == ["Calvin Liang", "Jevan Alexander Hutson",
                                                       "Os Keyes"]
    assert len(demo.ingest[i]) == 1  # no GROBID output or PDF text of a page


def test_an_xml_hit_and_a_miss(demo: Demo) -> None:
    [i] = _by_kind(demo, "xml")
    assert demo.ingest[i][0][1]["xml_meta"] == {"status": "success"}
    misses = [m for r, m in zip(demo.results, demo.ingest, strict=True) if not r.hit]
    assert misses
    for messages in misses:
        assert len(messages) == 1
        assert not {"grobid", "pdf_meta", "html_body"} & set(messages[0][1])


def test_our_persist_reads_the_original_shape(demo: Demo) -> None:
    """Switching the format leaves `persist-ingest-file` working."""
    for result, messages in zip(demo.results, demo.ingest, strict=True):
        item = Item(where="a message", data=orjson.dumps(messages[0][1]))
        outcome = PersistIngestFileWorker().process(item)
        assert isinstance(outcome.output, Rows), outcome
        file_row = outcome.output.rows[0]
        assert isinstance(file_row, IngestFileResultRow)
        assert (file_row.base_url, file_row.status, file_row.hit) == (
            result.request["base_url"], result.status, result.hit)


def test_original_request_leaves_out_what_would_stop_the_originals_parser() -> None:
    assert original_request({"ingest_type": "pdf", "base_url": "https://a.example/x",
                             "ext_ids": None, "fatcat": [1], "ingest_request_source": 5,
                             "release_stage": "published", "mine": {"kept": True},
                             "force_recrawl": False}) == {
        "ingest_type": "pdf", "base_url": "https://a.example/x",
        "release_stage": "published", "mine": {"kept": True}, "force_recrawl": False}


@pytest.mark.parametrize(("value", "iso"), [
    ("D:20190418120000+02'00'", "2019-04-18T12:00:00+02:00"),
    ("D:20190418120000Z", "2019-04-18T12:00:00+00:00"),
    ("D:2019", "2019-01-01T00:00:00"),
    ("20190418", "2019-04-18T00:00:00"),
    ("D:20191345", None),
    ("yesterday", None),
])
def test_pdf_dates_become_iso_8601(value: str, iso: str | None) -> None:
    assert pdf_date(value) == iso


META = FileMeta(size_bytes=3, sha1hex="a" * 40, sha256hex="b" * 64, md5hex="c" * 32,
                mimetype="application/pdf")


def test_text_over_the_originals_cap_is_text_too_large() -> None:
    long = "x" * (MAX_TEXT_CHARS + 1)
    facts = FileFacts("a" * 40, META, pdf={"pdf_status": "success", "text": long,
                                         "pdf_meta": {"page_count": 1}})
    text = pdf_text(facts)
    assert text is not None
    assert (text["status"], text["text"]) == ("text-too-large", None)
    assert text["error_msg"] == f"full_text chars: {MAX_TEXT_CHARS + 1}"


def test_no_grobid_answer_is_no_grobid_output() -> None:
    for cells in ({"status": {"status": "not-run", "reason": "no GROBID URL configured"}},
                  {"status": {"status": "grobid-error", "error": "HTTP 500"}}):
        facts = FileFacts("a" * 40, META, grobid=cells)
        assert grobid_output(facts) is None
        grobid = ingest_grobid(facts)
        assert grobid is not None and grobid["status"] == "error"


@pytest.fixture
def grobid_tei() -> str:
    if not GROBID_TEI.is_file():
        pytest.skip("../shared/data not present")
    return GROBID_TEI.read_text(encoding="utf-8")


def test_real_grobid_tei_is_grobid_output(grobid_tei: str) -> None:
    facts = FileFacts("a" * 40, META, grobid=fulltext_from_tei(grobid_tei, 200).cells())
    out = grobid_output(facts)
    assert out is not None
    assert (out["status_code"], out["status"], out["tei_xml"]) == (200, "success", grobid_tei)
    grobid = ingest_grobid(facts)
    assert grobid is not None and grobid["grobid_version"] == "0.4.1"
    whole = grobid_metadata(grobid_tei)
    assert whole is not None and whole["grobid_version"] == "0.4.1"
    # the version (and fatcat's release) moved up, as the original's ingest did
    assert grobid["metadata"] == {k: v for k, v in whole.items()
                                  if k not in ("grobid_version", "fatcat_release")}


def test_process_pdf_refuses_one_results_topic_in_the_original_format(tmp_path: Path) -> None:
    services = Services.for_process(load_settings({
        "data_dir": str(tmp_path), "kafka_message_format": "original"}))
    try:
        with pytest.raises(ConfigError, match="not one results topic"):
            publishing("process-pdf", services, "mine")
        assert publishing("ingest-file", services, "mine").topics[0] == "mine"
    finally:
        services.close()


# --- the original's own persist workers on them ------------------------------------------

DRIVER = '''
import json, sys

import sandcrawler
from psycopg2 import extras
from sandcrawler import minio
from sandcrawler.grobid import GrobidClient
from sandcrawler.pdfextract import PdfExtractResult
from sandcrawler.persist import (PersistGrobidWorker, PersistIngestFileResultWorker,
                                 PersistPdfTextWorker)

assert not sandcrawler.__file__.startswith(sys.argv[2]), sandcrawler.__file__
messages = json.load(open(sys.argv[1]))
results, grobid, text = messages["results"], messages["grobid"], messages["text"]
s3 = dict(s3_access_key="-", s3_secret_key="-", s3_bucket="sandcrawler")
ingest = PersistIngestFileResultWorker(db_url="-")
out = {
    # the parsers, one message at a time (each on its own copy: they change it)
    "request_rows": [ingest.request_to_row(json.loads(json.dumps(r["request"])))
                     for r in results],
    "file_rows": [ingest.file_result_to_row(json.loads(json.dumps(r))) for r in results],
    "html_meta": [(lambda row: row and row.to_sql_tuple())(ingest.result_to_html_meta(r))
                  for r in results],
    "pdf_meta": [PdfExtractResult.from_pdftext_dict(json.loads(json.dumps(m))).to_sql_tuple()
                 for m in text + [r["pdf_meta"] for r in results if "pdf_meta" in r]],
    "metadata": [GrobidClient().metadata(json.loads(json.dumps(m))) for m in grobid],
}
# the workers' batches: what they would write, table by table
for name, worker, batch in (("ingest", ingest, results),
                            ("grobid", PersistGrobidWorker(db_url="-", **s3), grobid),
                            ("text", PersistPdfTextWorker(db_url="-", **s3), text)):
    del extras.CALLS[:]
    worker.push_batch(batch)
    out[name] = {"calls": [[sql.split("(")[0].split()[-1] if sql != "COMMIT" else sql, rows]
                           for sql, rows in extras.CALLS],
                 "counts": dict(worker.counts)}
out["puts"] = minio.PUTS
print(json.dumps(out, default=str))
'''


def _run_original(demo: Demo, tmp_path: Path, grobid_extra: list[dict[str, Any]]
                  ) -> dict[str, Any]:
    try:
        path = package(tmp_path / "original",
                       modules=("grobid", "db", "persist", "pdfextract", "ingest_html"))
    except OriginalUnavailable as e:
        unavailable(f"the original system's persist.py: {e}", "ORIGINAL_SANDCRAWLER")
    messages = {"results": [m[0][1] for m in demo.ingest],
                "grobid": [m for ms in demo.processed for topic, m, _ in ms if topic == GROBID]
                + grobid_extra,
                "text": [m for ms in demo.processed for topic, m, _ in ms if topic == PDF_TEXT]}
    (tmp_path / "messages.json").write_text(json.dumps(messages))
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, str(driver), str(tmp_path / "messages.json"),
         str(Path(__file__).resolve().parents[2] / "src")],
        env={**env, "PYTHONPATH": str(path)}, capture_output=True, text=True, timeout=300,
        cwd=tmp_path, check=False)
    assert done.returncode == 0, done.stderr
    out: dict[str, Any] = orjson.loads(done.stdout)
    return out


def _table(calls: list[list[Any]], table: str) -> list[list[Any]]:
    return [row for name, rows in calls if name == table for row in rows]


def test_the_original_persist_workers_read_our_messages(demo: Demo, tmp_path: Path) -> None:
    extra = []
    if GROBID_TEI.is_file():  # real GROBID's TEI too, beside the cascade's
        facts = FileFacts("d" * 40, META.model_copy(update={"sha1hex": "d" * 40}),
                          grobid=fulltext_from_tei(GROBID_TEI.read_text(encoding="utf-8"),
                                                   200).cells())
        extra.append(dict(grobid_output(facts) or {}))
    out = _run_original(demo, tmp_path, extra)
    results = demo.results

    # ingest requests and results: request_to_row and file_result_to_row, one by one
    for result, row, file_row in zip(results, out["request_rows"], out["file_rows"],
                                     strict=True):
        request = result.request
        assert row["link_source"] == request["link_source"]
        assert row["link_source_id"] == request["link_source_id"]
        assert row["request"] == {"ext_ids": request["ext_ids"]}
        assert (file_row["ingest_type"], file_row["base_url"], file_row["hit"],
                file_row["status"]) == (request["ingest_type"], request["base_url"],
                                        result.hit, result.status)
        assert result.terminal is not None
        assert file_row["terminal_sha1hex"] == result.terminal.terminal_sha1hex
        assert file_row["terminal_status_code"] == 200

    # and the worker's batch: the rows of every table it writes
    ingest = out["ingest"]["calls"]
    hits = [r for r in results if r.hit]
    assert len(_table(ingest, "ingest_file_result")) == len(results)
    assert len(_table(ingest, "ingest_request")) == len(results)
    assert sorted(row[0] for row in _table(ingest, "file_meta")) == sorted(
        r.file_meta.sha1hex for r in hits if r.file_meta)
    assert {row[0] for row in _table(ingest, "file_meta")} == {
        r.file_meta.sha1hex for r in hits if r.file_meta}
    for row in _table(ingest, "file_meta"):
        [r] = [r for r in hits if r.file_meta and r.file_meta.sha1hex == row[0]]
        assert r.file_meta is not None
        assert row == [r.file_meta.sha1hex, r.file_meta.sha256hex, r.file_meta.md5hex,
                       r.file_meta.size_bytes, r.file_meta.mimetype]
    # our WARC paths have a directory: the original keeps their CDX rows
    assert len(_table(ingest, "cdx")) == len(hits)

    # HTML meta: result_to_html_meta's row, and the same row in the batch
    [html] = [r for r in hits if r.processing and r.processing.kind == "html"]
    assert html.file_meta is not None and html.processing is not None
    [row] = _table(ingest, "html_meta")
    (sha1, _updated, status, scope, has_teixml, has_thumbnail, words, biblio,
     resources) = row
    assert (sha1, status, scope, has_teixml, has_thumbnail, words) == (
        html.file_meta.sha1hex, "success", "article-fulltext", False, False,
        html.processing.word_count)
    assert json.loads(biblio)["title"] == "Surveillance, stigma & sociotechnical design for HIV"
    assert resources is None
    assert [t for t in out["html_meta"] if t] and [t[0] for t in out["html_meta"] if t] == [sha1]

    # GROBID output: its metadata of our message is ours, and its rows
    pdfs = [r for r in hits if r.processing and r.processing.kind == "pdf"]
    grobid_rows = _table(out["grobid"]["calls"], "grobid")
    assert len(grobid_rows) == len(pdfs) + len(extra)
    for r in pdfs:
        assert r.file_meta is not None
        sha1 = r.file_meta.sha1hex
        cells = demo.cells[sha1]["grobid0"]
        [row] = [row for row in grobid_rows if row[0] == sha1]
        _key, version, code, status, release, _updated, metadata = row
        assert (version, code, status, release) == (
            cells["status"]["grobid_version"], 200, "success", None)
        assert json.loads(metadata)["biblio"]["title"] == cells["metadata"]["title"]
        # the metadata the original made of our message is what our result carries
        i = results.index(r)
        [theirs] = [m for m in out["metadata"] if m
                    and m["biblio"].get("doi") == cells["metadata"]["doi"]]
        ours = demo.ingest[i][0][1]["grobid"]
        assert theirs == {**ours["metadata"], "grobid_version": ours["grobid_version"]}
    assert sorted(p["sha1hex"] for p in out["puts"] if p["folder"] == "grobid") == sorted(
        row[0] for row in grobid_rows)
    if extra:
        [row] = [row for row in grobid_rows if row[0] == "d" * 40]
        assert (row[1], row[2], row[3]) == ("0.4.1", 200, "success")
    assert len(_table(out["grobid"]["calls"], "file_meta")) == len(grobid_rows)

    # PDF text: its pdf_meta rows (pages, words, version, the info's fields)
    text_rows = _table(out["text"]["calls"], "pdf_meta")
    assert len(text_rows) == len(pdfs)
    for r in pdfs:
        assert r.file_meta is not None
        pdf0 = demo.cells[r.file_meta.sha1hex]["pdf0"]
        [row] = [row for row in text_rows if row[0] == r.file_meta.sha1hex]
        (_sha1, _updated, status, thumbnail, pages, words, height, width, _permanent,
         _created, version, metadata) = row
        assert (status, thumbnail, pages, height, width, version) == (
            "success", True, pdf0["pdf_meta"]["page_count"], pdf0["pdf_meta"]["page0_height"],
            pdf0["pdf_meta"]["page0_width"], pdf0["pdf_meta"]["pdf_version"])
        assert words == len(pdf0["text"].split())
        assert json.loads(metadata)["title"] == pdf0["pdf_meta"]["info"]["title"]
    assert sorted(p["sha1hex"] for p in out["puts"] if p["folder"] == "text") == sorted(
        row[0] for row in text_rows)
    # pdf_meta of an ingest result parses too: the same pages, no text
    from_results = out["pdf_meta"][len(text_rows):]
    assert [t[4] for t in from_results] == [t[4] for t in text_rows]
    assert all(t[5] is None for t in from_results)
    assert not any(k.startswith("skip") for w in ("ingest", "grobid", "text")
                   for k in out[w]["counts"])
