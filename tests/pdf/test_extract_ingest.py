"""File ingest of a PDF with the embedded extraction cascade on (docs/extraction.md,
docs/storage.md): a loopback landing page whose meta tags link to an article PDF
that headless Chromium typeset, crawled and processed by the real file ingester
on its own services (SQLite, the store on disk).

- Without GROBID the cascade's header enriches what the landing page said and
  never replaces it (a disagreement is kept under ``conflicts``), its references
  are the document's ``grobid_refs`` row, and its TEI (``extract-tei``) reads as
  GROBID's TEI does.
- With GROBID (the loopback server answering a real GROBID TEI) both run and are
  kept side by side: ``grobid0`` and ``extract0``, both TEI resources; GROBID's
  header ranks above the cascade's and its references are the document's.
- A scan without text is stored like any PDF; the cascade only says ``no-text``.

Each ingest runs once per module (the cascade's models load once per processor,
seconds each); the tests read what it left behind.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any

import grobid_tei_xml
import orjson
import pytest
from sqlalchemy import select

from sandcrawler.app.services import Services
from sandcrawler.app.settings import load_settings
from sandcrawler.db.engine import begin
from sandcrawler.db.schema import grobid_refs
from sandcrawler.records.ingest import IngestRequest
from sandcrawler.refs.reading import refs_from_tei
from sandcrawler_testkit.article_pdf import Article, render_pdf
from sandcrawler_testkit.grobid_server import FakeGrobid
from sandcrawler_testkit.pdfs import make_pdf
from sandcrawler_testkit.publishers import Answer, WebSite, page
from tests.helpers.isolation import isolated
from tests.helpers.paths import FIXTURES
from tests.helpers.skips import unavailable

CHROMIUM = os.environ.get("SANDCRAWLER_TEST_CHROMIUM", "/usr/bin/chromium")
#: what a real GROBID (0.4.1) returned for a whole paper: another paper than ours,
#: which makes whose word the catalogue kept plain to see
GROBID_FULLTEXT = FIXTURES / "grobid-0.4.1-sample2.tei.fulltext.xml"

ARTICLE_URL = "https://journal.example/article/42"
SCAN_URL = "https://journal.example/article/43"
#: the publisher's title differs from the one printed in the PDF (a subtitle the
#: PDF does not carry): the page's is authoritative
PAGE_TITLE_SUFFIX = ": a genome-wide survey"


def _soft(text: str | None) -> str:
    return "".join(ch for ch in (text or "").lower() if ch.isalnum())


def _landing(title: str, pdf_path: str, doi: str | None = None) -> Answer:
    """A landing page with Highwire tags: title, journal, DOI, the PDF; no
    authors, date, abstract or ``citation_reference``."""
    tags = [("citation_title", title), ("citation_journal_title", "Journal of Test Genomics"),
            ("citation_pdf_url", pdf_path)]
    if doi:
        tags.append(("citation_doi", doi))
    meta = "".join(f'<meta name="{n}" content="{escape(v)}">' for n, v in tags)
    return page(f"<html><head><title>{escape(title)}</title>{meta}</head>"
                f"<body><h1>{escape(title)}</h1><a href=\"{pdf_path}\">PDF</a></body></html>")


@dataclass(frozen=True)
class Stored:
    """What one ingest left in the store, the catalogue, the PDF table and grobid_refs."""

    result: dict[str, Any]
    uuid: str
    sha1hex: str
    metadata: dict[str, Any]
    cells: dict[str, dict[str, Any]]
    resources: dict[str, bytes]
    refs: list[dict[str, Any]] | None

    @property
    def processing(self) -> dict[str, Any]:
        processing: dict[str, Any] = self.result["processing"]
        return processing

    @property
    def conflicts(self) -> dict[str, dict[str, Any]]:
        conflicts: dict[str, dict[str, Any]] = self.metadata.get("conflicts", {})
        return conflicts

    def source(self, field: str) -> str | None:
        sources: dict[str, str] = self.metadata["field_sources"]
        return sources.get(field)


@pytest.fixture(scope="module")
def article(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, Article]:
    if not shutil.which(CHROMIUM):
        unavailable(f"no Chromium at {CHROMIUM} to typeset the test article", "BROWSER")
    truth = Article()
    out = tmp_path_factory.mktemp("article") / "article.pdf"
    return render_pdf(truth.html(), out, CHROMIUM).read_bytes(), truth


def _refs_row(services: Services, uuid: str) -> list[dict[str, Any]] | None:
    """The document's ``grobid_refs`` row: source ``document``, source_id its UUID."""
    with begin(services.engine) as conn:
        refs: list[dict[str, Any]] | None = conn.execute(
            select(grobid_refs.c.refs_json).where(grobid_refs.c.source == "document",
                                                  grobid_refs.c.source_id == uuid)
        ).scalar_one_or_none()
    return refs


