"""File ingest end to end on loopback: the demo's pages (PLOS ONE, PeerJ, eLife,
First Monday, SciELO, rendered from the articles' CC BY metadata in their
publishers' markup; ``sandcrawler.demo``) served at their own URLs through
``http.routes``, and a web of made-up sites for every status."""

from __future__ import annotations

import hashlib
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select
from warcio.archiveiterator import ArchiveIterator

from sandcrawler.app.services import Services
from sandcrawler.app.settings import load_settings
from sandcrawler.db.engine import begin
from sandcrawler.db.schema import grobid_refs, web_cdx
from sandcrawler.demo import OJS, OJS_HTML, PLOS, PLOS_PDF, REQUESTS, SCIELO_XML, DemoSite
from sandcrawler.ingest.file_ingest import FileIngester
from sandcrawler.records.ingest import IngestRequest
from sandcrawler.storage.pdftable import CaptureHistory
from sandcrawler_testkit.grobid_server import FakeGrobid
from sandcrawler_testkit.publishers import Answer, WebSite, page, redirect
from tests.helpers.cli import invoke
from tests.helpers.paths import PDFS, REPO
from tests.helpers.skips import unavailable


@pytest.fixture
def demo() -> Iterator[DemoSite]:
    with DemoSite() as site:
        yield site


@pytest.fixture
def web() -> Iterator[WebSite]:
    with WebSite() as site:
        yield site


def _settings(routes: dict[str, str], **overrides: Any) -> Any:
    return load_settings(http_routes=routes, http_timeout=5, crawl_host_delay=0,
                         **overrides)


class Ingest:
    """A file ingester on its own services."""

    def __init__(self, routes: dict[str, str], **overrides: Any) -> None:
        self.services = Services(_settings(routes, **overrides))
        self.ingester: FileIngester = self.services.file_ingester()

    def __call__(self, url: str, ingest_type: str = "pdf", **fields: Any) -> dict[str, Any]:
        """The result as the sink writes it (JSON)."""
        return self.ingester.ingest(IngestRequest(ingest_type=ingest_type, base_url=url,
                                                  **fields)).to_json()

    def close(self) -> None:
        self.ingester.close()
        self.services.close()


@pytest.fixture
def ingest_demo(demo: DemoSite) -> Iterator[Ingest]:
    ingest = Ingest(demo.routes())
    yield ingest
    ingest.close()


# --- the real pages -------------------------------------------------------------------


def test_a_doi_is_crawled_to_the_plos_pdf_and_everything_is_kept(
        ingest_demo: Ingest, demo: DemoSite) -> None:
    result = ingest_demo("https://doi.org/10.1371/journal.pone.0213978",
                         ext_ids={"doi": "10.1371/journal.pone.0213978"})
    assert result["status"] == "success", result
    assert result["hit"] is True
    pdf_url = PLOS_PDF
    assert result["hops"] == ["https://doi.org/10.1371/journal.pone.0213978", pdf_url]
    assert result["terminal"]["terminal_url"] == pdf_url
    assert result["terminal"]["terminal_status_code"] == 200
    sha1 = hashlib.sha1(demo.content(pdf_url)).hexdigest()  # the demo's PDF of the article
    assert result["file_meta"]["sha1hex"] == sha1 == result["terminal"]["terminal_sha1hex"]
    assert result["file_meta"]["mimetype"] == "application/pdf"
    assert result["cdx"]["url"] == pdf_url
    assert result["html_biblio"]["doi"] == "10.1371/journal.pone.0213978"
    processing = result["processing"]
    assert processing["kind"] == "pdf" and processing["status"] == "success"
    services = ingest_demo.services
    # the catalogue knows the document by the request's DOI and by the sha1
    assert services.catalogue.lookup("doi", "10.1371/journal.pone.0213978") == [
        processing["uuid"]]
    assert services.catalogue.lookup("sha1", sha1) == [processing["uuid"]]
    # the landing page's metadata, not the PDF's own title field, describes it
    metadata = services.catalogue.metadata(processing["uuid"])
    assert metadata["title"] == [result["html_biblio"]["title"]]
    assert metadata["metadata_source"] == "landing_page"
    # every hop is in the web archive: the DOI redirect, the landing page, the PDF, and
    # the robots.txt of each host that said the crawler might fetch them
    with begin(services.engine) as conn:
        rows = conn.execute(select(web_cdx.c.url, web_cdx.c.status_code, web_cdx.c.warc_path)
                            ).all()
    assert {(r.url, r.status_code) for r in rows} == {
        ("https://doi.org/10.1371/journal.pone.0213978", 302), (PLOS, 200), (pdf_url, 200),
        ("https://doi.org/robots.txt", 200), ("https://journals.plos.org/robots.txt", 200)}
    assert len({r.warc_path for r in rows}) == 1  # one WARC file for the batch
    warc = services.blobs.get(rows[0].warc_path)
    kinds = [(r.rec_type, r.rec_headers.get_header("WARC-Target-URI"))
             for r in ArchiveIterator(io.BytesIO(warc))]
    assert ("request", pdf_url) in kinds and ("response", pdf_url) in kinds
    # the crawler's capture history and the file's CDX in the PDF table
    first = CaptureHistory(services.pdftable).lookup(sha1)
    assert first is not None and first.url == pdf_url and first.warc == rows[0].warc_path
    row = services.pdftable.get(sha1, ["file:cdx", "file:mime", "pdf0:pdf_status"])
    assert row is not None and row.cells["file"]["mime"] == "application/pdf"
    assert row.cells["file"]["cdx"]["url"] == pdf_url


