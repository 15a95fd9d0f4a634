"""Landing pages: full-text links by the rule table, biblio, walls (web/html/landing.py).

Real pages come from ../shared/data/sandcrawler-fixtures (skipped when absent) and
tests/data/landing (SOURCES.md says which are real and which made up)."""

from __future__ import annotations

import pytest

from sandcrawler.web.html.landing import FulltextLink, HtmlPage, parse_html
from sandcrawler.web.html.link_rules import PLATFORM_RULES
from tests.helpers.paths import FIXTURES, TEST_DATA
from tests.helpers.skips import unavailable

LANDING = TEST_DATA / "landing"

PLOS_URL = "https://journals.plos.org/plosone/article?id=10.1371/journal.pone.0213978"
ELIFE_URL = "https://elifesciences.org/articles/44753"
PEERJ_URL = "https://peerj.com/articles/4375/"
FM_URL = "https://firstmonday.org/ojs/index.php/fm/article/view/10274"
DLIB_URL = "http://www.dlib.org/dlib/may17/vanhyning/05vanhyning.html"
REAL_PAGES = {
    "plos_one_article.html": PLOS_URL, "elife_article.html": ELIFE_URL,
    "peerj_oa_article.html": PEERJ_URL, "first_monday_ojs3_landingpage.html": FM_URL,
    "dlib_05vanhyning.html": DLIB_URL,
    "first_monday_ojs3_fulltext.html":
        "https://firstmonday.org/ojs/index.php/fm/article/download/10274/9729",
}


def real(name: str) -> HtmlPage:
    path = FIXTURES / name
    if not path.is_file():
        unavailable(f"shared test data not found: {path}", "SHARED_DATA")
    return parse_html(path.read_bytes(), REAL_PAGES[name])


def local(name: str, url: str, content_type: str | None = None) -> HtmlPage:
    return parse_html((LANDING / name).read_bytes(), url, content_type)


def urls(page: HtmlPage, kind: str) -> list[str]:
    return [link.url for link in page.fulltext_links(kind)]


# --- real pages --------------------------------------------------------------------------

def test_plos_real_page() -> None:
    page = real("plos_one_article.html")
    assert page.fulltext_links("pdf") == [FulltextLink(
        "https://journals.plos.org/plosone/article/file?id=10.1371/journal.pone.0213978"
        "&type=printable", "pdf", "citation_pdf_url")]
    assert page.fulltext_links("xml") == [FulltextLink(
        "https://journals.plos.org/plosone/article/file?id=10.1371/journal.pone.0213978"
        "&type=manuscript", "xml", "platform:plos")]
    b = page.biblio
    assert b is not None
    assert b.title == ("Assessment on reticuloendotheliosis virus infection in specific-"
                          "pathogen-free chickens based on detection of yolk antibody")
    assert b.doi == "10.1371/journal.pone.0213978"
    assert b.contrib_raw_names[:2] == ["Yang Li", "Tuanjie Wang"]
    assert len(b.contrib_raw_names) == 11
    assert (b.release_date, b.release_year) == ("2019-04-22", 2019)
    assert (b.container_name, b.container_issn, b.volume, b.issue) == (
        "PLOS ONE", "1932-6203", "14", "4")
    assert b.publisher == "Public Library of Science"
    assert len(page.references) == 23 and b.raw_references == page.references
    assert page.blocked is None and page.meta_refresh is None


def test_elife_real_page() -> None:
    page = real("elife_article.html")
    assert page.fulltext_links("pdf")[0] == FulltextLink(
        "https://elifesciences.org/download/aHR0cHM6Ly9jZG4uZWxpZmVzY2llbmNlcy5vcmcvYXJ0aWNsZXM"
        "vNDQ3NTMvZWxpZmUtNDQ3NTMtdjIucGRm/elife-44753-v2.pdf?_hash=CfyqOqVryCR4OjcMTfcdpeIWAG"
        "Zznmh9jXksYKYChCw%3D", "pdf", "platform:elife")
    # the figures PDF is not the article
    assert not any("figures" in u for u in urls(page, "pdf"))
    assert urls(page, "xml") == ["https://elifesciences.org/articles/44753.xml"]
    b = page.biblio
    assert b is not None
    assert b.title == "Parallel visual circuitry in a basal chordate"
    assert b.doi == "10.7554/elife.44753"  # "doi:10.7554/eLife.44753" in dc.identifier
    assert b.contrib_raw_names[0] == "Matthew J Kourakis"
    assert len(b.contrib_raw_names) == 7
    assert b.publisher == "eLife Sciences Publications Limited"