def _ingest(web: WebSite, home: Path, urls: list[str], **settings: Any) -> list[Stored]:
    """Ingest ``urls`` (``pdf`` requests) on services of their own; what each stored."""
    with isolated(home, SANDCRAWLER_EXTRACT_ENABLED="1"):
        services = Services(load_settings(http_routes=web.routes(), http_timeout=10,
                                          **settings))
        try:
            ingester = services.file_ingester()
            try:
                results = ingester.ingest_batch(
                    [IngestRequest(ingest_type="pdf", base_url=url) for url in urls])
            finally:
                ingester.close()
            stored = []
            for result in results:
                out = result.to_json()
                assert out["status"] == "success", out
                assert out["processing"]["kind"] == "pdf", out
                uuid, sha1 = out["processing"]["uuid"], out["file_meta"]["sha1hex"]
                row = services.pdftable.get(sha1)
                assert row is not None
                entry = services.catalogue.get(uuid)
                assert entry is not None
                stored.append(Stored(
                    result=out, uuid=uuid, sha1hex=sha1,
                    metadata=dict(services.catalogue.metadata(uuid)),
                    cells=dict(row.cells),
                    resources={k: services.catalogue.resources.get(uuid, k)
                               for k in entry.resources},
                    refs=_refs_row(services, uuid)))
            return stored
        finally:
            services.close()


@pytest.fixture(scope="module")
def without_grobid(article: tuple[bytes, Article],
                   tmp_path_factory: pytest.TempPathFactory) -> tuple[Stored, Stored]:
    """The article and a scan, each behind its landing page, ingested without GROBID."""
    pdf, truth = article
    with WebSite() as web:
        web.add(ARTICLE_URL, _landing(truth.title + PAGE_TITLE_SUFFIX, "/article/42.pdf",
                                      doi=truth.doi))
        web.add(ARTICLE_URL + ".pdf", Answer(body=pdf, content_type="application/pdf"))
        web.add(SCAN_URL, _landing("A scanned report", "/article/43.pdf"))
        web.add(SCAN_URL + ".pdf", Answer(body=make_pdf([None], page0_image=(200, 300)),
                                          content_type="application/pdf"))
        found = _ingest(web, tmp_path_factory.mktemp("without-grobid"), [ARTICLE_URL, SCAN_URL])
    return found[0], found[1]


@pytest.fixture(scope="module")
def with_grobid(article: tuple[bytes, Article], shared_data: Path,
                tmp_path_factory: pytest.TempPathFactory) -> Stored:
    """The article behind its landing page, ingested with a GROBID server configured."""
    pdf, truth = article
    with WebSite() as web, FakeGrobid(fulltext_tei=GROBID_FULLTEXT) as grobid:
        web.add(ARTICLE_URL, _landing(truth.title + PAGE_TITLE_SUFFIX, "/article/42.pdf",
                                      doi=truth.doi))
        web.add(ARTICLE_URL + ".pdf", Answer(body=pdf, content_type="application/pdf"))
        [found] = _ingest(web, tmp_path_factory.mktemp("with-grobid"), [ARTICLE_URL],
                          grobid_url=grobid.url)
        assert len(grobid.requests) == 1  # the full text asked for once
    return found


# --- 1. without GROBID: the cascade enriches the landing page ------------------------------


def test_the_landing_page_keeps_the_title_and_the_cascade_disagreement_is_kept(
        without_grobid: tuple[Stored, Stored], article: tuple[bytes, Article]) -> None:
    doc, _ = without_grobid
    truth = article[1]
    header = doc.cells["extract0"]["xheader"]
    assert doc.metadata["title"] == [truth.title + PAGE_TITLE_SUFFIX]
    assert doc.source("title") == "landing_page"
    assert doc.metadata["metadata_source"] == "landing_page"
    # what the cascade read off the PDF is kept beside it, not written over it
    assert doc.conflicts["extract"]["title"] == [header["title"]]
    assert _soft(header["title"]) == _soft(truth.title)  # the title printed in the PDF