def test_a_second_run_fetches_nothing(ingest_demo: Ingest, demo: DemoSite) -> None:
    first = [ingest_demo(r.base_url, r.ingest_type) for r in REQUESTS[:3]]
    assert [r["status"] for r in first] == ["success"] * 3
    before = len(demo.requests)
    again = [ingest_demo(r.base_url, r.ingest_type) for r in REQUESTS[:3]]
    assert len(demo.requests) == before, demo.requests[before:]
    assert [r["status"] for r in again] == ["success-existing"] * 3
    assert [r["file_meta"]["sha1hex"] for r in again] == [
        r["file_meta"]["sha1hex"] for r in first]
    # force_recrawl fetches (and processes) again
    forced = ingest_demo(REQUESTS[0].base_url, force_recrawl=True)
    assert forced["status"] == "success" and len(demo.requests) > before


def test_every_demo_request_ends_as_the_real_pages_allow(ingest_demo: Ingest) -> None:
    results = ingest_demo.ingester.ingest_batch(list(REQUESTS))
    statuses = [(r.request["ingest_type"], r.status) for r in results]
    assert statuses == [("pdf", "success"), ("pdf", "success"), ("pdf", "success"),
                        ("html", "success"), ("xml", "success"), ("pdf", "no-pdf-link")]
    ojs_html, scielo = results[3], results[4]
    assert ojs_html.terminal is not None and ojs_html.terminal.terminal_url == OJS_HTML
    assert ojs_html.processing is not None and ojs_html.processing.kind == "html"
    # the composition root gives the HTML processor the PDF table: its html0 cells
    assert ojs_html.file_meta is not None
    html0 = ingest_demo.services.pdftable.get(ojs_html.file_meta.sha1hex, ["html0"])
    assert html0 is not None and html0.cells["html0"]["html_status"] == "success"
    meta = html0.cells["html0"]["html_meta"]
    assert meta["scope"] == "article-fulltext" and meta["word_count"] > 1000
    # the full-text page has no meta tags (only a <title>): the landing page's biblio
    # stands, as in the original's row; sub-resources it has none
    assert ojs_html.html_biblio is not None and len(ojs_html.hops or ()) == 2
    assert meta["biblio"] == ojs_html.html_biblio.to_json() and meta["resources"] is None
    assert scielo.terminal is not None and scielo.terminal.terminal_url == SCIELO_XML
    assert scielo.processing is not None and scielo.processing.kind == "xml"
    assert (scielo.processing.references or 0) > 0
    # the references of the JATS are grobid_refs rows keyed by the document
    with begin(ingest_demo.services.engine) as conn:
        row = conn.execute(select(grobid_refs).where(
            grobid_refs.c.source == "document",
            grobid_refs.c.source_id == scielo.processing.uuid)).one()
    assert len(row.refs_json) == scielo.processing.references


# --- every status ---------------------------------------------------------------------

LANDING = """<html><head><title>An article</title>
<meta name="citation_title" content="An article">{meta}</head>
<body><h1>An article</h1><p>Some text of the abstract.</p>{body}</body></html>"""


