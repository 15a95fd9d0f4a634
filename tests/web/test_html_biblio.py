"""``html_biblio`` as a typed record (``models.html_biblio.HtmlBiblio``) and its JSON.

The expected bytes are what pages gave before the record was typed (issue 24), when
it was a dict: the keys the page gave, in the order they were found (meta tags in
``web.biblio.FIELDS`` order, then JSON-LD, then ``<title>``, then ``release_year``),
and none of the missing ones. Consumers of ingest results have seen these objects.
"""

from __future__ import annotations

import pickle

import pytest
from pydantic import ValidationError

from sandcrawler.core.jsontext import dumps_output
from sandcrawler.core.work import json_line
from sandcrawler.ingest.file_ingest import work_identifiers
from sandcrawler.ingest.found import landing_page_metadata
from sandcrawler.records.html_biblio import HtmlBiblio
from sandcrawler.records.ingest import FileIngestResult, IngestRequest
from sandcrawler.records.statuses import IngestFileStatus
from sandcrawler.web.html.landing import parse_html
from tests.helpers.paths import FIXTURES, TEST_DATA
from tests.helpers.skips import unavailable

LANDING = TEST_DATA / "landing"

DLIB_URL = "http://www.dlib.org/dlib/may17/vanhyning/05vanhyning.html"
FM_URL = "https://firstmonday.org/ojs/index.php/fm/article/view/10274"

#: D-Lib: the DOI and date from meta tags, the title from <title> (after them)
DLIB_JSON = (b'{"doi":"10.1045/may2017-vanhyning","release_date":"2017-05-15","title":'
             b'"Transforming Libraries and Archives through Crowdsourcing","release_year":2017}')
FM_ABSTRACT = (
    "Online dating and hookup platforms have fundamentally changed people’s day-to-day "
    "practices of sex and love — but exist in tension with older social and medicolegal "
    "norms. This is particularly the case for people with HIV, who are frequently "
    "stigmatized, surveilled, ostracized, and incarcerated because of their status. Efforts "
    "to make intimate platforms “work” for HIV frequently focus on user-to-user interactions "
    "and disclosure of one’s HIV status but elide both the structural forces at work in "
    "regulating sex and the involvement of the state in queer lives. In an effort to "
    "foreground these forces and this involvement, we analyze the approaches that intimate "
    "platforms have taken in designing for HIV disclosure through a content analysis of 50 "
    "current platforms. We argue that the implicit reinforcement of stereotypes about who HIV "
    "is or is not a concern for, along with the failure to consider state practices when "
    "designing for data disclosure, opens up serious risks for HIV-positive and otherwise "
    "marginalized people. While we have no panacea for the tension between disclosure and "
    "risk, we point to bottom-up, communal, and queer approaches to design as a way of "
    "potentially making that tension easier to safely navigate.")
FM_JSON = (
    '{"contrib_raw_names":["Calvin Liang","Jevan Alexander Hutson","Os Keyes"],'
    '"title":"Surveillance, stigma & sociotechnical design for HIV",'
    '"doi":"10.5210/fm.v25i10.10274","release_date":"2020-09-10",'
    '"container_name":"First Monday","container_abbrev":"1","container_issn":"1396-0466",'
    f'"abstract":"{FM_ABSTRACT}",'
    '"release_type":"Text.Serial.Journal","lang":"en",'
    '"html_fulltext_url":"https://firstmonday.org/ojs/index.php/fm/article/view/10274/9729",'
    '"release_year":2020}').encode()
#: JSON-LD only: its fields in the order the JSON-LD reader finds them
JSONLD_JSON = (b'{"title":"A made-up JSON-LD article","contrib_raw_names":["Ada Example",'
               b'"Bo Sample","Cy Third"],"release_date":"2021-06-01","doi":"10.5555/jsonld.42",'
               b'"publisher":"Example Press","container_name":"Journal of Examples",'
               b'"pdf_fulltext_url":"https://example.org/files/jsonld-42.pdf",'
               b'"release_year":2021}')


def real(name: str, url: str) -> HtmlBiblio:
    path = FIXTURES / name
    if not path.is_file():
        unavailable(f"shared test data not found: {path}", "SHARED_DATA")
    biblio = parse_html(path.read_bytes(), url).biblio
    assert biblio is not None
    return biblio