def test_agreeing_fields_are_no_conflict(without_grobid: tuple[Stored, Stored],
                                         article: tuple[bytes, Article]) -> None:
    doc, _ = without_grobid
    assert doc.cells["extract0"]["xheader"]["doi"] == article[1].doi
    assert doc.metadata["DOI"] == article[1].doi
    assert doc.source("DOI") in ("request", "landing_page")
    assert doc.cells["extract0"]["xheader"]["journal"] == "Journal of Test Genomics"
    assert doc.source("container-title") == "landing_page"
    assert not {"DOI", "container-title"} & set(doc.conflicts.get("extract", {}))


def test_the_cascade_gives_the_authors_the_page_did_not(
        without_grobid: tuple[Stored, Stored], article: tuple[bytes, Article]) -> None:
    doc, _ = without_grobid
    truth = article[1]
    assert doc.source("author") == "extract"
    authors = doc.metadata["author"]
    assert [_soft(a["family"]) for a in authors] == [
        _soft(name.rsplit(" ", 1)[-1]) for name, _ in truth.authors]
    # with their affiliations (docs/storage.md: "authors with affiliations"),
    # whatever shape the catalogue gives them
    assert "University of Washington" in orjson.dumps(authors[0]).decode()
    assert "Fred Hutchinson Cancer Center" in orjson.dumps(authors[2]).decode()


def test_the_cascade_gives_the_date_volume_pages_and_keywords_the_page_did_not(
        without_grobid: tuple[Stored, Stored], article: tuple[bytes, Article]) -> None:
    doc, _ = without_grobid
    # "Journal of Test Genomics 12 (2019) 101-118" printed above the title
    assert {field: (doc.source(field), doc.metadata.get(field)) for field in (
        "issued", "volume", "page", "subject")} == {
        "issued": ("extract", {"date-parts": [[2019]]}),
        "volume": ("extract", "12"),
        "page": ("extract", "101-118"),
        "subject": ("extract", article[1].keywords)}


def test_the_cascade_gives_the_abstract_the_page_did_not(
        without_grobid: tuple[Stored, Stored]) -> None:
    doc, _ = without_grobid
    assert doc.cells["extract0"]["xheader"].get("abstract")
    assert doc.source("abstract") == "extract"
    assert doc.metadata["abstract"] == doc.cells["extract0"]["xheader"]["abstract"]
    assert "unoccupied recognition sequences" in doc.metadata["abstract"]


def test_the_pdf_table_has_the_cascade_family(without_grobid: tuple[Stored, Stored],
                                             article: tuple[bytes, Article]) -> None:
    doc, _ = without_grobid
    cells = doc.cells["extract0"]
    assert cells["xstatus"] == "success"
    assert len(cells["xrefs"]) == len(article[1].references)
    assert cells["xinfo"]["reader"] == "pdfalto"
    assert "pdf0" in doc.cells
    # no GROBID server: the cascade's full text stands in for GROBID's, in its
    # family (saying whose it is) and resource; processing says GROBID did not run
    grobid = doc.cells["grobid0"]
    assert grobid["status"]["status"] == "success"
    assert grobid["status"]["engine"] == "sandcrawler"
    assert "status_code" not in grobid
    assert grobid["tei_json"]["header"]["title"] == cells["xheader"]["title"]
    assert grobid["metadata"]["references"] == len(cells["xrefs"])
    assert doc.processing["grobid_status"] == "not-run"
    tei = doc.resources["grobid-tei"]
    assert grobid_tei_xml.parse_document_xml(tei).header.title == cells["xheader"]["title"]


def test_the_references_are_the_cascades(without_grobid: tuple[Stored, Stored],
                                         article: tuple[bytes, Article]) -> None:
    doc, _ = without_grobid
    truth = article[1]
    assert doc.refs is not None
    assert len(doc.refs) == len(truth.references) == doc.processing["references"]
    for got, want in zip(doc.refs, truth.references, strict=True):
        assert _soft(got["unstructured"]) == _soft(want)
    # the row is what the cascade parsed (extract0's references), as stored
    assert doc.refs == doc.cells["extract0"]["xrefs"]
    assert doc.refs[0]["journal"] == "Nature" and doc.refs[0]["date"] == "2000"


# --- 2. with GROBID: both run, side by side ----------------------------------------------