def _landing(meta: str = "", body: str = "") -> Answer:
    return page(LANDING.format(meta=meta, body=body))


@pytest.fixture
def pdf_bytes() -> bytes:
    path = PDFS / "two_pages.pdf"
    if not path.is_file():
        unavailable("../shared/data/pdfs is not there", "SHARED_DATA")
    return path.read_bytes()


@pytest.fixture
def ingest_web(web: WebSite) -> Iterator[Any]:
    opened: list[Ingest] = []

    def make(**overrides: Any) -> Ingest:
        ingest = Ingest(web.routes(), **overrides)
        opened.append(ingest)
        return ingest

    yield make
    for ingest in opened:
        ingest.close()


def test_statuses_of_the_crawl(web: WebSite, ingest_web: Any, pdf_bytes: bytes) -> None:
    pdf = Answer(body=pdf_bytes, content_type="application/pdf")
    cases = {
        # a PDF behind a citation_pdf_url, served as text/html: the bytes decide
        "success": web.add("https://a.example/article/1", _landing(
            '<meta name="citation_pdf_url" content="/article/1.pdf">')),
        "no-pdf-link": web.add("https://a.example/article/2", _landing()),
        "wrong-mimetype": web.add("https://a.example/article/3", Answer(
            body=b"\x89PNG\r\n\x1a\n" + bytes(2000), content_type="image/png")),
        "terminal-bad-status": web.add("https://a.example/article/4", page("gone", 404)),
        "redirect-loop": web.add("https://a.example/loop/a", redirect("/loop/b")),
        "link-loop": web.add("https://a.example/article/6", _landing(
            '<meta name="citation_pdf_url" content="/article/6/pdf">')),
        "max-hops-exceeded": web.add("https://a.example/chain/0", _landing(
            '<meta name="citation_pdf_url" content="/chain/1">')),
        "skip-url-blocklist": "https://web.archive.org/web/2020/https://a.example/x",
        "blocked-cookie": web.add("https://a.example/article/9", page(
            "<html><head><title>Just a moment...</title></head><body>"
            "<noscript>Please enable JavaScript and cookies to continue</noscript>"
            "<p>Checking your browser before accessing a.example.</p></body></html>",
            status=200)),
        "robots-disallowed": web.add("https://private.example/article/10", _landing()),
        "fetch-error": "https://down.example/nothing-listens-here",
        "blocked-address": "http://127.0.0.1:9/an-internal-address",
        "bad-request": "ftp://a.example/article.pdf",
    }
    web.add("https://a.example/article/1.pdf", Answer(body=pdf_bytes, content_type="text/html"))
    web.add("https://a.example/loop/b", redirect("/loop/a"))
    web.add("https://a.example/article/6/pdf", _landing(
        '<meta name="citation_pdf_url" content="/article/6">'))
    for i in range(1, 12):
        web.add(f"https://a.example/chain/{i}", _landing(
            f'<meta name="citation_pdf_url" content="/chain/{i + 1}">'))
    web.add("https://private.example/robots.txt",
            Answer(body=b"User-agent: *\nDisallow: /article/\n", content_type="text/plain"))
    web.add("https://a.example/robots.txt", Answer(body=b"", content_type="text/plain"))
    ingest = Ingest({**web.routes(), "https://down.example": "http://127.0.0.1:9"})
    try:
        got = {status: ingest(url) for status, url in cases.items()}
    finally:
        ingest.close()
    assert {want: r["status"] for want, r in got.items()} == {s: s for s in cases}
    assert all(r["hit"] is (s == "success") for s, r in got.items())
    for status, r in got.items():
        if status != "success":
            assert r.get("error_message"), (status, r)
    assert got["success"]["processing"]["kind"] == "pdf"
    assert len(got["max-hops-exceeded"]["hops"]) == 6
    # nothing was fetched from a blocklisted host or a disallowed path
    assert not any(r.startswith("web.archive.org") for r in web.requests)
    assert "private.example/article/10" not in web.requests
    del pdf


