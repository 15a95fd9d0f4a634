"""References found with a full text (``sandcrawler.refs.reading``): GROBID TEI,
JATS ref-lists and Highwire citation_reference tags, on real files from the shared
data, and their grobid_refs rows on SQLite and PostgreSQL."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import grobid_tei_xml
import pytest
from grobid_tei_xml import GrobidBiblio
from selectolax.lexbor import LexborHTMLParser
from sqlalchemy import Engine, func, select

from sandcrawler.core.errors import CitationParseError, InvalidName, RecordError
from sandcrawler.db.schema import grobid_refs
from sandcrawler.records.statuses import ProcessingStatus
from sandcrawler.refs.reading import (
    RefsWriter,
    parse_key_values,
    refs_from_jats,
    refs_from_meta,
    refs_from_tei,
)
from tests.helpers.paths import FIXTURES

#: real GROBID TEI in the shared data -> references in its listBibl
TEI_FILES = {
    "grobid-0.4.1-sample2.tei.fulltext.xml": 47,  # full text, GROBID 0.4.1
    "23b29ea36382680716be08fc71aa81bd226e8a85.xml": 100,  # full text, GROBID 0.5.1
    "grobid_refs_978-3-030-64953-1_4.tei.xml": 3,  # processCitationList answers
    "grobid_refs_s1047951103000064.tei.xml": 24,
}


def citation_references(page: bytes) -> list[str]:
    """A page's citation_reference contents, as the crawl hands them over."""
    tree = LexborHTMLParser(page)
    return [n.attributes.get("content") or ""
            for n in tree.css('meta[name="citation_reference"]')]


# -- GROBID TEI -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "count"), sorted(TEI_FILES.items()))
def test_tei_refs_are_grobid_tei_xml_s(shared_data: Path, name: str, count: int) -> None:
    tei = (FIXTURES / name).read_bytes()
    refs = refs_from_tei(tei)
    assert len(refs) == count
    assert [r["index"] for r in refs] == list(range(count))
    if name.startswith("grobid_refs_"):
        expected = grobid_tei_xml.parse_citation_list_xml(tei)
    else:
        expected = grobid_tei_xml.parse_document_xml(tei).citations or []
    assert refs == [b.to_dict() for b in expected]
    # str in, same out
    assert refs_from_tei(tei.decode("utf-8")) == refs


def test_tei_reference_fields(shared_data: Path) -> None:
    tei = (FIXTURES / "grobid-0.4.1-sample2.tei.fulltext.xml").read_bytes()
    refs = refs_from_tei(tei)
    assert refs[0] == {
        "authors": [{"full_name": "Anonymous", "surname": "Anonymous"}],
        "index": 0, "id": "b0", "date": "2002-12", "title": "Runtime process infection",
        "book_title": "ar- ticle 8 of 18",
    }
    # the header's own biblStruct is not a reference
    assert tei.count(b"<biblStruct") == len(refs) + 1


def test_tei_lone_biblstruct_and_empty_list() -> None:
    ns = 'xmlns="http://www.tei-c.org/ns/1.0"'
    one = (f'<biblStruct {ns} xml:id="b7"><analytic><title level="a" type="main">A</title>'
           '</analytic><monogr><imprint><date type="published" when="2001"/></imprint>'
           '</monogr></biblStruct>')
    assert refs_from_tei(one) == [{"authors": [], "index": 0, "id": "b7", "date": "2001",
                                   "title": "A"}]
    assert refs_from_tei(f'<TEI {ns}><text><back><listBibl/></back></text></TEI>') == []


@pytest.mark.parametrize(("tei", "status"), [
    (b"", ProcessingStatus.BAD_XML),
    (b"<TEI><listBibl><biblStruct>", ProcessingStatus.BAD_XML),
    (b'<?xml version="1.0"?><!DOCTYPE TEI [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
     b"<TEI><listBibl><biblStruct><note>&x;</note></biblStruct></listBibl></TEI>",
     ProcessingStatus.BAD_XML),
    (b"<TEI>" + b" " * 70 * 2**20 + b"</TEI>", ProcessingStatus.TOO_LARGE),
], ids=["empty", "unclosed", "external-entity", "too-large"])  # not a 70 MiB id per worker
def test_tei_bad_input_is_a_record_error(tei: bytes, status: str) -> None:
    with pytest.raises(RecordError) as e:
        refs_from_tei(tei)
    assert e.value.status == status
    assert "root:" not in str(e.value)


# -- JATS -----------------------------------------------------------------------------------------