def test_with_grobid_both_families_and_both_teis(with_grobid: Stored) -> None:
    doc = with_grobid
    assert doc.processing["grobid_status"] == "success"
    assert doc.cells["grobid0"]["status_code"] == 200
    assert doc.cells["grobid0"]["quality"] == "good"
    assert doc.cells["extract0"]["xstatus"] == "success"
    assert {"grobid-tei", "extract-tei"} <= set(doc.resources)
    assert doc.resources["grobid-tei"].decode("utf-8") == GROBID_FULLTEXT.read_text("utf-8")
    assert grobid_tei_xml.parse_document_xml(doc.resources["extract-tei"].decode()).citations


def test_with_grobid_its_header_ranks_above_the_cascades(
        with_grobid: Stored, article: tuple[bytes, Article]) -> None:
    doc = with_grobid
    truth = article[1]
    grobid = doc.cells["grobid0"]["metadata"]
    # the landing page's title still stands above both; theirs are conflicts
    assert doc.metadata["title"] == [truth.title + PAGE_TITLE_SUFFIX]
    assert doc.conflicts["grobid"]["title"] == [grobid["title"]]
    # what GROBID gave (authors, abstract) is GROBID's; the cascade's is a conflict
    assert doc.source("author") == "grobid"
    assert [a["family"] for a in doc.metadata["author"]] == ["Garfinkel", "Rosenblum"]
    assert doc.source("abstract") == "grobid"
    assert doc.metadata["abstract"] == grobid["abstract"]
    assert [a["family"] for a in doc.conflicts["extract"]["author"]] == [
        name.rsplit(" ", 1)[-1] for name, _ in truth.authors]
    # what GROBID did not give (the date) is the cascade's
    assert doc.source("issued") == "extract"


def test_with_grobid_the_references_are_grobids(with_grobid: Stored,
                                                article: tuple[bytes, Article]) -> None:
    doc = with_grobid
    grobid_refs = refs_from_tei(GROBID_FULLTEXT.read_text(encoding="utf-8"))
    assert doc.refs == grobid_refs
    assert doc.processing["references"] == len(grobid_refs) == 47
    # the cascade's own are kept beside them, in extract0
    assert len(doc.cells["extract0"]["xrefs"]) == len(article[1].references)


# --- 3. the cascade's TEI reads as GROBID's ---------------------------------------------


def test_the_extract_tei_parses_as_grobid_tei(without_grobid: tuple[Stored, Stored],
                                              article: tuple[bytes, Article]) -> None:
    doc, _ = without_grobid
    truth = article[1]
    tei = doc.resources["extract-tei"].decode("utf-8")
    parsed = grobid_tei_xml.parse_document_xml(tei)
    header = doc.cells["extract0"]["xheader"]
    assert parsed.header.title == header["title"]
    assert [a.surname for a in parsed.header.authors] == [
        a["surname"] for a in header["authors"]]
    assert parsed.header.doi == truth.doi
    assert len(parsed.citations or []) == len(truth.references)
    refs = refs_from_tei(tei)
    assert [r["unstructured"] for r in refs] == [r["unstructured"] for r in doc.refs or []]
    for got, stored in zip(refs, doc.refs or [], strict=True):
        for key in ("title", "journal", "date", "volume", "first_page", "doi"):
            assert got.get(key) == stored.get(key), (key, got, stored)
        assert [a["surname"] for a in got.get("authors", [])] == [
            a["surname"] for a in stored.get("authors", [])]


# --- 4. a scan without text -------------------------------------------------------------


def test_a_scan_is_stored_and_the_cascade_says_no_text(
        without_grobid: tuple[Stored, Stored]) -> None:
    _, scan = without_grobid
    # the page is one black image, flat when rendered: a PDF status that is stored
    # all the same (docs/pdf.md)
    assert scan.processing["status"] == scan.cells["pdf0"]["pdf_status"] == "empty-page0"
    assert scan.processing["uuid"] == scan.uuid
    assert {"pdf", "thumb-small"} <= set(scan.resources)
    # the cascade's status and its account, nothing it did not find
    cells = scan.cells["extract0"]
    assert cells["xstatus"] == "no-text" and set(cells) == {"xstatus", "xinfo"}
    assert "extract-tei" not in scan.resources
    # the landing page still describes it; no field from the cascade, no references
    assert scan.metadata["title"] == ["A scanned report"]
    assert "extract" not in set(scan.metadata["field_sources"].values())
    assert "extract" not in scan.metadata.get("conflicts", {})
    assert scan.refs is None and not scan.processing.get("references")
