"""GROBID client and citation parser against a real HTTP server on loopback."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import pytest

from sandcrawler.citations.grobid_parser import GrobidCitationParser
from sandcrawler.core.errors import CitationParseError, GrobidRecordError, GrobidUnavailable
from sandcrawler.grobid.client import GrobidClient
from sandcrawler_testkit.grobid_server import FakeGrobid


@pytest.fixture
def server() -> Iterator[FakeGrobid]:
    with FakeGrobid(slow_seconds=2.0) as s:
        yield s


def client_for(server: FakeGrobid, **kw: object) -> GrobidClient:
    kw.setdefault("backoff", 0.01)
    return GrobidClient(server.url, **kw)  # type: ignore[arg-type]


def test_isalive_and_version(server: FakeGrobid) -> None:
    with client_for(server) as c:
        assert c.isalive() is True
        assert c.version() == FakeGrobid.version


def test_process_citation_list_form(server: FakeGrobid) -> None:
    with client_for(server) as c:
        tei = c.process_citation_list(["First ref. 2001.", "Second & ref. 2002."])
    assert tei is not None and tei.count("<biblStruct") == 2
    (form,) = server.requests
    assert form["citations"] == ["First ref. 2001.", "Second & ref. 2002."]
    assert form["consolidateCitations"] == ["0"]
    assert form["includeRawCitations"] == ["1"]


def test_503_backs_off_and_retries(server: FakeGrobid) -> None:
    server.busy = 3
    with client_for(server, retries=5) as c:
        assert c.process_citation_list(["A reference string."]) is not None
    assert len(server.requests) == 4


def test_503_forever_is_infrastructure(server: FakeGrobid) -> None:
    server.busy = 100
    with client_for(server, retries=2) as c, pytest.raises(GrobidUnavailable, match="503"):
        c.process_citation_list(["A reference string."])
    assert len(server.requests) == 3


def test_204_is_empty(server: FakeGrobid) -> None:
    with client_for(server) as c:
        assert c.process_citation_list(["nothing here #204"]) is None


def test_500_is_record_error(server: FakeGrobid) -> None:
    with client_for(server) as c, pytest.raises(GrobidRecordError, match="HTTP 500") as exc:
        c.process_citation_list(["boom #500"])
    assert exc.value.status == "grobid-error"


def test_timeout_is_record_error(server: FakeGrobid) -> None:
    with client_for(server, timeout=0.3) as c, pytest.raises(GrobidRecordError) as exc:
        c.process_citation_list(["takes long #slow"])
    assert exc.value.status == "grobid-timeout"


def test_unreachable_is_infrastructure() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    start = time.monotonic()
    with GrobidClient(f"http://127.0.0.1:{port}", retries=2, backoff=0.01) as c:
        assert c.isalive() is False
        with pytest.raises(GrobidUnavailable, match="not reachable"):
            c.process_citation_list(["x"])
    assert time.monotonic() - start < 10


def parser_for(server: FakeGrobid, max_citations: int = 500) -> GrobidCitationParser:
    return GrobidCitationParser(client_for(server), max_citations=max_citations, concurrency=3)


def test_parser_splits_long_lists_and_keeps_order(server: FakeGrobid) -> None:
    strings = [f"Author{i} A. Title number {i}. 2001." for i in range(25)]
    parser = parser_for(server, max_citations=10)
    try:
        (biblios,) = parser.parse_lists([strings])
    finally:
        parser.close()
    assert not isinstance(biblios, Exception)
    assert [b.unstructured for b in biblios] == strings
    assert sorted(len(r["citations"]) for r in server.requests) == [5, 10, 10]


@pytest.mark.parametrize(
    ("marker", "status"),
    [("#500", "grobid-error"), ("#garbage", "grobid-bad-xml"), ("#drop", "ref-count-mismatch")],
)
def test_parser_errors_are_per_list(server: FakeGrobid, marker: str, status: str) -> None:
    parser = parser_for(server)
    try:
        good, bad, good2 = parser.parse_lists(
            [["Good reference one."], [f"Bad reference {marker}", "x y z"], ["Good two."]]
        )
    finally:
        parser.close()
    assert isinstance(bad, CitationParseError) and bad.status == status
    assert not isinstance(good, Exception) and good[0].unstructured == "Good reference one."
    assert not isinstance(good2, Exception) and len(good2) == 1


def test_parser_204_keeps_unstructured(server: FakeGrobid) -> None:
    parser = parser_for(server)
    try:
        (biblios,) = parser.parse_lists([["a #204", "b #204"]])
    finally:
        parser.close()
    assert not isinstance(biblios, Exception)
    assert [b.unstructured for b in biblios] == ["a #204", "b #204"]
    assert all(b.is_empty() for b in biblios)


@pytest.mark.parametrize(
    "value",
    ["plain", "Smith, J. (2001). Title: sub-title; more & less = 100% [x] {y} ~z_",
     "Müller \u2013 東京 \u00a0 tab\tnl\n", "a+b c/d?e#f", ""],
)
def test_form_encode_matches_urllib(value: str) -> None:
    from urllib.parse import urlencode

    from sandcrawler.grobid.client import form_encode

    fields = [("citations", value), ("citations", value[::-1]), ("k", "1")]
    assert form_encode(fields) == urlencode(fields).encode()