def test_jats_refs_of_the_real_scielo_article(shared_data: Path) -> None:
    xml = (FIXTURES / "scielo_article.jats.xml").read_bytes()
    refs = refs_from_jats(xml)
    assert len(refs) == len(re.findall(rb"<ref id=", xml)) == 12
    assert [r["id"] for r in refs] == [f"B{i}" for i in range(1, 13)]
    assert refs[1] == {
        "authors": [
            {"full_name": "MR Viñas", "given_name": "MR", "surname": "Viñas"},
            {"full_name": "ML Frías", "given_name": "ML", "surname": "Frías"},
            {"full_name": "JM Verdú", "given_name": "JM", "surname": "Verdú"},
        ],
        "index": 1, "id": "B2",
        "unstructured": "Viñas MR Frías ML Verdú JM Entorno social y desnutrición en niños de "
                        "1 a 4 años de comunidades indígenas de México Rev Esp Nutr Comunitaria "
                        "2005 11 3 3 128-34",
        "date": "2005",
        "title": "Entorno social y desnutrición en niños de 1 a 4 años de comunidades "
                 "indígenas de México",
        "journal": "Rev Esp Nutr Comunitaria", "volume": "11", "issue": "3",
        "pages": "128-34", "first_page": "128", "last_page": "34",
    }
    # a book by a collective author: its source is the title, not a journal
    book = refs[2]
    assert book["authors"] == [{"full_name": "INEC"}]
    assert book["title"] == "Ecuador: 40,1% de indígenas con desnutrición crónica"
    assert book["publisher"] == "Estudio del INEC" and "journal" not in book


PMC_REFS = b"""<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE article PUBLIC "-//NLM//DTD JATS (Z39.96) Journal Archiving and Interchange DTD v1.2
 20190208//EN" "JATS-archivearticle1.dtd">
<article xmlns:xlink="http://www.w3.org/1999/xlink" article-type="research-article">
<front><article-meta><title-group><article-title>T</article-title></title-group>
</article-meta></front>
<back><ref-list><title>References</title>
<ref id="R1"><label>1.</label><mixed-citation publication-type="journal"><person-group
 person-group-type="author"><name><surname>Smith</surname><given-names>J</given-names></name>,
 <name><surname>Doe</surname><given-names>K</given-names></name></person-group>.
 <article-title>Cells&nbsp;in vitro</article-title>. <source>Nature</source>.
 <year>2019</year>;<volume>5</volume>(<issue>2</issue>):<fpage>10</fpage>&ndash;<lpage>19</lpage>.
 doi: <pub-id pub-id-type="doi">10.1038/XYZ.1</pub-id>
 <pub-id pub-id-type="pmid">31234567</pub-id></mixed-citation></ref>
<ref id="R2"><element-citation publication-type="book"><person-group person-group-type="author">
<name><surname>Roe</surname><given-names>A</given-names></name></person-group>
<person-group person-group-type="editor"><name><surname>Poe</surname><given-names>E</given-names>
</name></person-group><chapter-title>A chapter</chapter-title><source>The book</source>
<publisher-name>Press</publisher-name><year>2001</year><fpage>3</fpage>
<ext-link ext-link-type="uri" xlink:href="https://example.org/ch3">link</ext-link>
</element-citation></ref>
<ref id="R3"><note><p>Personal communication, 2020.</p></note></ref>
</ref-list></back></article>
"""


def test_jats_citation_forms() -> None:
    mixed, chapter, note = refs_from_jats(PMC_REFS)
    assert mixed == {
        "authors": [{"full_name": "J Smith", "given_name": "J", "surname": "Smith"},
                    {"full_name": "K Doe", "given_name": "K", "surname": "Doe"}],
        "index": 0, "id": "R1",
        # names spaced apart; whitespace (the &nbsp; too) collapsed to one space
        "unstructured": "Smith J, Doe K. Cells in vitro. Nature. 2019;5(2):10–19. "
                        "doi: 10.1038/XYZ.1 31234567",
        "date": "2019", "title": "Cells in vitro", "journal": "Nature", "volume": "5",
        "issue": "2", "pages": "10-19", "first_page": "10", "last_page": "19",
        "doi": "10.1038/xyz.1", "pmid": "31234567",
    }
    assert chapter["title"] == "A chapter" and chapter["book_title"] == "The book"
    assert chapter["editors"] == [{"full_name": "E Poe", "given_name": "E", "surname": "Poe"}]
    assert chapter["url"] == "https://example.org/ch3" and chapter["publisher"] == "Press"
    assert chapter["pages"] == "3"
    assert note == {"authors": [], "index": 2, "id": "R3",
                    "unstructured": "Personal communication, 2020."}


def test_jats_without_ref_list_has_no_refs() -> None:
    assert refs_from_jats(b"<article><front/><body><p>x</p></body></article>") == []


# -- citation_reference ---------------------------------------------------------------------------