@pytest.mark.parametrize(("name", "url", "want"), [
    ("dlib_05vanhyning.html", DLIB_URL, DLIB_JSON),
    ("first_monday_ojs3_landingpage.html", FM_URL, FM_JSON),
])
def test_real_pages_html_biblio_json_is_pinned(name: str, url: str, want: bytes) -> None:
    assert dumps_output(real(name, url).to_json()) == want


def test_jsonld_fields_keep_the_order_they_were_found_in() -> None:
    page = parse_html((LANDING / "jsonld_article.html").read_bytes(),
                      "https://example.org/articles/42")
    assert page.biblio is not None
    assert dumps_output(page.biblio.to_json()) == JSONLD_JSON


def test_the_ingest_result_line_holds_the_same_object() -> None:
    page = parse_html((LANDING / "jsonld_article.html").read_bytes(),
                      "https://example.org/articles/42")
    request = IngestRequest(ingest_type="pdf", base_url="https://example.org/articles/42")
    result = FileIngestResult(hit=False, status=IngestFileStatus.NO_PDF_LINK,
                              request=request.to_json(), hops=[request.base_url],
                              html_biblio=page.biblio)
    assert json_line(result) == (
        b'{"hit":false,"status":"no-pdf-link","request":{"ingest_type":"pdf","base_url":'
        b'"https://example.org/articles/42","force_recrawl":false},"hops":'
        b'["https://example.org/articles/42"],"html_biblio":' + JSONLD_JSON + b"}")
    without = result.model_copy(update={"html_biblio": None})
    assert b"html_biblio" not in json_line(without)


def test_a_record_keeps_its_keys_order_and_leaves_out_what_it_lacks() -> None:
    biblio = HtmlBiblio(title="T", release_year=1999, doi="10.1/x")
    assert dumps_output(biblio.to_json()) == b'{"title":"T","release_year":1999,"doi":"10.1/x"}'
    # the order survives the pickle from the parsing child process, and a copy
    again = pickle.loads(pickle.dumps(biblio))
    assert list(again.to_json()) == list(biblio.model_copy().to_json()) == [
        "title", "release_year", "doi"]
    assert HtmlBiblio().to_json() == {}


def test_an_unknown_field_is_refused() -> None:
    with pytest.raises(ValidationError, match="citation_title"):
        HtmlBiblio.model_validate({"citation_title": "T"})


def test_work_identifiers_prefer_the_request_over_the_landing_page() -> None:
    biblio = HtmlBiblio(doi="10.5555/page", pmid="123", arxiv_id="2101.01234")
    request = IngestRequest(ingest_type="pdf", base_url="https://example.org/a",
                            ext_ids={"doi": "10.5555/REQUEST"})
    assert work_identifiers(biblio, request) == {
        "doi": "10.5555/request", "pmid": "123", "arxiv": "2101.01234"}
    assert work_identifiers(None, request) == {"doi": "10.5555/request"}


def test_landing_page_metadata_in_crossref_names() -> None:
    biblio = HtmlBiblio(title="T", contrib_raw_names=["A B", ""], first_page="5",
                        last_page="9", lang="EN", release_date="2020-03",
                        container_name="J", doi="10.1/x")
    assert landing_page_metadata(biblio) == {
        "DOI": "10.1/x", "title": ["T"], "container-title": ["J"],
        "author": [{"name": "A B"}], "page": "5-9", "language": "en",
        "issued": {"date-parts": [[2020, 3]]}}
    assert landing_page_metadata(None) == {}


def test_a_jsonld_type_list_holding_an_object_is_read_not_a_crash() -> None:
    """``"@type": [{...}, "ScholarlyArticle"]``: the object is no type name (this
    raised TypeError, unhashable dict, before the JSON-LD was read as ``object``)."""
    page = parse_html(b'<script type="application/ld+json">{"@type": [{"a": 1}, '
                      b'"ScholarlyArticle"], "headline": "H"}</script>', "https://e.org/a")
    assert page.biblio is not None and page.biblio.to_json() == {"title": "H"}
