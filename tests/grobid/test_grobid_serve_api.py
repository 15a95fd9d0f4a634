"""``sandcrawler grobid-serve`` on loopback, every endpoint as GROBID's clients
call it: answers (TEI read back by ``grobid_tei_xml``, BibTeX), parameters,
statuses (200, 204, 400, 408, 413, 421, 500), hostile uploads and the metrics."""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path

import orjson
import pytest
import urllib3
from grobid_tei_xml import parse_citation_list_xml, parse_citation_xml, parse_document_xml

from sandcrawler.version import __version__
from sandcrawler_testkit.pdfs import make_pdf
from tests.grobid.serving import PDFS, REPO, Server
from tests.helpers.metrics import value
from tests.helpers.skips import unavailable

PLOS = PDFS["plos"].read_bytes()
PAPER = (REPO / "examples" / "paper.pdf").read_bytes()  # one page, nothing to extract
CITATION = "Graff, Expert. Opin. Ther. Targets (2002) 6(1): 103-113"
CITATIONS = [
    "Schindler DW. Phosphorus limitation of primary production in temperate lakes. "
    "Science 1977;195:260-2.",
    "Howarth RW, Marino R. Nitrogen fixation in freshwater, estuarine, and marine "
    "ecosystems. Limnol Oceanogr. 1988;33(4):669-687.",
    CITATION,
    "Bell AC, Felsenfeld G. Methylation of a CTCF-dependent boundary controls imprinted "
    "expression of the Igf2 gene. Nature. 2000;405:482-485.",
    "Lowe DG. Distinctive image features from scale-invariant keypoints. International "
    "Journal of Computer Vision, 60(2):91-110, 2004.",
]
BIBTEX = "application/x-bibtex"


def _tei(answer: urllib3.BaseHTTPResponse) -> bytes:
    assert answer.status == 200, (answer.status, answer.data[:500])
    assert answer.headers["Content-Type"] == "application/xml; charset=UTF-8"
    return answer.data


def _balanced(bibtex: str) -> bool:
    depth = 0
    for i, c in enumerate(bibtex):
        if c in "{}" and (i == 0 or bibtex[i - 1] != "\\"):
            depth += 1 if c == "{" else -1
            if depth < 0:
                return False
    return depth == 0


# --- the service's own answers ---------------------------------------------------------


def test_isalive_version_and_descriptions(served: Server) -> None:
    alive = served.get("/api/isalive")
    assert (alive.status, alive.data) == (200, b"true")
    assert alive.headers["Content-Type"].startswith("text/plain")
    version = served.get("/api/version")
    assert version.status == 200 and version.headers["Content-Type"] == "application/json"
    assert orjson.loads(version.data) == {"version": __version__, "revision": "sandcrawler"}
    assert served.get("/api/version", Accept="text/plain").data == __version__.encode()
    assert b"grobid-service documentation" in served.get("/api/grobid").data
    health = orjson.loads(served.get("/api/health").data)
    assert health["ready"] is True and health["pool"]["maxActive"] == 2
    assert served.get("/nothing/here").status == 404
    assert served.get("/api/processCitation").status == 405  # a POST service


def test_a_foreign_host_is_refused(served: Server) -> None:
    """The site's Guard: a DNS-rebinding name never reaches the API."""
    answer = served.raw(b"GET /api/isalive HTTP/1.1\r\nHost: evil.example\r\n"
                        b"Connection: close\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 421 ")
    assert b"grobid_serve.allowed_hosts" in answer


# --- PDFs -------------------------------------------------------------------------------


def test_fulltext(served: Server) -> None:
    doc = parse_document_xml(_tei(served.pdf("/api/processFulltextDocument", PLOS)))
    assert doc.header.title and doc.header.title.startswith(
        "Assessment on reticuloendotheliosis virus infection")
    assert [a.surname for a in doc.header.authors][:2] == ["Li", "Wang"]
    assert doc.abstract and "yolk antibody" in doc.abstract
    assert len(doc.citations or []) >= 20
    assert all(c.unstructured is None for c in doc.citations or [])  # includeRawCitations=0
    raw = parse_document_xml(_tei(served.pdf("/api/processFulltextDocument", PLOS,
                                             [("includeRawCitations", "1")])))
    assert all(c.unstructured for c in raw.citations or [])
    assert [c.title for c in raw.citations or []] == [c.title for c in doc.citations or []]


