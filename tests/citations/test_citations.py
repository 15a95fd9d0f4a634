"""The citation parser contract: serialisation identical to grobid_tei_xml's to_dict()."""

from __future__ import annotations

from pathlib import Path

import grobid_tei_xml
import orjson
import pytest
from grobid_tei_xml import GrobidBiblio
from grobid_tei_xml.types import GrobidAddress, GrobidAffiliation, GrobidAuthor

from sandcrawler.citations.base import MAX_CITATION_CHARS, biblio_to_dict, parse_within_limit
from tests.helpers.cli import invoke
from tests.helpers.paths import FIXTURES

TEI_FILES = ["grobid_refs_978-3-030-64953-1_4.tei.xml", "grobid_refs_s1047951103000064.tei.xml",
             "23b29ea36382680716be08fc71aa81bd226e8a85.xml",
             "grobid-0.4.1-sample2.tei.fulltext.xml"]


def real_biblios(shared_data: Path) -> list[GrobidBiblio]:
    biblios = []
    for name in TEI_FILES[:2]:
        biblios += grobid_tei_xml.parse_citation_list_xml((FIXTURES / name).read_text())
    for name in ["23b29ea36382680716be08fc71aa81bd226e8a85.xml",
                 "grobid-0.4.1-sample2.tei.fulltext.xml"]:
        doc = grobid_tei_xml.parse_document_xml((FIXTURES / name).read_text())
        biblios += [*(doc.citations or []), doc.header]
    return biblios


def test_same_as_to_dict_on_real_output(shared_data: Path) -> None:
    biblios = real_biblios(shared_data)
    assert len(biblios) > 150
    for b in biblios:
        assert biblio_to_dict(b) == b.to_dict()


@pytest.mark.parametrize(
    "biblio",
    [
        GrobidBiblio(authors=[]),
        GrobidBiblio(authors=[], title="", index=0, volume="0"),
        GrobidBiblio(authors=[GrobidAuthor(full_name=None)], editors=[]),
        GrobidBiblio(authors=[GrobidAuthor(full_name="A B", affiliation=GrobidAffiliation(
            address=GrobidAddress()))]),
        GrobidBiblio(authors=[GrobidAuthor(full_name="A B", affiliation=GrobidAffiliation(
            institution="MIT", address=GrobidAddress(country="US", post_code="")))]),
    ],
)
def test_same_as_to_dict_edge_cases(biblio: GrobidBiblio) -> None:
    assert biblio_to_dict(biblio) == biblio.to_dict()


@pytest.mark.parametrize("name", TEI_FILES)
def test_tei_reader_equals_grobid_tei_xml(shared_data: Path, name: str) -> None:
    """Every biblStruct of real GROBID output (citation lists, and the references and
    header of full-text TEI) reads into exactly the library's GrobidBiblio."""
    from sandcrawler.citations.tei import parse_citation_list

    xml = (FIXTURES / name).read_text()
    ours, theirs = parse_citation_list(xml), grobid_tei_xml.parse_citation_list_xml(xml)
    assert len(ours) == len(theirs) > 0
    for a, b in zip(ours, theirs, strict=True):
        assert a == b


EDGE_TEI = [
    # affiliation with typed/untyped orgNames and an address; ORCID and email
    '<biblStruct xml:id="b0"><analytic><author><persName><forename type="first">A</forename>'
    '<forename type="middle">B</forename><surname>Cee</surname></persName><email>a@b.c</email>'
    '<idno type="ORCID">0000-0001</idno><affiliation><orgName type="institution">MIT</orgName>'
    '<orgName>untyped</orgName><orgName type="">empty</orgName><address><country>US</country>'
    '<postCode/></address></affiliation></author><author><name>no persName</name></author>'
    '<title level="a" type="main"/></analytic><monogr><title level="j">J</title>'
    '<title level="j" type="abbrev">J.</title><title level="m" type="sub">M</title>'
    '<editor>Bare Editor</editor><editor>x</editor><editor><persName><surname>E</surname>'
    '</persName><persName><surname>F</surname></persName></editor>'
    '<imprint><publisher>P</publisher><biblScope unit="page" from="5"/>'
    '<date type="published" when="">d</date></imprint></monogr>'
    '<idno type="arXiv">arXiv:1234.5678</idno><idno type="DOI">10.1/x</idno>'
    '<ptr target="https://doi.org/10.1/x"/><note>a plain note</note>'
    '<note type="raw_reference">raw</note></biblStruct>',
    # contributor editors: handed to grobid_tei_xml itself
    '<biblStruct><monogr><editor>Ed One</editor><contributor role="editor">C</contributor>'
    '<title level="m">Book</title><imprint><biblScope unit="page">12</biblScope></imprint>'
    '</monogr><ptr target=" &lt;http://x.org/a&gt;.Lastaccessed"/></biblStruct>',
    '<listBibl/>',
]


@pytest.mark.parametrize("xml", EDGE_TEI)
def test_tei_reader_edge_cases(xml: str) -> None:
    from sandcrawler.citations.tei import parse_citation_list

    assert parse_citation_list(xml) == grobid_tei_xml.parse_citation_list_xml(xml)


def test_overlong_strings_reach_no_parser() -> None:
    """Issue 14 B5: a 20 MB reference string took 1 GB to parse. Strings over the
    cap are answered unparsed, in their place, and the parser never sees them."""
    seen: list[list[str]] = []

    class Recording:
        def parse_lists(self, lists):  # type: ignore[no-untyped-def]
            seen.extend(list(x) for x in lists)
            return [[GrobidBiblio(authors=[], unstructured=s, title="t") for s in x]
                    for x in lists]

    huge = "x" * (MAX_CITATION_CHARS + 1)
    [got] = parse_within_limit(Recording(), [["Smith J. A title. 2001.", huge, "B. 2002."]])  # type: ignore[arg-type]
    assert seen == [["Smith J. A title. 2001.", "B. 2002."]]
    assert isinstance(got, list)
    assert [b.unstructured for b in got] == ["Smith J. A title. 2001.", huge, "B. 2002."]
    assert got[1].title is None and got[0].title == "t"


def test_citations_parse_reports_too_long() -> None:
    result = invoke(["citations", "parse", "-"], input=orjson.dumps("y" * 6000) + b"\n")
    assert result.exit_code == 0
    [line] = result.stdout.splitlines()
    assert orjson.loads(line)["unstructured"] == "y" * 6000
    assert "too-long 1" in result.stderr
