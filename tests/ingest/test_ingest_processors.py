"""The full-text processors of file ingest (JATS XML, HTML) on real files from the
shared data, a real database (SQLite and PostgreSQL) and a local resource store:
what is stored under which UUID, the catalogue metadata, the grobid_refs row, and
the statuses of files they cannot use (hostile XML included)."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, func, select

from sandcrawler.core.filemeta import file_metadata
from sandcrawler.core.mime import sniff_mime
from sandcrawler.db.schema import grobid_refs
from sandcrawler.ingest.found import FoundFile, Processor
from sandcrawler.ingest.html_fulltext import HtmlProcessor
from sandcrawler.ingest.jats import JatsProcessor
from sandcrawler.records.capture import CdxRecord
from sandcrawler.records.html_biblio import HtmlBiblio
from sandcrawler.records.ingest import IngestRequest
from sandcrawler.refs.reading import RefsWriter
from sandcrawler.storage.catalogue import Catalogue
from sandcrawler.storage.local import LocalBlobStore
from sandcrawler.storage.pdftable import PdfTable
from sandcrawler.storage.resources import ResourceStore
from tests.helpers.paths import FIXTURES
from tests.ingest.test_ingest_references import FakeParser, citation_references

SCIELO_DOI = "10.18004/ped.2015.agosto.102-107"
DLIB_URL = "http://www.dlib.org/dlib/may17/vanhyning/05vanhyning.html"


@pytest.fixture
def catalogue(engine: Engine, tmp_path: Path) -> Catalogue:
    return Catalogue(engine, ResourceStore(LocalBlobStore(tmp_path / "store")))


@pytest.fixture
def jats(catalogue: Catalogue) -> JatsProcessor:
    return JatsProcessor(catalogue, RefsWriter(catalogue.engine))


@pytest.fixture
def table(engine: Engine) -> PdfTable:
    return PdfTable(engine, "wbgrp-journal-extract-0-test")


@pytest.fixture
def html(catalogue: Catalogue, table: PdfTable) -> Iterator[HtmlProcessor]:
    processor = HtmlProcessor(catalogue, table, RefsWriter(catalogue.engine))
    yield processor
    processor.close()  # its child process


def found(path: Path, url: str, ingest_type: str, **kw: Any) -> FoundFile:
    """What the crawl hands over for a body on disk captured from ``url``."""
    meta = file_metadata(path)
    cdx = CdxRecord(surt="org,example)/x", datetime="20200102030405", url=url,
                    mimetype=meta.mimetype, status_code=200, sha1hex=meta.sha1hex,
                    warc_csize=100, warc_offset=0, warc_path="crawl.warc.gz")
    return FoundFile(path=path, file_meta=meta, cdx=cdx,
                     request=IngestRequest(ingest_type=ingest_type, base_url=url), **kw)


def refs_rows(engine: Engine) -> list[dict[str, Any]]:
    with engine.connect() as conn:
        return [dict(r) for r in conn.execute(select(grobid_refs)).mappings()]


def out_sha1(path: Path) -> str:
    return file_metadata(path).sha1hex


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_processors_are_processors(jats: JatsProcessor, html: HtmlProcessor) -> None:
    processors: list[Processor] = [jats, html]  # checked by the type checker
    for p in processors:
        assert callable(p.process) and callable(p.close)
        p.close()


# -- JATS -----------------------------------------------------------------------------------------


def test_real_scielo_jats(shared_data: Path, jats: JatsProcessor, catalogue: Catalogue) -> None:
    path = FIXTURES / "scielo_article.jats.xml"
    out = jats.process(found(path, "http://scielo.iics.una.py/x.xml", "xml"))
    assert (out.kind, out.status, out.error) == ("xml", "success", None)
    assert out.resources == ["metadata", "nxml"]
    n_refs = len(re.findall(rb"<ref id=", path.read_bytes()))
    assert out.references == n_refs == 12
    entry = catalogue.get(out.uuid or "")
    assert entry is not None and entry.doi == SCIELO_DOI
    assert catalogue.resolve(SCIELO_DOI) == [out.uuid]
    assert catalogue.resources.get(entry.uuid, "nxml") == path.read_bytes()
    md = catalogue.metadata(entry.uuid)
    # the file declares ISO-8859-1 but holds a Windows-1252 apostrophe (U+0092 as
    # read): the title is made readable where it is made (sandcrawler.core.textfix)
    assert md["title"][0] == ("Prevalencia de desnutrición y hábitos alimentarios en niños "
                              "menores de 5 años en las comunidades indígenas de Yby Yau y "
                              "Azote\u2019y, 2011")
    assert md["title"][1].startswith("Prevalence of malnutrition and eating habits")
    assert md["author"] == [{"given": "Syntia Carolina", "family": "Ruiz Valiente"},
                            {"given": "Manuel", "family": "Ruiz Cañete"},
                            {"given": "Bartola", "family": "Cohene Velazquez"}]
    assert md["container-title"] == ["Pediatría (Asunción)"]
    assert md["ISSN"] == ["1683-9803"] and md["publisher"] == "Sociedad Paraguaya de Pediatría"
    assert (md["volume"], md["issue"], md["page"]) == ("42", "2", "102-107")
    assert md["issued"] == {"date-parts": [[2015, 8, 30]]}
    assert md["DOI"] == SCIELO_DOI and md["publisher_id"] == "S1683-98032015000200002"
    assert md["abstract"].startswith("Introducción: La infancia es una etapa trascendental")
    assert "Acute malnutrition" in md["keywords"] and md["metadata_source"] == "jats"
    (row,) = refs_rows(catalogue.engine)
    assert (row["source"], row["source_id"]) == ("document", out.uuid)
    assert row["source_ts"].isoformat() == "2020-01-02T03:04:05+00:00"
    assert len(row["refs_json"]) == 12
    ref = row["refs_json"][0]
    assert (ref["id"], ref["title"], ref["journal"], ref["date"], ref["pages"]) == (
        "B1", "Fome, desnutrição e pobreza: além da semântica", "Saúde Soc", "2003", "7-11")
    assert ref["authors"] == [{"full_name": "CA Monteiro", "given_name": "CA",
                               "surname": "Monteiro"}]


def test_reprocessing_is_idempotent(shared_data: Path, jats: JatsProcessor,
                                    catalogue: Catalogue) -> None:
    f = found(FIXTURES / "scielo_article.jats.xml", "http://scielo.iics.una.py/x.xml", "xml")
    first, again = jats.process(f), jats.process(f)
    assert again.model_dump() == first.model_dump()
    assert catalogue.count() == 1
    with catalogue.engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(grobid_refs)).scalar() == 1


def test_wrapped_real_jats(shared_data: Path, jats: JatsProcessor, catalogue: Catalogue,
                           tmp_path: Path) -> None:
    """The SciELO article inside a pmc-articleset, stored as fetched."""
    raw = (FIXTURES / "scielo_article.jats.xml").read_bytes()
    decl, _, body = raw.partition(b"?>")
    path = write(tmp_path, "set.xml", decl + b"?>\n<pmc-articleset>" + body + b"</pmc-articleset>")
    out = jats.process(found(path, "https://example.org/set.xml", "xml"))
    assert (out.status, out.references) == ("success", 12)
    assert catalogue.get(out.uuid or "").doi == SCIELO_DOI  # type: ignore[union-attr]
    assert catalogue.resources.get(out.uuid or "", "nxml") == path.read_bytes()
    assert catalogue.metadata(out.uuid or "")["jats"] == {"wrapper": "pmc-articleset"}


#: an article as PubMed Central's OAI-PMH service answers: namespaced, wrapped
OAI_PMH = b"""<?xml version="1.0" encoding="UTF-8"?>
<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"><GetRecord><record><metadata>
<article xmlns="https://jats.nlm.nih.gov/ns/archiving/1.3/"
 xmlns:xlink="http://www.w3.org/1999/xlink" article-type="research-article" xml:lang="EN">