def test_meta_refs_of_the_real_plos_page(shared_data: Path) -> None:
    strings = citation_references((FIXTURES / "plos_one_article.html").read_bytes())
    assert len(strings) == 23
    refs = refs_from_meta(strings)
    assert len(refs) == 23 and [r["index"] for r in refs] == list(range(23))
    first = refs[0]
    assert first["title"] == "Occurrence of reticuloendotheliosis in Chinese partridge"
    assert [a["surname"] for a in first["authors"]] == ["Cheng", "Shi", "Zhan", "Zhu", "Diao",
                                                         "Cui"]
    assert first["authors"][0] == {"full_name": "Z. Cheng", "given_name": "Z.",
                                   "surname": "Cheng"}
    assert (first["journal"], first["volume"], first["issue"], first["pages"], first["date"]) \
        == ("J Vet Med Sci", "69", "12", "1295-1298", "2007")
    assert first["unstructured"].startswith("citation_title=Occurrence of reticulo")


def test_key_values_keep_semicolons_inside_values() -> None:
    text = ("citation_title=Cats; dogs &amp; mice;citation_author=Doe, Jane; "
            "citation_doi=https://doi.org/10.1234/AB;citation_publication_date=2001/05/03;")
    assert parse_key_values(text) == [("title", "Cats; dogs & mice"), ("author", "Doe, Jane"),
                                      ("doi", "https://doi.org/10.1234/AB"),
                                      ("publication_date", "2001/05/03")]
    (ref,) = refs_from_meta([text])
    assert ref["title"] == "Cats; dogs & mice" and ref["doi"] == "10.1234/ab"
    assert ref["authors"] == [{"full_name": "Jane Doe", "given_name": "Jane", "surname": "Doe"}]
    assert ref["date"] == "2001-05-03"


class FakeParser:
    """A CitationParser that records its calls; a title for each string."""

    def __init__(self, fail: bool = False) -> None:
        self.calls: list[list[list[str]]] = []
        self.fail = fail
        self.closed = False

    def parse_lists(self, lists: Sequence[Sequence[str]]
                    ) -> list[list[GrobidBiblio] | CitationParseError]:
        self.calls.append([list(x) for x in lists])
        if self.fail:
            return [CitationParseError("GROBID said no") for _ in lists]
        return [[GrobidBiblio(authors=[], title=f"parsed: {s[:10]}") for s in x] for x in lists]

    def check(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True


def test_plain_meta_refs_go_to_the_parser_in_one_call() -> None:
    strings = ["Smith J. Cells. Nature 2019;5:10.", "citation_title=KV;citation_year=2003",
               "  ", "Doe K. Dogs &amp; cats. 2001."]
    parser = FakeParser()
    refs = refs_from_meta(strings, parser)
    assert parser.calls == [[["Smith J. Cells. Nature 2019;5:10.", "Doe K. Dogs & cats. 2001."]]]
    assert [(r["index"], r["title"]) for r in refs] == [
        (0, "parsed: Smith J. C"), (1, "KV"), (3, "parsed: Doe K. Dog")]
    assert refs[2]["unstructured"] == "Doe K. Dogs & cats. 2001."
    # without a parser, or when it fails for them: the text only
    for parser_or_none in (None, FakeParser(fail=True)):
        refs = refs_from_meta(strings, parser_or_none)
        assert refs[0] == {"authors": [], "index": 0,
                           "unstructured": "Smith J. Cells. Nature 2019;5:10."}


# -- grobid_refs rows -----------------------------------------------------------------------------

DOC = "98da17ff-bf7e-4d43-bdf2-4d8d831481e5"


def _rows(engine: Engine) -> list[dict[str, Any]]:
    with engine.connect() as conn:
        return [dict(r) for r in conn.execute(select(grobid_refs)).mappings()]


def test_refs_writer(engine: Engine) -> None:
    writer = RefsWriter(engine)
    assert writer.write(DOC, [], None) == 0 and _rows(engine) == []
    refs = [{"authors": [], "index": 0, "unstructured": "A"}]
    t1, t2 = datetime(2020, 1, 1, tzinfo=UTC), datetime(2021, 1, 1, tzinfo=UTC)
    assert writer.write(DOC.upper(), refs, t2) == 1
    (row,) = _rows(engine)
    assert (row["source"], row["source_id"], row["source_ts"]) == ("document", DOC, t2)
    assert row["refs_json"] == refs and writer.get(DOC) == refs
    # an older capture does not replace the row; the same one again changes nothing
    writer.write(DOC, [{"authors": [], "index": 0, "unstructured": "old"}], t1)
    writer.write(DOC, refs, t2)
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(grobid_refs)).scalar() == 1
    assert writer.get(DOC) == refs
    assert writer.get("00000000-0000-0000-0000-000000000000") is None
    with pytest.raises(InvalidName):
        writer.write("not-a-uuid", refs, None)
