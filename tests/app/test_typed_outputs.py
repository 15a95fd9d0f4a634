"""Typed outputs (issue 24): workers hand models to the sink, which makes them
JSON (or rows) once, and the JSON is what it was when workers handed dicts."""

from __future__ import annotations

import io
import pickle

import orjson
import pytest
from grobid_tei_xml import GrobidBiblio
from grobid_tei_xml.types import GrobidAuthor

from sandcrawler.citations.base import CitationJson, ParsedCitation, biblio_to_dict
from sandcrawler.citations.crf.model import CrfModel
from sandcrawler.citations.crf.parser import CrfCitationParser
from sandcrawler.citations.worker import ParseCitationsWorker, Reference, read_reference
from sandcrawler.core.jsontext import RawJSON
from sandcrawler.core.work import Item, Outcome, PdfCells, Rows, json_line
from sandcrawler.pdf.cdx_backfill import BackfillCdxWorker
from sandcrawler.pdf.worker import result_key
from sandcrawler.pipeline.sinks import StdoutSink
from sandcrawler.records.pdf import ProcessResult
from sandcrawler.records.refs import CrossrefRow, GrobidRefsRow, ParsedRefs
from sandcrawler.refs.parse_workers import (
    ParseCrossrefRefsWorker,
    PersistCrossrefWorker,
    PersistGrobidRefsWorker,
)

SHA1 = "a" * 40
WORK = {"DOI": "10.1234/ABC", "indexed": {"date-time": "2021-05-10T22:08:45Z"},
        "reference": [{"key": "r1", "unstructured": "Smith J. A title of a paper. Nature. 2001."},
                      {"key": "r2", "DOI": "10.1/linked", "unstructured": "linked already"}]}


@pytest.fixture(scope="module")
def crf() -> CrfCitationParser:
    return CrfCitationParser(CrfModel.load(None))


def test_json_line_is_the_models_own_dump() -> None:
    # ProcessResult leaves out exactly the keys never given (a null given stays)
    result = ProcessResult(path="a.pdf", status="not-found", sha1hex=None, error="gone")
    assert json_line(result) == b'{"path":"a.pdf","sha1hex":null,"status":"not-found",' \
                                b'"error":"gone"}'
    author = GrobidAuthor(full_name="J Smith", surname="Smith", given_name="")
    biblio = GrobidBiblio(authors=[author], title="T", unstructured="", index=3)
    assert orjson.loads(json_line(ParsedCitation(biblio))) == biblio.to_dict()


@pytest.mark.parametrize("output", [
    Rows((CrossrefRow(doi="10.1/a", indexed="2021-01-01T00:00:00Z", record=RawJSON("{}")),)),
    PdfCells(SHA1, {"file": {"mime": "application/pdf"}}),
])
def test_rows_are_not_json_lines(output: Rows | PdfCells) -> None:
    """A database output sent to stdout is the record's failure (the sink's
    TypeError becomes a rejection), not a line of something else."""
    buf = io.BytesIO()
    rejected = StdoutSink(buf).write([Outcome("line 1", "success", output=output)])
    assert buf.getvalue() == b""
    [(index, status, message)] = rejected
    assert (index, status) == (0, "internal-error") and "written to a database" in message


def test_parse_citations_hands_biblios(crf: CrfCitationParser) -> None:
    worker = ParseCitationsWorker(crf)
    [ok, bad] = worker.process_batch([
        Item("line 1", b'{"unstructured": "Smith J. A title of a paper. Nature. 2001.", '
                       b'"key": 7, "index": 2}'),
        Item("line 2", b'{"id": 1}'),
    ])
    assert isinstance(ok.output, ParsedCitation)
    assert (ok.output.biblio.id, ok.output.biblio.index) == ("7", 2)
    line = orjson.loads(json_line(ok.output))
    assert line == ok.output.biblio.to_dict() and line["id"] == "7"
    assert (bad.status, bad.output) == ("missing-unstructured", None)


def test_a_parsed_citation_travels_between_processes_as_its_json(
        crf: CrfCitationParser) -> None:
    [[biblio]] = crf.parse_lists([["Smith J. A title of a paper. Nature. 2001."]])
    sent = ParsedCitation(biblio)
    received = pickle.loads(pickle.dumps(sent))
    assert isinstance(received, CitationJson)
    assert json_line(received) == json_line(sent)


