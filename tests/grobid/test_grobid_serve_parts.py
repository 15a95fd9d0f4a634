"""The service's parts on their own: the form reader (every chunking of a body,
malformed and hostile bodies), GROBID's parameters, BibTeX escaping, dates, the
TEI fragments, consolidation's merge, the pool, the settings section."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
import urllib3
from grobid_tei_xml import parse_citation_list_xml, parse_citation_xml
from grobid_tei_xml.types import GrobidAuthor, GrobidBiblio

from sandcrawler.app.settings import load_settings
from sandcrawler.config import describe_settings
from sandcrawler.docparse.assembly.affiliations import Address, Affiliation
from sandcrawler.docparse.assembly.names import PersonName
from sandcrawler.grobid.bibtex import bibtex_entry, text_value, verbatim_value
from sandcrawler.grobid.dates import parse_date
from sandcrawler.grobid.forms import Form, FormRejected, Limits, MultipartParser, read_form
from sandcrawler.grobid.fragments import (
    affiliations_tei,
    citation_list_tei,
    citation_tei,
    persons_tei,
)
from sandcrawler.grobid.params import ParamError, citation_params, document_params
from sandcrawler.grobid.pool import WorkerPool
from sandcrawler.grobid.service import ERROR_KINDS, USABLE
from sandcrawler.match.consolidate import merge
from sandcrawler.records.statuses import ExtractStatus, LayoutStatus, SandboxStatus

#: the boundary's near misses in a file part (the delimiter is CRLF, "--", the
#: boundary, then CRLF or "--": a producer never puts that inside a part)
PDF = b"%PDF-1.4\r\n--b0un\r\n-b0und\r\n--b0unx --b0und\r\n\r\n--b0u\r\nend\r\n" * 50


def _body(fields: list[tuple[str, Any]], boundary: str = "b0und") -> tuple[bytes, str]:
    body, content_type = urllib3.encode_multipart_formdata(fields, boundary=boundary)
    return body, content_type


def _parse(body: bytes, spool: Path, chunk: int, boundary: bytes = b"b0und") -> Form:
    form = Form()
    parser = MultipartParser(boundary, form, Limits(2**30, 10, spool))
    try:
        for i in range(0, len(body), chunk):
            parser.feed(body[i:i + chunk])
        parser.finish()
    finally:
        parser.close()
    return form


FIELDS = [("consolidateHeader", "1"), ("teiCoordinates", "ref"), ("teiCoordinates", "figure"),
          ("names", "Jörg Müller ✓"), ("input", ("paper.pdf", PDF, "application/pdf")),
          ("empty", "")]


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 8, 9, 64, 1000, 10**9])
def test_multipart_in_any_chunks(tmp_path: Path, chunk: int) -> None:
    body, _ = _body(FIELDS)
    form = _parse(b"a preamble\r\n" + body + b"an epilogue", tmp_path, chunk)
    assert form.fields == {"consolidateHeader": ["1"], "teiCoordinates": ["ref", "figure"],
                           "names": ["Jörg Müller ✓"], "empty": [""]}
    upload = form.files["input"]
    assert (upload.filename, upload.size, upload.path.read_bytes()) == ("paper.pdf", len(PDF), PDF)
    form.close()
    assert not upload.path.exists()


def test_multipart_as_requests_and_curl_send_it(tmp_path: Path) -> None:
    """A file part without a content type or named by RFC 2231; ``input`` without a
    file name is still the file."""
    body = (b"--b0und\r\nContent-Disposition: form-data; name=\"input\"\r\n\r\n%PDF-x\r\n"
            b"--b0und\r\nContent-Disposition: form-data; name=\"other\"; "
            b"filename*=UTF-8''na%C3%AFve.pdf\r\nContent-Type: application/pdf\r\n\r\nab\r\n"
            b"--b0und--\r\n")
    form = _parse(body, tmp_path, 5)
    assert form.files["input"].path.read_bytes() == b"%PDF-x"
    assert form.files["other"].filename == "naïve.pdf"
    form.close()


@pytest.mark.parametrize(("body", "message"), [
    (b"--b0und\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nx\r\n", "ends before"),
    (b"--b0und\r\nX-Other: 1\r\n\r\nx\r\n--b0und--", "without Content-Disposition"),
    (b"--b0und\r\n\r\nx\r\n\r\n--b0und--", "without Content-Disposition"),
    (b"--b0und\r\nContent-Disposition: form-data\r\n\r\nx\r\n--b0und--", "without a name"),
    (b"--b0und\r\nContent-Disposition: form-data; name=\"a\"\r\n" + b"X: y\r\n" * 4000,
     "headers are too long"),
    (b"--b0und\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n\xff\xfe\r\n--b0und--",
     "not UTF-8"),
    (b"--b0und\r\nContent-Disposition: form-data; name=\"input\"\r\n\r\nx\r\n"
     b"--b0und\r\nContent-Disposition: form-data; name=\"input\"\r\n\r\ny\r\n--b0und--",
     "more than one file"),
    (b"--b0und\r\nbroken header\r\n\r\nx\r\n--b0und--", "malformed multipart part header"),
])
def test_malformed_multipart_is_400(tmp_path: Path, body: bytes, message: str) -> None:
    spool = tmp_path / "spool"
    form = Form()
    parser = MultipartParser(b"b0und", form, Limits(2**30, 10, spool))
    with pytest.raises(FormRejected) as refused:
        parser.feed(body)
        parser.finish()
    parser.close()
    form.close()
    assert refused.value.status == 400 and message in str(refused.value)
    assert not list(spool.glob("*"))  # nothing spooled is left


def _read(body: list[bytes], content_type: str | None, length: str | None = None,
          *, max_bytes: int = 2**20, deadline: float = 5, pause: float = 0,
          spool: Path | None = None) -> Form:
    async def chunks() -> AsyncIterator[bytes]:
        for chunk in body:
            if pause:
                await anyio.sleep(pause)
            yield chunk

    async def run() -> Form:
        return await read_form(content_type, length, chunks(),
                               Limits(max_bytes, deadline, spool))

    return anyio.run(run)


def test_read_form_limits(tmp_path: Path) -> None:
    tmp_path = tmp_path / "spool"
    body, ctype = _body(FIELDS)
    form = _read([body[:100], body[100:]], ctype, str(len(body)), spool=tmp_path)
    assert form.get("names") == "Jörg Müller ✓" and form.files["input"].size == len(PDF)
    form.close()
    for length, chunks in ((str(len(body)), [body]), (None, [body[:500], body[500:]])):
        with pytest.raises(FormRejected) as over:
            _read(chunks, ctype, length, max_bytes=1000, spool=tmp_path)
        assert over.value.status == 413
    with pytest.raises(FormRejected) as slow:
        _read([body[:10]] * 20, ctype, pause=0.1, deadline=0.5, spool=tmp_path)
    assert slow.value.status == 408
    assert not list(tmp_path.iterdir())  # every spooled part removed
    for ctype_bad in (None, "application/json", "multipart/form-data"):
        with pytest.raises(FormRejected) as bad:
            _read([b"{}"], ctype_bad)
        assert bad.value.status == 400


def test_read_urlencoded() -> None:
    form = _read([b"citations=a%20b&citations=c&consolidate", b"Citations=1&x="],
                 "application/x-www-form-urlencoded; charset=UTF-8")
    assert form.getlist("citations") == ["a b", "c"]
    assert form.get("consolidateCitations") == "1" and form.get("x") == ""
    with pytest.raises(FormRejected) as bad:
        _read([b"citations=%ff"], "application/x-www-form-urlencoded")
    assert bad.value.status == 400 and "not UTF-8" in str(bad.value)


def _form(**fields: str | list[str]) -> Form:
    form = Form()
    for name, value in fields.items():
        for v in value if isinstance(value, list) else [value]:
            form.add(name, v)
    return form


def test_grobid_parameters() -> None:
    p = document_params(_form(consolidateHeader="3", consolidateCitations="2",
                              includeRawCitations="true", includeRawAffiliations="1",
                              teiCoordinates=["ref", "figure,biblStruct", "nonsense"],
                              segmentSentences="1", generateIDs="TRUE", start="2", end="-1"))
    assert (p.consolidate_header, p.consolidate_citations) == (3, 2)
    assert p.raw_citations and p.raw_affiliations and p.segment_sentences and p.generate_ids
    assert p.coordinates == {"ref", "figure", "biblStruct"}
    assert (p.start, p.end) == (2, None)
    defaults = document_params(_form())
    assert (defaults.consolidate_header, defaults.raw_citations, defaults.start,
            defaults.end) == (0, False, None, None)
    assert document_params(_form(), header=True, header_pages=2).end == 2
    assert citation_params(_form(includeRawCitations="0")).raw_citations is False
    for bad in ({"consolidateCitations": "3"}, {"generateIDs": "2"}, {"end": "1.5"},
                {"start": "3", "end": "2"}, {"start": "99999999999"}):
        with pytest.raises(ParamError):
            document_params(_form(**bad))


@pytest.mark.parametrize(("text", "escaped"), [
    ("{braces} and \\ back", r"\{braces\} and \textbackslash{} back"),
    ("50% & $5 #1 a_b x^2 ~y", r"50\% \& \$5 \#1 a\_b x\^{}2 \~{}y"),
    ("line\nbreak\x00and\ttab", "line break and tab"),
])
def test_bibtex_escapes_text(text: str, escaped: str) -> None:
    assert text_value(text) == escaped


def test_bibtex_entry() -> None:
    b = GrobidBiblio(
        authors=[GrobidAuthor(full_name="A B Smith", given_name="A", middle_name="B",
                              surname="Smith"), GrobidAuthor(full_name="Collective")],
        editors=[GrobidAuthor(full_name="E Ed", surname="Ed")],
        title="On {x} & y}", book_title="Proceedings of the 3rd Workshop", date="2001-09-16",
        first_page="10", last_page="20", doi="10.1/a{b}", arxiv_id="2101.00001",
        unstructured="raw } string")
    entry = bibtex_entry(b, "-1", abstract="An abstract.", keywords=["k1", "k_2"], raw=True)
    assert entry == (
        "@inproceedings{-1,\n  author = {Smith, A B and Collective},\n"
        "  title = {On \\{x\\} \\& y\\}},\n  booktitle = {Proceedings of the 3rd Workshop},\n"
        "  editor = {Ed},\n  date = {2001-09-16},\n  year = {2001},\n  month = {9},\n"
        "  day = {16},\n  pages = {10--20},\n  doi = {10.1/a%7Bb%7D},\n"
        "  eprint = {2101.00001},\n  abstract = {An abstract.},\n  keywords = {k1, k\\_2},\n"
        "  raw = {raw \\} string}\n}\n")
    assert bibtex_entry(GrobidBiblio(authors=[], book_title="A Book"), "0").startswith(
        "@inbook{0,")
    assert bibtex_entry(GrobidBiblio(authors=[]), "0") == "@misc{0,\n  author = {}\n}\n"
    assert verbatim_value("10.1000/x\\y") == "10.1000/x%5Cy"


@pytest.mark.parametrize(("text", "iso"), [
    ("September 16th, 2001", "2001-09-16"), ("16 Sept. 2001", "2001-09-16"),
    ("2001-09-16", "2001-09-16"), ("2001/9/6", "2001-09-06"), ("16.09.2001", "2001-09-16"),
    ("09/16/2001", "2001-09-16"), ("Sep 2001", "2001-09"), ("published 1999", "1999"),
    ("le 3 mars 1999", "1999-03-03"), ("31/02/2001", "2001"), ("no date", None),
])
def test_dates(text: str, iso: str | None) -> None:
    found = parse_date(text)
    assert (found.iso() if found else None) == iso


def test_fragments_read_back() -> None:
    graff = GrobidBiblio(authors=[GrobidAuthor(full_name="Graff", surname="Graff")],
                         journal="Expert Opin Ther Targets", volume="6", date="2002",
                         unstructured="Graff ...")
    one = citation_tei(graff, raw=False)
    assert b"xml:id" not in one and b"raw_reference" not in one
    parsed = parse_citation_xml(one)
    assert parsed is not None and parsed.journal == "Expert Opin Ther Targets"
    listed = parse_citation_list_xml(citation_list_tei([graff, graff], raw=True))
    assert [b.unstructured for b in listed] == ["Graff ...", "Graff ..."]
    persons = persons_tei([PersonName("Dr J R Smith Jr", given_name="J", middle_name="R",
                                      surname="Smith", suffix="Jr", title="Dr"),
                           PersonName("1")]).decode()
    assert persons.count("<persName") == 1
    assert "<roleName>Dr</roleName>" in persons and "<genName>Jr</genName>" in persons
    two = affiliations_tei([
        Affiliation("a", institutions=("Univ A", "Museum B"),
                    address=Address(settlement="Paris", country="France")),
        Affiliation("b", departments=("Dept of X",))]).decode()
    assert two.startswith("<xml>") and '<orgName type="institution" key="instit2">' in two
    assert "<settlement>Paris</settlement>" in two
    assert affiliations_tei([]) == b""


def test_merge_a_crossref_work() -> None:
    read = GrobidBiblio(authors=[GrobidAuthor(full_name="R Howarth", surname="Howarth",
                                              email="r@example.org")],
                        title="Nitrogen fixation", unstructured="as printed", id="12")
    work = {"title": ["Nitrogen fixation by <i>cyanobacteria</i>"],
            "author": [{"given": "Robert W.", "family": "Howarth"}],
            "container-title": ["Limnology and Oceanography"], "volume": "33",
            "issue": "4", "page": "688-701", "issued": {"date-parts": [[1988, 7]]},
            "publisher": "Wiley"}
    merge(read, work, "10.5555/x")
    assert (read.title, read.journal, read.volume, read.first_page, read.last_page,
            read.date, read.doi, read.publisher) == (
        "Nitrogen fixation by cyanobacteria", "Limnology and Oceanography", "33", "688",
        "701", "1988-07", "10.5555/x", "Wiley")
    author = read.authors[0]
    assert (author.given_name, author.surname, author.email) == (
        "Robert W.", "Howarth", "r@example.org")
    assert (read.unstructured, read.id) == ("as printed", "12")
    chapter = GrobidBiblio(authors=[])
    merge(chapter, {"type": "book-chapter", "container-title": ["A Book"]}, "10.5555/y")
    assert (chapter.book_title, chapter.journal) == ("A Book", None)


def test_every_failure_has_grobid_s_kind() -> None:
    failures = {*ExtractStatus, *LayoutStatus, *SandboxStatus} - USABLE
    assert failures <= set(ERROR_KINDS)
    assert set(ERROR_KINDS.values()) <= {"BAD_INPUT_DATA", "NO_BLOCKS", "TIMEOUT", "GENERAL",
                                         "PDFALTO_CONVERSION_FAILURE"}


class _Worker:
    def close(self) -> None:
        pass


def test_pool_never_waits() -> None:
    a, b = _Worker(), _Worker()
    pool = WorkerPool([a, b])  # type: ignore[list-item]
    seen: list[int] = []
    pool.on_change = seen.append
    first, second = pool.try_acquire(), pool.try_acquire()
    assert {first, second} == {a, b} and pool.try_acquire() is None and pool.busy == 2
    pool.release(first)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="given back twice"):
        pool.release(first)  # type: ignore[arg-type]
    assert seen == [1, 2, 1]


def test_the_settings_section(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SANDCRAWLER_GROBID_SERVE_PORT", "9000")
    monkeypatch.setenv("SANDCRAWLER_GROBID_SERVE_ALLOWED_HOSTS", '["GROBID.example.org"]')
    monkeypatch.setenv("SANDCRAWLER_GROBID_URL", "http://grobid:8070")
    settings = load_settings(grobid_serve_timeout=5)
    s = settings.grobid_serve
    assert (s.port, s.timeout, s.allowed_hosts) == (9000, 5.0, ["grobid.example.org"])
    assert s.concurrency >= 1 and s.header_pages == 2 and s.max_citations == 5000
    assert settings.grobid.url == "http://grobid:8070"
    names = {row["name"] for row in describe_settings(settings)}
    assert {"grobid_serve.concurrency", "grobid_serve.max_upload_mb",
            "grobid_serve.upload_timeout"} <= names