def test_peerj_real_page() -> None:
    page = real("peerj_oa_article.html")
    assert page.fulltext_links("pdf")[0] == FulltextLink(
        "https://peerj.com/articles/4375.pdf", "pdf", "citation_pdf_url")
    assert urls(page, "pdf") == ["https://peerj.com/articles/4375.pdf"]  # 3 finds, 1 link
    assert page.fulltext_links("xml") == [FulltextLink(
        "https://peerj.com/articles/4375.xml", "xml", "link:alternate")]
    assert urls(page, "html") == ["https://peerj.com/articles/4375"]
    b = page.biblio
    assert b is not None
    assert b.title.startswith("The state of OA: a large-scale analysis")
    assert b.doi == "10.7717/peerj.4375"
    assert b.contrib_raw_names[:3] == ["Heather Piwowar", "Jason Priem", "Vincent Larivière"]
    assert b.pdf_fulltext_url == "https://peerj.com/articles/4375.pdf"
    assert b.html_fulltext_url == "https://peerj.com/articles/4375"


def test_ojs_real_landing_page_links_its_galley() -> None:
    page = real("first_monday_ojs3_landingpage.html")
    assert page.fulltext_links("html") == [
        FulltextLink("https://firstmonday.org/ojs/index.php/fm/article/view/10274/9729", "html",
                     "citation_fulltext_html_url"),
        FulltextLink("https://firstmonday.org/ojs/index.php/fm/article/download/10274/9729",
                     "html", "platform:ojs"),
    ]
    assert page.fulltext_links("pdf") == []  # an HTML-only article
    b = page.biblio
    assert b is not None
    assert b.title == "Surveillance, stigma & sociotechnical design for HIV"
    assert b.doi == "10.5210/fm.v25i10.10274"
    assert b.contrib_raw_names == ["Calvin Liang", "Jevan Alexander Hutson", "Os Keyes"]


def test_dlib_real_page_is_its_own_full_text() -> None:
    page = real("dlib_05vanhyning.html")
    assert page.fulltext_links("html") == [FulltextLink(DLIB_URL, "html", "platform:dlib")]
    # the white paper cited on github.com is not this article's PDF
    assert page.fulltext_links("pdf") == []
    b = page.biblio
    assert b is not None
    assert b.title == "Transforming Libraries and Archives through Crowdsourcing"
    assert b.doi == "10.1045/may2017-vanhyning"  # <meta id="DOI">
    assert b.release_date == "2017-05-15"
    assert "contrib_raw_names" not in b  # D-Lib names its authors only in the text


@pytest.mark.parametrize("name", sorted(REAL_PAGES))
def test_real_pages_are_not_walls(name: str) -> None:
    assert real(name).blocked is None


def test_nature_real_page_biblio_and_no_invented_pdf() -> None:
    page = local("nature_news.html", "https://www.nature.com/articles/d41586-020-02610-z")
    b = page.biblio
    assert b is not None
    assert b.title == "More than 100 scientific journals have disappeared from the Internet"
    assert b.doi == "10.1038/d41586-020-02610-z"  # prism.doi "doi:10.1038/..."
    assert b.contrib_raw_names == ["Diana Kwon"]
    assert (b.container_name, b.release_date, b.publisher) == (
        "Nature", "2020-09-10", "Nature Publishing Group")
    assert page.fulltext_links("pdf") == []  # a news piece: no PDF, none guessed
    assert page.blocked is None


# --- platforms, made-up pages after their markup (tests/data/landing/SOURCES.md) -----------