@pytest.mark.parametrize(("line", "reference"), [
    (b"plain text", Reference("plain text")),
    (b'"A title" in quotes, then more', Reference('"A title" in quotes, then more')),
    (b'"a JSON string"', Reference("a JSON string")),
    (b'{"unstructured": "u", "id": 5, "key": "k", "index": 1}', Reference("u", "5", 1)),
    (b'{"unstructured": "u", "key": "k", "index": "1"}', Reference("u", "k", None)),
])
def test_read_reference(line: bytes, reference: Reference) -> None:
    assert read_reference(line) == reference


def test_parse_crossref_refs_row(crf: CrfCitationParser) -> None:
    [out] = ParseCrossrefRefsWorker(crf).process_batch([Item("line 1", orjson.dumps(WORK))])
    assert isinstance(out.output, ParsedRefs)
    [parsed] = crf.parse_lists([[WORK["reference"][0]["unstructured"]]])  # type: ignore[index]
    assert isinstance(parsed, list)
    expected = {**biblio_to_dict(parsed[0]), "id": "r1", "index": 0}
    line = orjson.loads(json_line(out.output))
    assert list(line) == ["source", "source_id", "source_ts", "refs_json"]
    # the reference with a DOI is not re-parsed
    assert line == {"source": "crossref", "source_id": "10.1234/abc",
                    "source_ts": "2021-05-10T22:08:45Z", "refs_json": [expected]}
    assert out.output.columns() == line


def test_persist_crossref_rows(crf: CrfCitationParser) -> None:
    data = orjson.dumps(WORK)
    [bare] = PersistCrossrefWorker(None).process_batch([Item("line 1", data)])
    assert isinstance(bare.output, Rows)
    [crossref] = bare.output.rows
    assert crossref.columns() == {"doi": "10.1234/abc", "indexed": "2021-05-10T22:08:45Z",
                                  "record": data.decode()}
    [both] = PersistCrossrefWorker(crf).process_batch([Item("line 1", data)])
    assert isinstance(both.output, Rows)
    assert [row.table for row in both.output.rows] == ["crossref", "grobid_refs"]


def test_persist_grobid_refs_row() -> None:
    line = (b'{"source": " Crossref", "source_id": "10.1/X", "source_ts": '
            b'"2021-05-10T22:08:45+00:00", "refs_json": [{"id": "a", "title": "t"}]}')
    [out] = PersistGrobidRefsWorker().process_batch([Item("line 1", line)])
    assert isinstance(out.output, Rows)
    [row] = out.output.rows
    assert isinstance(row, GrobidRefsRow)
    assert row.columns() == {"source": "crossref", "source_id": "10.1/x",
                             "source_ts": "2021-05-10T22:08:45Z",
                             "refs_json": [{"id": "a", "title": "t"}]}


def test_backfill_cdx_hands_cells() -> None:
    line = (b"org,example)/a.pdf 20200102030405 http://example.org/a.pdf application/pdf 200 "
            b"MFRGGZDFMZTWQ2LKNNWG23TPOBYXE43U - - 1234 5678 example.warc.gz")
    [out] = BackfillCdxWorker().process_batch([Item("line 1", line)])
    assert isinstance(out.output, PdfCells)
    sha1hex, cells = out.output
    assert sha1hex == out.output.sha1hex and len(sha1hex) == 40
    assert cells["file"]["mime"] == "application/pdf"
    assert cells["file"]["cdx"]["warc"] == "example.warc.gz"


def test_process_results_are_keyed_by_sha1() -> None:
    assert result_key(ProcessResult(path="a.pdf", status="success", sha1hex=SHA1)) == SHA1
    assert result_key(ProcessResult(path="a.pdf", status="not-found")) is None


def test_a_kafka_key_function_that_fails_fails_its_record_and_says_it_was_the_key() -> None:
    from sandcrawler.pipeline.kafka_io import KafkaSink
    from sandcrawler.pipeline.sinks import Rejection, encoded

    # a producer connects lazily: nothing listens on this port, nothing is sent
    sink = KafkaSink({"bootstrap.servers": "127.0.0.1:9"}, "t",
                     key=lambda row: row["source_id"])  # a model is not subscriptable
    result = ProcessResult(path="a.pdf", status="not-found")
    rejected: list[Rejection] = []
    out = list(encoded([Outcome("line 1", "success", output=result)], sink._messages, rejected))
    assert out == []
    [(index, status, message)] = rejected
    assert (index, status) == (0, "internal-error")
    assert "no message key for a ProcessResult" in message and "not JSON" not in message