def test_fulltext_takes_grobid_s_options(served: Server) -> None:
    """What grobid_client_python and the original system send: teiCoordinates
    repeated, segmentSentences, generateIDs, the raw strings, PUT as POST."""
    fields = [("teiCoordinates", name) for name in
              ("ref", "figure", "persName", "formula", "biblStruct")]
    fields += [("segmentSentences", "1"), ("generateIDs", "1"),
               ("includeRawAffiliations", "1"), ("includeRawCitations", "1"),
               ("consolidateHeader", "1"), ("consolidateCitations", "0"),
               ("flavor", "")]
    for method in ("POST", "PUT"):
        doc = parse_document_xml(_tei(served.pdf("/api/processFulltextDocument", PLOS,
                                                 fields, method=method)))
        assert doc.header.title and len(doc.citations or []) >= 20


def test_header(served: Server) -> None:
    answer = served.pdf("/api/processHeaderDocument", PLOS, accept="application/xml")
    doc = parse_document_xml(_tei(answer))
    assert doc.header.title and doc.header.title.startswith("Assessment on")
    assert doc.header.doi == "10.1371/journal.pone.0213978"
    assert not doc.citations  # the header alone
    put = served.pdf("/api/processHeaderDocument", PLOS, method="PUT")
    assert parse_document_xml(_tei(put)).header.title == doc.header.title


def test_header_as_bibtex(served: Server) -> None:
    answer = served.pdf("/api/processHeaderDocument", PLOS, accept=BIBTEX)
    assert answer.status == 200
    assert answer.headers["Content-Type"] == "application/x-bibtex; charset=UTF-8"
    text = answer.data.decode()
    assert text.startswith("@article{-1,\n  author = {Li, Yang and Wang, Tuanjie")
    assert "  journal = {PLOS ONE},\n" in text and "  doi = {10.1371/journal.pone.0213978}" in text
    assert re.search(r"  title = \{Assessment on reticuloendotheliosis", text)
    assert _balanced(text) and text.endswith("}\n")


def test_references(served: Server) -> None:
    refs = parse_citation_list_xml(_tei(served.pdf("/api/processReferences", PLOS,
                                                   [("includeRawCitations", "1")])))
    full = parse_document_xml(_tei(served.pdf("/api/processFulltextDocument", PLOS)))
    assert [r.title for r in refs] == [c.title for c in full.citations or []]
    assert all(r.unstructured for r in refs)
    bibtex = served.pdf("/api/processReferences", PLOS, accept=BIBTEX)
    assert bibtex.status == 200
    keys = re.findall(r"^@\w+\{(\d+),$", bibtex.data.decode(), re.M)
    assert keys == [str(i) for i in range(len(refs))]
    assert _balanced(bibtex.data.decode())


def test_nothing_extracted_is_204(served: Server) -> None:
    """A one-page PDF with no header and no references: GROBID's 204."""
    for path in ("/api/processHeaderDocument", "/api/processReferences"):
        answer = served.pdf(path, PAPER)
        assert (answer.status, answer.data) == (204, b""), path


def test_pages_window(served: Server) -> None:
    pdf = make_pdf(["First page words.", "Second page words.", "Third page words."])
    for start, end in (("2", "3"), ("-1", "-1"), ("1", "1")):
        answer = served.pdf("/api/processFulltextDocument", pdf,
                            [("start", start), ("end", end)])
        assert answer.status in (200, 204), answer.data
    past = served.pdf("/api/processFulltextDocument", pdf, [("start", "9")])
    assert past.status == 500 and past.data.startswith(b"[BAD_INPUT_DATA] empty-pdf: ")


@pytest.mark.parametrize(("fields", "message"), [
    ([("consolidateHeader", "7")], b"consolidateHeader must be one of 0, 1, 2, 3"),
    ([("consolidateCitations", "3")], b"consolidateCitations must be one of 0, 1, 2"),
    ([("includeRawCitations", "yes")], b"includeRawCitations must be 0 or 1"),
    ([("start", "two")], b"start must be a page number"),
    ([("start", "5"), ("end", "2")], b"end (2) is before start (5)"),
])
def test_bad_parameters_are_400(served: Server, fields: list[tuple[str, str]],
                                message: bytes) -> None:
    answer = served.pdf("/api/processFulltextDocument", PLOS, fields)
    assert answer.status == 400 and message in answer.data, answer.data
    assert answer.data.count(b"\n") == 1