PLATFORM_CASES = [
    # file, page URL, kind, first link, rule
    ("springer_article.html", "https://link.springer.com/article/10.1007/s00000-020-01234-5",
     "pdf", "https://link.springer.com/content/pdf/10.1007/s00000-020-01234-5.pdf",
     "platform:springer"),
    ("linkinghub.html", "https://linkinghub.elsevier.com/retrieve/pii/S0169204621000670",
     "html", "https://www.sciencedirect.com/science/article/pii/S0169204621000670",
     "platform:elsevier"),
    ("sciencedirect_article.html",
     "https://www.sciencedirect.com/science/article/pii/S0169204621000670", "pdf",
     "https://www.sciencedirect.com/science/article/pii/S0169204621000670/pdfft"
     "?md5=c4a83d06b334b627ded74cf9423bfa56&pid=1-s2.0-S0169204621000670-main.pdf",
     "platform:elsevier"),
    ("wiley_article.html", "https://onlinelibrary.wiley.com/doi/full/10.1111/1467-923X.12787",
     "pdf", "https://onlinelibrary.wiley.com/doi/pdf/10.1111/1467-923X.12787",
     "citation_pdf_url"),
    ("mdpi_article.html", "https://www.mdpi.com/2227-7390/9/18/2272", "pdf",
     "https://www.mdpi.com/2227-7390/9/18/2272/pdf?version=1631858340", "platform:mdpi"),
    ("frontiers_article.html",
     "https://www.frontiersin.org/articles/10.3389/fnins.2021.722592/full", "pdf",
     "https://www.frontiersin.org/articles/10.3389/fnins.2021.722592/pdf", "platform:frontiers"),
    ("frontiers_article.html",
     "https://www.frontiersin.org/articles/10.3389/fnins.2021.722592/full", "xml",
     "https://www.frontiersin.org/articles/10.3389/fnins.2021.722592/xml/nlm",
     "platform:frontiers"),
    ("arxiv_abs.html", "https://arxiv.org/abs/2101.01234v2", "pdf",
     "http://arxiv.org/pdf/2101.01234v2", "citation_pdf_url"),
    ("biorxiv_article.html", "https://www.biorxiv.org/content/10.1101/2020.01.01.123456v1",
     "pdf", "https://www.biorxiv.org/content/10.1101/2020.01.01.123456v1.full.pdf+html",
     "platform:biorxiv"),
    ("scielo_article.html",
     "http://www.scielo.br/scielo.php?script=sci_arttext&pid=S0102-311X2000000100001", "xml",
     "http://www.scielo.br/scieloOrg/php/articleXML.php?pid=S0102-311X2000000100001&lang=pt",
     "platform:scielo"),
    ("scielo_article.html",
     "http://www.scielo.br/scielo.php?script=sci_arttext&pid=S0102-311X2000000100001", "pdf",
     "http://www.scielo.br/pdf/csp/v16n1/1234.pdf", "platform:scielo"),
    ("pmc_article.html", "https://www.ncbi.nlm.nih.gov/pmc/articles/PMC1234567/", "pdf",
     "https://www.ncbi.nlm.nih.gov/pmc/articles/PMC1234567/pdf/pone.0000001.pdf",
     "platform:pmc"),
    ("ieee_stamp.html", "https://ieeexplore.ieee.org/stamp/stamp.jsp?tp=&arnumber=8730313",
     "pdf", "https://ieeexplore.ieee.org/ielx7/6287639/8600701/08730313.pdf"
     "?tp=&arnumber=8730313&isnumber=8600701&ref=", "platform:ieee"),
    ("osf_preprint.html", "https://osf.io/preprints/socarxiv/8phvx/", "pdf",
     "https://osf.io/8phvx/download", "platform:osf"),
    ("ojs_pdf_galley.html", "https://journals.example.edu/index.php/ej/article/view/35503",
     "pdf", "https://journals.example.edu/index.php/ej/article/download/35503/32336",
     "platform:ojs"),
    ("ojs_pdf_galley.html", "https://journals.example.edu/index.php/ej/article/view/35503",
     "xml", "https://journals.example.edu/index.php/ej/article/download/35503/32337",
     "platform:ojs"),
    ("ojs_pdf_viewer.html",
     "https://journals.example.edu/index.php/ej/article/view/35503/32336", "pdf",
     "https://journals.example.edu/index.php/ej/article/download/35503/32336/125000",
     "platform:ojs"),
    ("dspace_item.html", "https://repositorio.example.br/handle/123/4567", "pdf",
     "https://repositorio.example.br/bitstream/handle/123/4567/tese.pdf?sequence=1",
     "citation_pdf_url"),
    ("eprints_item.html", "https://eprints.example.ac.uk/1234/", "pdf",
     "https://eprints.example.ac.uk/1234/1/paper.pdf", "eprints.document_url"),
    ("jsonld_article.html", "https://example.org/articles/42", "pdf",
     "https://example.org/files/jsonld-42.pdf", "json-ld"),
]


@pytest.mark.parametrize(("name", "url", "kind", "first", "rule"), PLATFORM_CASES,
                         ids=[f"{c[0]}-{c[2]}" for c in PLATFORM_CASES])
def test_platform_first_link(name: str, url: str, kind: str, first: str, rule: str) -> None:
    page = local(name, url)
    links = page.fulltext_links(kind)
    assert links, f"no {kind} link on {name}"
    assert links[0] == FulltextLink(first, kind, rule)
    assert page.blocked is None