def test_a_link_back_to_the_same_page_in_another_spelling_is_a_link_loop(
        web: WebSite, ingest_web: Any) -> None:
    # the visited set compares canonical URLs: query order, dot segments, escapes
    web.add("https://d.example/view?id=7&lang=en", _landing(
        '<meta name="citation_pdf_url" content="/x/../view?lang=en&id=%37">'))
    web.add("https://d.example/robots.txt", page("", 404))
    r = ingest_web()("https://d.example/view?id=7&lang=en")
    assert r["status"] == "link-loop", r
    assert r["hops"] == ["https://d.example/view?id=7&lang=en"]


def test_the_type_of_a_terminal_is_told_by_its_bytes(web: WebSite, ingest_web: Any,
                                                     pdf_bytes: bytes) -> None:
    # a "PDF" link that answers an HTML page without links: no-pdf-link, not success
    web.add("https://b.example/a", _landing('<meta name="citation_pdf_url" content="/a.pdf">'))
    web.add("https://b.example/a.pdf", Answer(body=b"<html><body>Sign in to read</body></html>",
                                              content_type="application/pdf"))
    web.add("https://b.example/robots.txt", page("", 404))
    r = ingest_web()("https://b.example/a")
    assert r["status"] == "no-pdf-link" and r["hit"] is False
    assert r["terminal"]["terminal_url"] == "https://b.example/a.pdf"


def test_a_pdf_on_another_host_that_refuses_is_terminal_bad_status(
        web: WebSite, ingest_web: Any) -> None:
    web.add("https://c.example/a", _landing(
        '<meta name="citation_pdf_url" content="https://cdn.c-files.example/a.pdf">'))
    web.add("https://cdn.c-files.example/a.pdf", page("Forbidden", 403))
    r = ingest_web()("https://c.example/a")
    assert r["status"] == "terminal-bad-status"
    assert r["terminal"]["terminal_status_code"] == 403
    assert r["hops"] == ["https://c.example/a", "https://cdn.c-files.example/a.pdf"]


def test_an_endless_page_is_too_large_and_nothing_is_half_archived(
        web: WebSite, ingest_web: Any) -> None:
    web.add("https://d.example/endless", Answer(endless=b"<p>" + b"x" * 65536,
                                                content_type="text/html; charset=utf-8"))
    ingest = ingest_web(crawl_max_html_mb=1, http_max_mb=2)
    r = ingest("https://d.example/endless")
    assert r["status"] == "too-large" and r["hit"] is False
    # the message names the setting that fired: a page's, not a file's
    assert "1 MB limit (crawl.max_html_mb)" in r["error_message"], r["error_message"]
    web.add("https://d.example/endless.pdf", Answer(endless=b"%PDF-1.4 " + b"x" * 65536,
                                                    content_type="application/pdf"))
    big = ingest("https://d.example/endless.pdf")
    assert big["status"] == "too-large"
    assert "2 MB limit (http.max_mb)" in big["error_message"], big["error_message"]
    with begin(ingest.services.engine) as conn:
        assert conn.execute(select(func.count()).select_from(web_cdx).where(
            web_cdx.c.url == "https://d.example/endless")).scalar_one() == 0


def test_odd_links_and_pages_get_a_status_not_a_crash(web: WebSite, ingest_web: Any,
                                                      pdf_bytes: bytes) -> None:
    pdf = Answer(body=pdf_bytes, content_type="application/pdf")
    web.add("https://e.example/robots.txt", page("", 404))
    # javascript:, data: and self links are not followed; the relative one is
    web.add("https://e.example/odd", _landing(body=(
        '<a href="javascript:void(0)">Download PDF</a>'
        '<a href="data:application/pdf;base64,JVBERi0=">PDF</a>'
        '<a href="/odd">PDF</a><a href="files/the%20paper.pdf">Download PDF</a>')))
    web.add("https://e.example/files/the%20paper.pdf", pdf)
    # protocol-relative citation_pdf_url
    web.add("https://e.example/proto", _landing(
        '<meta name="citation_pdf_url" content="//e.example/files/p.pdf">'))
    web.add("https://e.example/files/p.pdf", pdf)
    # malformed HTML, wrong charset declared, bytes that are not UTF-8
    web.add("https://e.example/broken", Answer(
        body=b'<html><head><meta charset="utf-8"><title>Caf\xe9 \xff\xfe</title>'
             b'<meta name="citation_pdf_url" content="/files/p.pdf"<body><p><div>\x00\x01',
        content_type="text/html; charset=utf-8"))
    # unicode in the URL
    web.add("https://e.example/%C3%A4rtikel", _landing(
        '<meta name="citation_pdf_url" content="/files/p.pdf">'))
    ingest = ingest_web()
    odd = ingest("https://e.example/odd")
    assert odd["status"] == "success", odd
    assert odd["terminal"]["terminal_url"] == "https://e.example/files/the%20paper.pdf"
    assert ingest("https://e.example/proto")["status"] == "success"
    broken = ingest("https://e.example/broken")
    assert broken["status"] in ("success", "no-pdf-link"), broken
    assert ingest("https://e.example/ärtikel")["status"] == "success"
    bad = ingest_web()
    for url in ("", "not a url", "https://", "javascript:alert(1)", "https://e.example/\n"):
        r = bad.ingester.ingest(IngestRequest.model_construct(
            ingest_type="pdf", base_url=url, force_recrawl=False))
        assert r.status == "bad-request", (url, r)