def test_bad_requests_are_400(served: Server) -> None:
    none = served.pdf("/api/processFulltextDocument", None, [("consolidateHeader", "0")])
    assert none.status == 400 and b"`input` is missing or empty" in none.data
    empty = served.pdf("/api/processHeaderDocument", b"")
    assert empty.status == 400
    json = served.http.request("POST", served.url + "/api/processFulltextDocument",
                               body=b"{}", headers={"Content-Type": "application/json"})
    assert json.status == 400 and b"expected a body of multipart/form-data" in json.data
    broken = served.http.request(
        "POST", served.url + "/api/processFulltextDocument", body=b"--xyz\r\nnonsense",
        headers={"Content-Type": "multipart/form-data; boundary=xyz"})
    assert broken.status == 400


@pytest.mark.parametrize(("pdf", "body"), [
    (b"<html><body>not a PDF</body></html>", b"[BAD_INPUT_DATA] not-pdf: "),
    (make_pdf(["secret"], user_password="pw"), b"[BAD_INPUT_DATA] encrypted: "),
    (make_pdf([None, None]), b"[NO_BLOCKS] no-text: "),
    (b"%PDF-1.4\n" + b"\x00garbage" * 100, b"[BAD_INPUT_DATA] bad-pdf: "),
], ids=["html", "encrypted", "blank-pages", "damaged"])
def test_what_is_not_a_readable_pdf_is_500_with_its_kind(served: Server, pdf: bytes,
                                                          body: bytes) -> None:
    """GROBID answers 500 with ``[KIND] message`` (a non-PDF is its BAD_INPUT_DATA,
    pdfalto failing); here the cascade's status follows the kind."""
    answer = served.pdf("/api/processFulltextDocument", pdf)
    assert answer.status == 500 and answer.data.startswith(body), answer.data
    assert answer.headers["Content-Type"].startswith("text/plain")


# --- text services ----------------------------------------------------------------------


def test_citation(served: Server) -> None:
    answer = served.form("/api/processCitation", [("citations", CITATION)])
    biblio = parse_citation_xml(_tei(answer))
    assert biblio is not None
    assert (biblio.journal, biblio.volume, biblio.issue, biblio.date) == (
        "Expert. Opin. Ther. Targets", "6", "1", "2002")
    assert (biblio.first_page, biblio.last_page) == ("103", "113")
    assert biblio.unstructured is None and b"xml:id" not in answer.data
    raw = parse_citation_xml(_tei(served.form("/api/processCitation", [
        ("citations", CITATION), ("includeRawCitations", "1")])))
    assert raw is not None and raw.unstructured == CITATION
    # no catalog here (no match index): consolidation is answered as 0, as GROBID
    # without Crossref would
    consolidated = parse_citation_xml(_tei(served.form("/api/processCitation", [
        ("citations", CITATION), ("consolidateCitations", "1")])))
    assert consolidated is not None and consolidated.doi is None


def test_citation_as_bibtex_is_grobid_s_example(served: Server) -> None:
    """GROBID's documented answer for this string, field for field (GROBID writes
    no ``date`` for a year alone; ours adds it)."""
    answer = served.form("/api/processCitation", [("citations", CITATION)], accept=BIBTEX)
    assert answer.status == 200
    assert answer.data.decode() == (
        "@article{-1,\n  author = {Graff},\n  journal = {Expert. Opin. Ther. Targets},\n"
        "  date = {2002},\n  year = {2002},\n  pages = {103--113},\n  volume = {6},\n"
        "  number = {1}\n}\n")


def test_citation_statuses(served: Server) -> None:
    assert served.form("/api/processCitation", [("citations", "  ")]).status == 204
    missing = served.form("/api/processCitation", [("consolidateCitations", "0")])
    assert missing.status == 400 and b"no `citations` field" in missing.data
    multipart = served.pdf("/api/processCitation", None, [("citations", CITATION)])
    assert parse_citation_xml(_tei(multipart)) is not None  # a multipart form too