@pytest.mark.parametrize(("name", "url", "kind", "expected"), [
    # rules that add a second (or only platform) link beside the generic meta
    ("wiley_article.html", "https://onlinelibrary.wiley.com/doi/full/10.1111/1467-923X.12787",
     "pdf", ("https://onlinelibrary.wiley.com/doi/pdfdirect/10.1111/1467-923X.12787",
             "platform:wiley")),
    ("arxiv_abs.html", "https://arxiv.org/abs/2101.01234v2", "pdf",
     ("https://arxiv.org/pdf/2101.01234v2", "platform:arxiv")),
    ("biorxiv_article.html", "https://www.biorxiv.org/content/10.1101/2020.01.01.123456v1",
     "pdf", ("https://www.biorxiv.org/content/10.1101/2020.01.01.123456v1.full.pdf",
             "platform:biorxiv")),
    ("dspace_item.html", "https://repositorio.example.br/handle/123/4567", "pdf",
     ("https://repositorio.example.br/bitstream/handle/123/4567/tese.pdf?sequence=1"
      "&isAllowed=y", "platform:dspace")),
    ("springer_article.html", "https://link.springer.com/article/10.1007/s00000-020-01234-5",
     "pdf", None),  # the selector and the URL guess agree: one link
])
def test_platform_further_links(name: str, url: str, kind: str,
                                expected: tuple[str, str] | None) -> None:
    links = local(name, url).fulltext_links(kind)
    if expected is None:
        assert len(links) == 1
    else:
        assert (expected[0], expected[1]) in [(link.url, link.rule) for link in links[1:]]


def test_ieee_document_page_guesses_the_stamp_page() -> None:
    page = parse_html(b"<html><head><title>IEEE Xplore</title></head><body></body></html>",
                      "https://ieeexplore.ieee.org/document/8730313")
    assert urls(page, "pdf") == [
        "https://ieeexplore.ieee.org/stamp/stamp.jsp?tp=&arnumber=8730313"]


def test_eprints_biblio_and_document_links() -> None:
    page = local("eprints_item.html", "https://eprints.example.ac.uk/1234/")
    b = page.biblio
    assert b is not None
    assert b.title == "A made-up EPrints article"
    assert b.contrib_raw_names == ["Example, Ada", "Sample, Bo"]
    assert b.doi == "10.5555/example.1234"
    assert (b.release_date, b.container_name) == ("2019-03", "Example Journal")
    assert "https://eprints.example.ac.uk/1234/2/data.zip" not in urls(page, "pdf")


def test_scielo_page_in_latin1_declared_by_http_equiv() -> None:
    page = local("scielo_article.html",
                 "http://www.scielo.br/scielo.php?script=sci_arttext&pid=S0102-311X2000000100001")
    assert page.biblio is not None
    assert page.biblio.container_name == "Cadernos de Saúde Pública"
    assert page.biblio.doi == "10.1590/s0102-311x2000000100001"


def test_jsonld_biblio_from_graph_and_broken_script_ignored() -> None:
    page = local("jsonld_article.html", "https://example.org/articles/42")
    b = page.biblio
    assert b is not None
    assert b.title == "A made-up JSON-LD article"
    assert b.contrib_raw_names == ["Ada Example", "Bo Sample", "Cy Third"]
    assert b.doi == "10.5555/jsonld.42"
    assert (b.release_date, b.publisher, b.container_name) == (
        "2021-06-01", "Example Press", "Journal of Examples")
    assert b.pdf_fulltext_url == "https://example.org/files/jsonld-42.pdf"


def test_linkinghub_meta_refresh_is_absolute() -> None:
    page = local("linkinghub.html",
                 "https://linkinghub.elsevier.com/retrieve/pii/S0169204621000670")
    assert page.meta_refresh == (
        "https://linkinghub.elsevier.com/retrieve/articleSelectSinglePerm?Redirect="
        "https%3A%2F%2Fwww.sciencedirect.com%2Fscience%2Farticle%2Fpii%2FS0169204621000670")


def test_every_platform_rule_has_a_test() -> None:
    tested = {rule for *_, rule in PLATFORM_CASES} | {
        "platform:plos", "platform:elife", "platform:peerj", "platform:dlib",
        "platform:wiley", "platform:arxiv", "platform:dspace", "platform:eprints",
        "platform:nature"}
    assert {rule.name for rule in PLATFORM_RULES} <= tested