def test_unknown_types_are_skipped(ingest_demo: Ingest) -> None:
    r = ingest_demo("https://doi.org/10.1371/journal.pone.0213978", "component")
    assert r["status"] == "skip-ingest-type" and r["hit"] is False


# --- commands ---------------------------------------------------------------------------


def test_ingest_file_command_and_persist(demo: DemoSite, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    import orjson

    monkeypatch.setenv("SANDCRAWLER_HTTP_ROUTES", orjson.dumps(demo.routes()).decode())
    monkeypatch.setenv("SANDCRAWLER_CRAWL_HOST_DELAY", "0")
    res = invoke(["ingest", "file", "https://doi.org/10.7717/peerj.4375"])
    assert res.exit_code == 0, res.stderr
    result = orjson.loads(res.stdout)
    assert result["status"] == "success"
    miss = invoke(["ingest", "file", OJS])
    assert miss.exit_code == 1 and "no-pdf-link" in miss.stderr
    assert orjson.loads(miss.stdout)["status"] == "no-pdf-link"  # one line on stdout too
    # both are recorded as `persist ingest-file` records them; the DOI's request too
    counts = orjson.loads(invoke(["db", "status", "--json"]).stdout)["row_counts"]
    assert (counts["ingest_file_result"], counts["ingest_request"]) == (2, 1)
    # a bare DOI is the same request as its doi.org URL: already recorded
    by_doi = invoke(["ingest", "file", "--pretty", "10.7717/PeerJ.4375"])
    assert by_doi.stdout.startswith("{\n  ")
    assert orjson.loads(by_doi.stdout)["status"] == "success-existing"
    counts = orjson.loads(invoke(["db", "status", "--json"]).stdout)["row_counts"]
    assert (counts["ingest_file_result"], counts["ingest_request"]) == (2, 1)
    requests = tmp_path / "requests.json"
    lines = (orjson.dumps(r.model_dump(exclude_unset=True)) + b"\n" for r in REQUESTS)
    requests.write_bytes(b"".join(lines)
                         + b'{"ingest_type": "pdf"}\nnot json\n')
    res = invoke(["ingest", "requests", "--no-progress", str(requests)])
    lines = [orjson.loads(x) for x in res.stdout.splitlines()]
    # PeerJ was ingested by the command above: archived and processed, nothing fetched
    assert [x["status"] for x in lines] == [
        "success", "success-existing", "success", "success", "success",
        "no-pdf-link", "bad-request", "bad-json"]
    # a line that is not JSON has no request to echo: the result says where it is
    assert lines[-1]["request"] == {} and "(record at " in lines[-1]["error_message"]
    results = tmp_path / "results.json"
    results.write_text(res.stdout)
    res = invoke(["persist", "ingest-file", "--no-progress", str(results)])
    assert res.exit_code == 0, res.stderr
    res = invoke(["db", "status", "--json"])
    counts = orjson.loads(res.stdout)["row_counts"]
    # (type, base_url): the six requests and the OJS page's miss above; the bad request has none
    assert counts["ingest_file_result"] == 7
    assert counts["ingest_request"] == 6
    # a recorded hit is success-existing without a fetch
    before = len(demo.requests)
    res = invoke(["ingest", "file", "https://doi.org/10.7717/peerj.4375"])
    assert orjson.loads(res.stdout)["status"] == "success-existing"
    assert len(demo.requests) == before


def test_requests_from_dois(tmp_path: Path) -> None:
    import orjson

    dois = tmp_path / "dois.txt"
    dois.write_text("10.1371/journal.pone.0213978\nhttps://doi.org/10.7717/PEERJ.4375\n"
                    "# a comment\n\nnot a doi\n10.1000/a#b?c\n")
    res = invoke(["ingest", "requests-from-dois", str(dois)])
    # the bad line is said with its number; requests were made: exit 0, as batch commands
    assert res.exit_code == 0
    assert f"{dois}:5: not a DOI: 'not a doi'" in res.stderr
    assert "3 request(s), 1 line(s) skipped" in res.stderr
    lines = [orjson.loads(x) for x in res.stdout.splitlines()]
    assert [x["base_url"] for x in lines] == [
        "https://doi.org/10.1371/journal.pone.0213978", "https://doi.org/10.7717/peerj.4375",
        "https://doi.org/10.1000/a%23b%3Fc"]
    assert lines[1]["ext_ids"] == {"doi": "10.7717/peerj.4375"}
    assert lines[1]["link_source"] == "doi" and lines[1]["ingest_type"] == "pdf"


def test_requests_from_dois_of_what_is_no_doi_list(tmp_path: Path) -> None:
    none = tmp_path / "none.txt"
    none.write_text("nope\n# a comment\n")
    res = invoke(["ingest", "requests-from-dois", str(none)])
    assert res.exit_code == 1 and res.stdout == ""
    assert "0 request(s), 1 line(s) skipped" in res.stderr
    pdf = REPO / "examples" / "paper.pdf"
    res = invoke(["ingest", "requests-from-dois", str(pdf)])
    assert res.exit_code == 1 and res.stdout == ""
    assert res.stderr.strip().splitlines() == [
        f"Error: {pdf}: the first 5 lines are not DOIs: this command reads DOIs, one per "
        "line; is it a PDF?"]


def test_no_xml_link_and_no_html_fulltext(web: WebSite, ingest_web: Any) -> None:
    web.add("https://f.example/robots.txt", page("", 404))
    web.add("https://f.example/article", _landing())
    # a link to the "full text" that is a bare landing page: too little text
    web.add("https://f.example/short", page(
        '<html><head><meta name="citation_fulltext_html_url" content="/short/full">'
        "</head><body><p>Log in.</p></body></html>"))
    web.add("https://f.example/short/full", page("<html><body><p>Menu</p></body></html>"))
    # a citation_pdf_url that is javascript: is no link at all
    web.add("https://f.example/js", _landing(
        '<meta name="citation_pdf_url" content="javascript:openPdf()">'))
    ingest = ingest_web()
    xml = ingest("https://f.example/article", "xml")
    assert xml["status"] == "no-xml-link" and xml["hit"] is False
    short = ingest("https://f.example/short", "html")
    assert short["status"] == "no-html-fulltext", short
    assert short["terminal"]["terminal_url"] == "https://f.example/short/full"
    assert short["processing"]["status"] == "no-main-text"
    assert ingest("https://f.example/js")["status"] == "no-pdf-link"
    assert not any("javascript" in r for r in web.requests)


def test_the_references_of_grobid_full_text_are_parsed(
        web: WebSite, ingest_web: Any, pdf_bytes: bytes, shared_data: Path) -> None:
    tei = shared_data / "sandcrawler-fixtures" / "23b29ea36382680716be08fc71aa81bd226e8a85.xml"
    web.add("https://g.example/robots.txt", page("", 404))
    web.add("https://g.example/paper.pdf", Answer(body=pdf_bytes, content_type="application/pdf"))
    with FakeGrobid(fulltext_tei=tei) as grobid:
        ingest = ingest_web(grobid_url=grobid.url)
        r = ingest("https://g.example/paper.pdf")
    assert r["status"] == "success" and r["hops"] == ["https://g.example/paper.pdf"]
    processing = r["processing"]
    assert processing["grobid_status"] == "success"
    assert processing["references"] == 100  # the TEI's listBibl
    with begin(ingest.services.engine) as conn:
        refs = conn.execute(select(grobid_refs.c.refs_json).where(
            grobid_refs.c.source_id == processing["uuid"])).scalar_one()
    assert len(refs) == 100 and refs[0].get("title")