def test_citation_list(served: Server) -> None:
    answer = served.form("/api/processCitationList",
                         [*(("citations", c) for c in CITATIONS), ("includeRawCitations", "1")])
    refs = parse_citation_list_xml(_tei(answer))
    assert [r.unstructured for r in refs] == CITATIONS
    assert [r.date for r in refs] == ["1977", "1988", "2002", "2000", "2004"]
    assert refs[0].title == "Phosphorus limitation of primary production in temperate lakes"
    bibtex = served.form("/api/processCitationList", [("citations", c) for c in CITATIONS],
                         accept=BIBTEX).data.decode()
    assert re.findall(r"^@(\w+)\{(\d+),$", bibtex, re.M) == [
        ("article", str(i)) for i in range(5)]
    assert _balanced(bibtex)
    assert served.form("/api/processCitationList", [("citations", c) for c in CITATIONS],
                       method="PUT").status == 405  # POST only, as GROBID


def test_citation_list_of_5000(served: Server) -> None:
    """The original system sends up to 5,000 at a time; one more is refused."""
    strings = [f"{CITATIONS[i % 5]} [{i}]" for i in range(5000)]
    started = time.monotonic()
    answer = served.form("/api/processCitationList", [("citations", s) for s in strings])
    refs = parse_citation_list_xml(_tei(answer))
    assert len(refs) == 5000 and time.monotonic() - started < 120
    over = served.form("/api/processCitationList", [("citations", s) for s in strings]
                       + [("citations", "one more")])
    assert over.status == 400 and b"5001 citations in one request" in over.data


def test_names(served: Server) -> None:
    """GROBID's documented examples."""
    header = served.form("/api/processHeaderNames", [("names", "John Doe and Jane Smith")])
    assert header.status == 200
    assert re.findall(r'<forename type="first">(\w+)</forename>\s*<surname>(\w+)</surname>',
                      header.data.decode()) == [("John", "Doe"), ("Jane", "Smith")]
    assert header.data.decode().count('<persName xmlns="http://www.tei-c.org/ns/1.0">') == 2
    cited = served.form("/api/processCitationNames",
                        [("names", "J. Doe, J. Smith and B. M. Jackson")])
    text = cited.data.decode()
    assert re.findall(r"<surname>(\w+)</surname>", text) == ["Doe", "Smith", "Jackson"]
    assert '<forename type="middle">M</forename>' in text
    assert served.form("/api/processHeaderNames", [("names", " ")]).status == 204
    assert served.form("/api/processCitationNames", [("nom", "x")]).status == 400


def test_affiliations(served: Server) -> None:
    one = served.form("/api/processAffiliations",
                      [("affiliations", "Stanford University, California, USA")])
    assert one.status == 200
    text = one.data.decode()
    assert text.startswith("<affiliation>")
    assert '<orgName type="institution">Stanford University</orgName>' in text
    assert "<country>USA</country>" in text
    assert served.form("/api/processAffiliations", [("affiliations", "")]).status == 204
    assert served.form("/api/processAffiliations", []).status == 400


def test_date(served: Server) -> None:
    answer = served.form("/api/processDate", [("date", "September 16th, 2001")])
    assert (answer.status, answer.data) == (200, b'<date when="2001-09-16" />\n')
    assert served.form("/api/processDate", [("date", "no date here")]).status == 204
    assert served.form("/api/processDate", []).status == 400


# --- hostile uploads --------------------------------------------------------------------


def _multipart_head(length: int | None, boundary: str = "b0und") -> bytes:
    size = f"Content-Length: {length}\r\n" if length is not None \
        else "Transfer-Encoding: chunked\r\n"
    return (f"POST /api/processFulltextDocument HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Content-Type: multipart/form-data; boundary={boundary}\r\n{size}"
            "Connection: close\r\n\r\n").encode()


