"""Hostile markup whose parsing costs without bound (issue 22): HTML nested or built so
that an HTML5 tree builder's work grows faster than the page, JSON-LD and JATS nested
100,000 deep. Each ends, with a status, or (JSON-LD) with the rest of the page read.

The ``timeout`` marks are generous upper bounds proving the work ended; the code's own
limits are far below them (docs/ingest.md, "Limits of HTML and XML parsing")."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine

from sandcrawler.core.errors import RecordError
from sandcrawler.core.safexml import parse_xml
from sandcrawler.ingest.html_fulltext import HtmlProcessor
from sandcrawler.ingest.jats import JatsProcessor
from sandcrawler.refs.reading import RefsWriter
from sandcrawler.storage.catalogue import Catalogue
from sandcrawler.storage.local import LocalBlobStore
from sandcrawler.storage.pdftable import PdfTable
from sandcrawler.storage.resources import ResourceStore
from sandcrawler.web.html import landing
from sandcrawler.web.html.landing import parse_html
from sandcrawler_testkit.publishers import WebSite, page
from tests.ingest.test_ingest_file import Ingest
from tests.ingest.test_ingest_processors import found, out_sha1

URL = "https://journal.example.org/articles/7"
HEAD = b"<!DOCTYPE html><html><head><meta charset='utf-8'><title>Deep</title></head><body>"
WORDS = b"<p>" + b" ".join([b"word"] * 300) + b"</p>"
#: the page of issue 22: 2.2 MB of nested <div>s (3.3 KB gzipped), 129 s of CPU to parse
DEEP_DIVS = HEAD + b"<div>" * 440_000 + b"</body></html>"
#: 56 KB; each <p> reopens every <b> before it (the HTML standard's "reconstruct the
#: active formatting elements"; distinct ids defeat its limit of three alike), so the
#: tree has 4.5 million elements, 3,000 deep, and the parser needs 1.6 GB of memory
FORMATTING = HEAD + b"".join(b"<p><b id=%d>x</p>" % i for i in range(3000)) + b"</body></html>"


@pytest.mark.slow  # the parse deadline, 10 s
@pytest.mark.timeout(120)
@pytest.mark.parametrize("body", [DEEP_DIVS, FORMATTING], ids=["deep-divs", "formatting"])
def test_a_page_the_parser_cannot_finish_is_html_too_complex(body: bytes) -> None:
    with pytest.raises(RecordError) as caught:
        parse_html(body, URL, "text/html")
    assert caught.value.status == "html-too-complex"
    assert str(caught.value).startswith(f"{URL}: ")
    # the next page is parsed as usual (the parser's process was replaced)
    page = parse_html(HEAD + b"<a href='/files/7.pdf'>Download PDF</a></body></html>", URL)
    assert [link.url for link in page.fulltext_links("pdf")] == [
        "https://journal.example.org/files/7.pdf"]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("deep", ["[" * 100_000 + "]" * 100_000,
                                  '{"a":' * 100_000 + "1" + "}" * 100_000,
                                  '{"@type": "ScholarlyArticle", "headline": "Lost", "about": '
                                  + "[" * 100_000 + "]" * 100_000 + "}"],
                         ids=["array", "object", "inside-an-article"])
def test_jsonld_nested_100000_deep_leaves_the_rest_of_the_page(deep: str) -> None:
    head = (
        '<meta name="citation_doi" content="10.5555/deep.1">'
        f'<script type="application/ld+json">{deep}</script>'
        '<script type="application/ld+json">{"@type": "ScholarlyArticle", "headline": '
        '"The article", "author": [{"name": "Ada Example"}], "encoding": [{"encodingFormat":'
        ' "application/pdf", "contentUrl": "/files/7.pdf"}]}</script>')
    body = f"<html><head>{head}</head><body><a href='/read/7'>Full text</a></body></html>"
    page = parse_html(body.encode(), URL)
    assert page.biblio is not None
    assert (page.biblio.doi, page.biblio.title, page.biblio.contrib_raw_names) == (
        "10.5555/deep.1", "The article", ["Ada Example"])
    assert [(link.url, link.rule) for link in page.links] == [
        ("https://journal.example.org/files/7.pdf", "json-ld"),
        ("https://journal.example.org/read/7", "anchor:fulltext")]


@pytest.fixture
def web() -> Iterator[WebSite]:
    with WebSite() as site:
        yield site


@pytest.mark.timeout(120)
@pytest.mark.parametrize("ingest_type", ["html", "pdf"])
def test_an_ingest_of_a_deep_page_ends_with_a_status(web: WebSite, ingest_type: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # the crawl's parse stops at landing.PARSE_TIMEOUT (10 s); 2 s keeps the test short
    monkeypatch.setattr(landing, "PARSE_TIMEOUT", 2.0, raising=False)
    web.add("https://deep.example/article/1", page(HEAD + WORDS + b"<div>" * 440_000))
    ingest = Ingest(web.routes())
    try:
        result = ingest("https://deep.example/article/1", ingest_type)
    finally:
        ingest.close()
    assert (result["status"], result["hit"]) == ("html-too-complex", False), result
    assert "took longer than 2 s" in result["error_message"]
    assert result["hops"] == ["https://deep.example/article/1"]


@pytest.fixture
def catalogue(engine: Engine, tmp_path: Path) -> Catalogue:
    return Catalogue(engine, ResourceStore(LocalBlobStore(tmp_path / "store")))


@pytest.mark.timeout(120)
def test_the_html_processor_gives_up_on_a_page_it_cannot_finish(catalogue: Catalogue,
                                                                 tmp_path: Path) -> None:
    # trafilatura reads this page in 0.1 s (lxml stops at depth 256); listing its
    # sub-resources (Lexbor, as the crawl's parse) is what would not end
    path = tmp_path / "deep.html"
    path.write_bytes(HEAD + WORDS + b"<div>" * 440_000 + b"<img src='/i.png'>")
    table = PdfTable(catalogue.engine, "t")
    processor = HtmlProcessor(catalogue, table, RefsWriter(catalogue.engine), timeout=3)
    try:
        out = processor.process(found(path, URL, "html"))
    finally:
        processor.close()
    assert (out.kind, out.status, out.uuid) == ("html", "html-too-complex", None)
    assert out.error is not None and "took longer than 3 s" in out.error
    assert catalogue.count() == 0
    # the page was read, if not to the end: its status is kept, and nothing else known
    row = table.get(out_sha1(path), ["html0"])
    assert row is not None and row.cells["html0"] == {
        "html_status": "html-too-complex",
        "html_meta": {"scope": None, "has_teixml": False, "has_thumbnail": False,
                      "word_count": None, "biblio": None, "resources": None}}


def _deep_jats(depth: int) -> bytes:
    return (b"<article><front><article-meta><title-group><article-title>T</article-title>"
            b"</title-group></article-meta></front><body>" + b"<sec>" * depth + b"x"
            + b"</sec>" * depth + b"</body></article>")


@pytest.mark.timeout(60)
def test_xml_nested_100000_deep_is_bad_xml(catalogue: Catalogue, tmp_path: Path) -> None:
    with pytest.raises(RecordError) as caught:
        parse_xml(_deep_jats(100_000), "JATS")
    assert caught.value.status == "bad-xml"
    assert "nested deeper than 256 elements" in str(caught.value)
    path = tmp_path / "deep.xml"
    path.write_bytes(_deep_jats(100_000))
    out = JatsProcessor(catalogue, RefsWriter(catalogue.engine)).process(
        found(path, "https://example.org/deep.xml", "xml"))
    assert (out.status, out.uuid) == ("bad-xml", None)
    # nesting up to the limit is read as before
    root = parse_xml(_deep_jats(250), "JATS")
    assert "".join(root.itertext()) == "Tx"


@pytest.mark.timeout(120)
def test_a_datasets_landing_page_the_parser_cannot_finish_has_no_metadata() -> None:
    """Dataset ingest reads a landing page's metadata through the same limits: the
    page has none, and the ingest goes on from the platform's API."""
    from sandcrawler.web.html.metadata import html_biblio

    assert html_biblio(FORMATTING, URL) is None
    meta = b"<meta name='citation_title' content='A dataset'>"
    biblio = html_biblio(HEAD.replace(b"</head>", meta + b"</head>") + b"</body></html>", URL)
    assert biblio is not None and biblio.to_json() == {"title": "A dataset"}