<front><journal-meta><journal-title-group><journal-title>J Test</journal-title>
</journal-title-group><issn pub-type="epub">1234-5678</issn></journal-meta>
<article-meta><article-id pub-id-type="pmcid">PMC7654321</article-id>
<article-id pub-id-type="pmid">33333333</article-id>
<title-group><article-title>Wrapped <italic>in</italic> OAI</article-title></title-group>
<contrib-group><contrib contrib-type="author"><contrib-id contrib-id-type="orcid"
 authenticated="true">https://orcid.org/0000-0002-1825-0097</contrib-id><name>
<surname>Carberry</surname><given-names>Josiah</given-names></name></contrib>
<contrib contrib-type="editor"><name><surname>Ed</surname></name></contrib></contrib-group>
<pub-date pub-type="ppub"><year>2020</year><month>13</month></pub-date>
<pub-date pub-type="epub"><day>4</day><month>3</month><year>2019</year></pub-date>
<elocation-id>e100</elocation-id><permissions><license
 xlink:href="https://creativecommons.org/licenses/by/4.0/"><license-p>CC BY</license-p>
</license></permissions></article-meta></front><body><p>Text.</p></body></article>
</metadata></record></GetRecord></OAI-PMH>
"""


def test_oai_pmh_wrapped_jats_and_landing_page_fallbacks(
        jats: JatsProcessor, catalogue: Catalogue, tmp_path: Path) -> None:
    path = write(tmp_path, "oai.xml", OAI_PMH)
    refs = ["citation_title=A;citation_author=Doe, J;citation_year=1999",
            "Plain text reference, 2001."]
    parser = FakeParser()
    processor = JatsProcessor(catalogue, RefsWriter(catalogue.engine),
                              parser_factory=lambda: parser)
    out = processor.process(found(
        path, "https://www.ncbi.nlm.nih.gov/oai", "xml", references=refs,
        identifiers={"doi": "10.1234/wrapped"},
        biblio=HtmlBiblio(title="ignored: the file has one", publisher="Landing Press")))
    processor.close()
    assert parser.closed and len(parser.calls) == 1
    assert (out.status, out.references) == ("success", 2)
    entry = catalogue.get(out.uuid or "")
    assert entry is not None
    assert (entry.doi, entry.pmid, entry.pmcid) == ("10.1234/wrapped", "33333333", "PMC7654321")
    md = catalogue.metadata(entry.uuid)
    assert md["title"] == ["Wrapped in OAI"] and md["publisher"] == "Landing Press"
    assert md["author"] == [{"given": "Josiah", "family": "Carberry",
                             "ORCID": "https://orcid.org/0000-0002-1825-0097"}]
    assert md["issued"] == {"date-parts": [[2019, 3, 4]]}
    assert md["license"] == [{"URL": "https://creativecommons.org/licenses/by/4.0/"}]
    assert (md["article-number"], md["language"], md["ISSN"]) == ("e100", "en", ["1234-5678"])
    assert md["jats"] == {"article-type": "research-article", "wrapper": "OAI-PMH"}
    assert out.model_dump()["references_from"] == "meta"


def test_not_jats(shared_data: Path, jats: JatsProcessor, catalogue: Catalogue) -> None:
    out = jats.process(found(FIXTURES / "grobid-0.4.1-sample2.tei.fulltext.xml",
                             "https://example.org/tei.xml", "xml"))
    assert (out.kind, out.status, out.uuid) == ("xml", "not-jats", None)
    assert "<TEI>" in (out.error or "")
    assert catalogue.count() == 0 and refs_rows(catalogue.engine) == []


def _laughs(levels: int = 9) -> bytes:
    """The "billion laughs": ten to the ``levels`` copies of "lol" if expanded."""
    entities = ['<!ENTITY l0 "lol">'] + [
        f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, levels + 1)]
    return (f'<?xml version="1.0"?><!DOCTYPE article [{"".join(entities)}]>'
            f"<article><front><article-meta><title-group><article-title>&l{levels};"
            "</article-title></title-group></article-meta></front></article>").encode()


@pytest.mark.parametrize("case", ["billion-laughs", "external-entity", "external-dtd-param",
                                  "truncated", "not-xml"])
def test_hostile_and_broken_xml(case: str, jats: JatsProcessor, catalogue: Catalogue,
                                tmp_path: Path) -> None:
    secret = write(tmp_path, "secret.txt", b"SECRET-MARKER-42")
    data = {
        "billion-laughs": _laughs(),
        "external-entity": b'<?xml version="1.0"?><!DOCTYPE article [<!ENTITY x SYSTEM "'
                           + secret.as_uri().encode() + b'">]><article><front><article-meta>'
                           b"<title-group><article-title>&x;</article-title></title-group>"
                           b"</article-meta></front></article>",
        "external-dtd-param": b'<?xml version="1.0"?><!DOCTYPE article [<!ENTITY % p SYSTEM "'
                              + secret.as_uri().encode() + b'"> %p;]><article><front/></article>',
        "truncated": (FIXTURES / "scielo_article.jats.xml").read_bytes()[:5000]
        if FIXTURES.is_dir() else b"<article><front><article-meta>",
        "not-xml": b"%PDF-1.4 not xml at all",
    }[case]
    path = write(tmp_path, "in.xml", data)
    start = time.monotonic()
    out = jats.process(found(path, "https://example.org/in.xml", "xml"))
    assert time.monotonic() - start < 2  # nothing expanded
    assert (out.status, out.uuid) == ("bad-xml", None)
    assert "SECRET-MARKER" not in (out.error or "") and "Traceback" not in (out.error or "")
    if case != "truncated" and case != "not-xml":
        assert "EntitiesForbidden" in (out.error or "")
    assert catalogue.count() == 0 and refs_rows(catalogue.engine) == []


def test_too_large_xml_is_not_parsed(catalogue: Catalogue, tmp_path: Path) -> None:
    path = write(tmp_path, "big.xml", b"<article>" + b" " * 2000 + b"</article>")
    out = JatsProcessor(catalogue, RefsWriter(catalogue.engine), max_bytes=1000).process(
        found(path, "https://example.org/big.xml", "xml"))
    assert out.status == "too-large" and catalogue.count() == 0


@pytest.mark.parametrize("head", [
    b'<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE article PUBLIC "-//NLM//DTD JATS '
    b'(Z39.96) Journal Publishing DTD v1.2 20190208//EN" "JATS-journalpublishing1.dtd">\n',
    b"\xef\xbb\xbf<?xml version='1.0' encoding='utf-8'?>\r\n<!-- from PMC -->\r\n"
    b'<?xml-stylesheet type="text/xsl" href="jats.xsl"?>\n<!DOCTYPE article SYSTEM "x.dtd">',
    b"\n\n  <!DOCTYPE article>",
    b"",
])
def test_real_jats_heads_sniff_as_nxml(head: bytes, catalogue: Catalogue,
                                       tmp_path: Path) -> None:
    data = head + b'<article article-type="research-article" dtd-version="1.2"><front>' \
        + b"<article-meta><title-group><article-title>" + b"x" * 9000 \
        + b"</article-title></title-group></article-meta></front></article>"
    assert sniff_mime(data[:8192]) == "application/xml"
    path = write(tmp_path, "a.nxml", data)
    out = JatsProcessor(catalogue, RefsWriter(catalogue.engine)).process(
        found(path, "https://example.org/a.nxml", "xml"))
    assert out.status == "success" and out.resources == ["metadata", "nxml"]


# -- HTML -----------------------------------------------------------------------------------------


def test_real_dlib_article(shared_data: Path, html: HtmlProcessor,
                           catalogue: Catalogue, table: PdfTable) -> None:
    path = FIXTURES / "dlib_05vanhyning.html"
    out = html.process(found(path, DLIB_URL, "html",
                             identifiers={"doi": "10.1045/may2017-vanhyning"}))
    assert (out.kind, out.status, out.error) == ("html", "success", None)
    assert out.resources == ["html", "metadata", "text"] and out.references == 0
    entry = catalogue.get(out.uuid or "")
    assert entry is not None and entry.doi == "10.1045/may2017-vanhyning"
    assert catalogue.resources.get(entry.uuid, "html") == path.read_bytes()
    text = catalogue.resources.get(entry.uuid, "text").decode("utf-8")
    assert ("This article will showcase the aims and research goals of the project entitled "
            '"Transforming Libraries and Archives through Crowdsourcing"') in text
    assert "<" not in text[:2000]
    md = catalogue.metadata(entry.uuid)
    assert md["title"] == ["Transforming Libraries and Archives through Crowdsourcing"]
    assert md["issued"] == {"date-parts": [[2017, 5, 15]]} and md["metadata_source"] == "html"
    assert md["html"]["word_count"] == out.model_dump()["word_count"] > 3000
    resources = out.model_dump()["html_resources"]
    assert resources == [
        {"url": "http://www.dlib.org/img2/D-Lib-blocks5.gif", "type": "image"},
        {"url": "http://www.dlib.org/img2/magazine5.gif", "type": "image"},
        {"url": "http://www.dlib.org/img2/transparent.gif", "type": "image"},
        {"url": "http://www.dlib.org/js/ga.js", "type": "script"},
        {"url": "http://www.dlib.org/style/style1.css", "type": "stylesheet"},
    ]
    # the original system's html_meta row, in the PDF table (read by the API's view):
    # the page's own meta tags (the crawl had none: no landing page was handed over),
    # its sub-resources under the original's field names
    row = table.get(out_sha1(path), ["html0"])
    assert row is not None and row.cells == {"html0": {
        "html_status": "success",
        "html_meta": {
            "scope": "article-fulltext", "has_teixml": False, "has_thumbnail": False,
            "word_count": out.word_count,
            "biblio": {"doi": "10.1045/may2017-vanhyning", "release_date": "2017-05-15",
                       "title": "Transforming Libraries and Archives through Crowdsourcing",
                       "release_year": 2017},
            "resources": [{"url": r["url"], "resource_type": r["type"]} for r in resources],
        }}}


def test_real_plos_page_with_citation_references(shared_data: Path, html: HtmlProcessor,
                                                 catalogue: Catalogue) -> None:
    path = FIXTURES / "plos_one_article.html"
    page = path.read_bytes()
    url = "https://journals.plos.org/plosone/article?id=10.1371/journal.pone.0213978"
    out = html.process(found(path, url, "html", references=citation_references(page),
                             biblio=HtmlBiblio(container_name="PLOS ONE")))
    assert (out.status, out.references) == ("success", 23)
    md = catalogue.metadata(out.uuid or "")
    assert md["title"][0].startswith("Assessment on reticuloendotheliosis virus infection")
    assert md["container-title"] == ["PLOS ONE"]
    assert md["author"][0] == {"name": "Yang Li"}
    (row,) = refs_rows(catalogue.engine)
    assert row["source_id"] == out.uuid and len(row["refs_json"]) == 23
    assert row["refs_json"][1]["title"] == (
        "Simultaneous endemic infections with subgroup J avian leukosis virus and "
        "reticuloendotheliosis virus in commercial and local breeds of chickens")
    assert row["refs_json"][1]["journal"] == "Avian Pathol"
    for r in out.model_dump()["html_resources"]:
        assert r["url"].startswith(("http://", "https://")) and "#" not in r["url"]
    assert len({r["url"] for r in out.model_dump()["html_resources"]}) == len(
        out.model_dump()["html_resources"])


LANDING = b"""<!DOCTYPE html><html><head><title>Record 1234 | Repository</title>
<meta name="citation_title" content="A record"><link rel="stylesheet" href="/s.css"></head>
<body><nav><a href="/">Home</a> <a href="/browse">Browse</a></nav>
<h1>A record</h1><p>Download the PDF (2 MB).</p><footer>Contact us</footer></body></html>
"""


def test_landing_page_has_no_main_text(html: HtmlProcessor, catalogue: Catalogue,
                                       table: PdfTable, tmp_path: Path) -> None:
    path = write(tmp_path, "landing.html", LANDING)
    url = "https://repo.example.org/record/1234"
    # the crawl read this very page as its landing page: its biblio is the page's own
    out = html.process(found(path, url, "html", references=["citation_title=X"],
                             biblio=HtmlBiblio(title="A record"), landing_url=url))
    assert (out.kind, out.status, out.uuid) == ("html", "no-main-text", None)
    assert "fewer than 50" in (out.error or "")
    assert catalogue.count() == 0 and refs_rows(catalogue.engine) == []
    # a page read but not taken as full text is kept too: no scope, no resources
    row = table.get(out_sha1(path), ["html0"])
    assert row is not None and row.cells["html0"] == {
        "html_status": "no-main-text",
        "html_meta": {"scope": None, "has_teixml": False, "has_thumbnail": False,
                      "word_count": out.word_count or None, "biblio": {"title": "A record"},
                      "resources": None}}


def test_a_page_over_the_limit_is_not_read_and_leaves_no_cells(
        catalogue: Catalogue, table: PdfTable, tmp_path: Path) -> None:
    path = write(tmp_path, "landing.html", LANDING)
    processor = HtmlProcessor(catalogue, table, RefsWriter(catalogue.engine), max_bytes=10)
    try:
        out = processor.process(found(path, "https://repo.example.org/record/1234", "html"))
    finally:
        processor.close()
    assert out.status == "too-large"
    assert table.get(out_sha1(path)) is None


def test_sub_resources_are_absolute_unique_and_capped(catalogue: Catalogue,
                                                      tmp_path: Path) -> None:
    body = " ".join(["word"] * 80)
    page = (f'<html><head><base href="https://cdn.example.org/a/"><link rel="icon" href="i.ico">'
            f'<link rel="Stylesheet alternate" href="s.css"><script src="//js.example.org/j.js">'
            f'</script></head><body><article><p>{body}</p></article>'
            f'<img src="f1.png"><img src="f1.png#x"><img src="data:image/png;base64,AA">'
            f'<img src="javascript:void(0)"><video src="v.mp4"><source src="v.webm"></video>'
            f'<iframe src="https://player.example.com/e/1"></iframe><img src="f2.png"></body>'
            f"</html>").encode()
    path = write(tmp_path, "p.html", page)
    processor = HtmlProcessor(catalogue, PdfTable(catalogue.engine, "t"),
                              RefsWriter(catalogue.engine), max_resources=6)
    try:
        out = processor.process(found(path, "https://www.example.org/x/p.html", "html"))
    finally:
        processor.close()
    assert out.status == "success"
    assert out.model_dump()["html_resources"] == [
        {"url": "https://cdn.example.org/a/f1.png", "type": "image"},
        {"url": "https://cdn.example.org/a/f2.png", "type": "image"},
        {"url": "https://js.example.org/j.js", "type": "script"},
        {"url": "https://cdn.example.org/a/s.css", "type": "stylesheet"},
        {"url": "https://cdn.example.org/a/v.webm", "type": "media"},
        {"url": "https://cdn.example.org/a/v.mp4", "type": "media"},
    ]