def test_an_upload_over_the_limit_is_413(served: Server) -> None:
    declared = served.raw(_multipart_head(3 * 2**20))  # said before a byte is sent
    assert declared.startswith(b"HTTP/1.1 413 ")
    assert b"grobid_serve.max_upload_mb" in declared
    part = b"--b0und\r\nContent-Disposition: form-data; name=\"input\"; filename=\"a.pdf\"\r\n\r\n"
    chunk = b"%x\r\n%s\r\n" % (2**16, b"x" * 2**16)
    chunked = served.raw(_multipart_head(None) + b"%x\r\n%s\r\n" % (len(part), part),
                         chunks=[chunk] * 48)  # 3 MiB, counted as it comes
    assert chunked.startswith(b"HTTP/1.1 413 ")


def test_a_trickling_upload_is_408(served: Server) -> None:
    """A client sending a byte now and then holds no worker, and is cut off at the
    upload deadline (3 s here)."""
    started = time.monotonic()
    answer = served.raw(_multipart_head(10_000), chunks=[b"-"] * 40, pause=0.25)
    assert answer.startswith(b"HTTP/1.1 408 "), answer[:200]
    assert b"grobid_serve.upload_timeout" in answer
    assert time.monotonic() - started < 9


@pytest.mark.parametrize("pdf", [
    make_pdf([f"page {i}: some words about lakes" for i in range(2000)]),
    make_pdf(["words over a decompression bomb"], page0_image=(20000, 20000)),
    make_pdf(["deep"], tree_depth=5000),
], ids=["2000-pages", "image-bomb", "deep-page-tree"])
def test_hostile_pdfs_get_a_status(served: Server, pdf: bytes) -> None:
    started = time.monotonic()
    answer = served.pdf("/api/processFulltextDocument", pdf)
    assert answer.status in (200, 204, 500), answer.data[:300]
    assert time.monotonic() - started < 90
    if answer.status == 200:
        parse_document_xml(answer.data)


def test_many_clients_at_once_get_answers(served: Server) -> None:
    """More requests than workers: each is answered, 200 or 503 (never hung)."""
    statuses: list[int] = []

    def one() -> None:
        statuses.append(served.pdf("/api/processHeaderDocument", PLOS).status)

    threads = [threading.Thread(target=one) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert len(statuses) == 6 and set(statuses) <= {200, 503} and 200 in statuses


# --- metrics ----------------------------------------------------------------------------


def test_metrics(served: Server) -> None:
    assert served.form("/api/processDate", [("date", "2001")]).status == 200
    assert served.pdf("/api/processHeaderDocument", b"not a pdf").status == 500
    samples = served.metrics()
    assert value(samples, "sandcrawler_grobid_serve_workers") == 2
    assert value(samples, "sandcrawler_grobid_serve_workers_busy") == 0
    assert (value(samples, "sandcrawler_grobid_serve_requests_total",
                  endpoint="processDate", status="200") or 0) >= 1
    assert (value(samples, "sandcrawler_grobid_serve_requests_total",
                  endpoint="processHeaderDocument", status="500") or 0) >= 1
    assert (value(samples, "sandcrawler_grobid_serve_request_seconds_count",
                  endpoint="processDate") or 0) >= 1
    assert (value(samples, "sandcrawler_grobid_serve_extractions_total",
                  status="not-pdf") or 0) >= 1
    assert value(samples, "process_resident_memory_bytes")


# --- real PDFs of ../shared/data (optional) ---------------------------------------------


def test_the_shared_pdfs(served: Server, shared_data: Path) -> None:
    """GROBID's own test PDFs: an answer for each, and the TEI reads back."""
    pdfs = sorted((shared_data / "pdfs").glob("*.pdf"))
    if not pdfs:
        unavailable(f"no PDFs in {shared_data / 'pdfs'}", "SHARED_DATA")
    found = 0
    for pdf in pdfs:
        data = pdf.read_bytes()
        header = served.pdf("/api/processHeaderDocument", data)
        assert header.status in (200, 204), (pdf.name, header.data[:300])
        if header.status == 200:
            parse_document_xml(header.data)
        refs = served.pdf("/api/processReferences", data, [("includeRawCitations", "1")])
        assert refs.status in (200, 204), (pdf.name, refs.data[:300])
        if refs.status == 200:
            parsed = parse_citation_list_xml(refs.data)
            assert all(r.unstructured for r in parsed)
            found += len(parsed)
    assert found >= 50
