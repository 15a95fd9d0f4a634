"""The body's assembly from fulltext labels, callout linking, sentences and the
body's TEI (docparse/assembly/body.py, callouts.py, sentences.py, tei.py)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import grobid_tei_xml
from grobid_tei_xml.types import GrobidAuthor, GrobidBiblio

from sandcrawler.docparse.assembly.body import build_body
from sandcrawler.docparse.assembly.callouts import link_callouts
from sandcrawler.docparse.assembly.sentences import sentence_spans
from sandcrawler.docparse.assembly.tei import TeiOptions, extraction_tei
from sandcrawler.docparse.layout.elements import Token
from sandcrawler.records.extraction import Extraction
from sandcrawler.records.fulltext import CalloutKind, Formula
from sandcrawler.records.statuses import ExtractStatus

TEI = "{http://www.tei-c.org/ns/1.0}"


def labelled(spec: list[tuple[str, str]]) -> tuple[list[Token], list[str]]:
    """Tokens laid out left to right, one line per field, from (label, text)
    pairs; a label starting with I- begins a new field."""
    tokens: list[Token] = []
    labels: list[str] = []
    y = 0.0
    for label, text in spec:
        y += 12
        x = 50.0
        words = text.split(" ")
        for j, word in enumerate(words):
            tokens.append(Token(word, "Times", 10, False, False, x, y, 5.0 * len(word), 10, 0,
                                space_after=j + 1 < len(words)))
            x += 5.0 * len(word) + 3
            plain = label.removeprefix("I-")
            labels.append(label if j == 0 else plain)
    return tokens, labels


def refs() -> list[GrobidBiblio]:
    return [
        GrobidBiblio(authors=[GrobidAuthor(full_name="J Smith", surname="Smith")],
                     date="2001", title="One", id="1"),
        GrobidBiblio(authors=[GrobidAuthor(full_name="A Doe", surname="Doe")],
                     date="2003", title="Two", id="2"),
        GrobidBiblio(authors=[GrobidAuthor(full_name="A Doe", surname="Doe")],
                     date="2003", title="Three", id="3"),
    ]


def body_of(spec: list[tuple[str, str]]):  # type: ignore[no-untyped-def]
    tokens, labels = labelled(spec)
    body = build_body(tokens, labels)
    link_callouts(body, refs())
    return body


def test_sections_paragraphs_and_numbered_callouts() -> None:
    body = body_of([
        ("I-<section>", "1. Introduction"),
        ("I-<paragraph>", "Caffeine disturbs sleep"),
        ("I-<citation_marker>", "[1, 2]"),
        ("<paragraph>", "as shown before ."),
        ("I-<paragraph>", "A second paragraph cites"),
        ("I-<citation_marker>", "[3]"),
        ("I-<section>", "2.1 Methods"),
        ("I-<paragraph>", "See"),
        ("I-<figure_marker>", "Fig. 1"),
        ("<paragraph>", "and"),
        ("I-<table_marker>", "Table 2"),
        ("I-<figure>", "Figure 1 . Sleep over time"),
        ("I-<table>", "Table 2 . Doses"),
    ])
    assert [(s.number, s.head) for s in body.sections] == [("1", "Introduction"),
                                                          ("2.1", "Methods")]
    first, second = body.sections[0].paragraphs
    # the paragraph goes on across its callout
    assert first.text == "Caffeine disturbs sleep [1, 2] as shown before ."
    assert [(c.text, c.target) for c in first.callouts] == [("[1", "b0"), ("2]", "b1")]
    for c in first.callouts:
        assert first.text[c.start:c.end] == c.text
    assert [(c.text, c.target) for c in second.callouts] == [("[3]", "b2")]
    methods = body.sections[1].paragraphs[0]
    assert [(c.kind, c.target) for c in methods.callouts] == [
        (CalloutKind.FIGURE, "fig_0"), (CalloutKind.TABLE, "tab_0")]
    assert [(f.id, f.kind) for f in body.figures] == [("fig_0", "figure"), ("tab_0", "table")]


def test_author_year_callouts_link_by_surname_year_and_suffix() -> None:
    body = body_of([
        ("I-<paragraph>", "Earlier work"),
        ("I-<citation_marker>", "(Smith , 2001 ; Doe , 2003b)"),
        ("<paragraph>", "and also Doe"),
        ("I-<citation_marker>", "( 2003a )"),
        ("<paragraph>", "but not"),
        ("I-<citation_marker>", "(Nobody , 1999)"),
    ])
    callouts = body.callouts()
    assert [c.target for c in callouts] == ["b0", "b2", "b1", None]
    assert callouts[0].text.startswith("(Smith")
    assert callouts[1].text.endswith("2003b)")


def test_author_year_callouts_the_model_left_in_the_text_are_found() -> None:
    """A model trained mostly on numbered papers leaves "(Smith, 2001)" as text:
    found when it names a reference of the list, never twice, never when it
    names none."""
    body = body_of([
        ("I-<paragraph>", "As (Smith , 2001 ; Doe , 2003b) showed and Doe (2003a) "
         "found , unlike"),
        ("I-<citation_marker>", "(Smith , 2001)"),
        ("<paragraph>", "says , a trend (Nobody , 1999) saw in Table 2 (2005 data) ."),
    ])
    callouts = body.callouts()
    assert [(c.text, c.target) for c in callouts] == [
        ("(Smith , 2001", "b0"), ("Doe , 2003b)", "b2"), ("Doe (2003a)", "b1"),
        ("(Smith , 2001)", "b0")]
    para = body.sections[0].paragraphs[0]
    assert all(para.text[c.start:c.end] == c.text for c in callouts)


def test_formulas_keep_their_labels_and_are_callout_targets() -> None:
    body = body_of([
        ("I-<paragraph>", "Energy is"),
        ("I-<equation>", "E = mc 2"),
        ("I-<equation_label>", "(1)"),
        ("I-<paragraph>", "and by"),
        ("I-<equation_marker>", "Eq . 1"),
        ("<paragraph>", "it follows ."),
    ])
    blocks = body.sections[0].blocks
    formula = blocks[1]
    assert isinstance(formula, Formula)
    assert (formula.id, formula.text, formula.label) == ("formula_0", "E = mc 2", "(1)")
    assert [c.target for c in body.callouts()] == ["formula_0"]


def test_sentences_never_cut_inside_a_callout_or_after_an_abbreviation() -> None:
    text = "Sleep is short (Smith et al. 2001). Fig. 2 shows it. A third one"
    spans = sentence_spans(text, [(15, 34)])
    assert [text[a:b] for a, b in spans] == [
        "Sleep is short (Smith et al. 2001).", "Fig. 2 shows it.", "A third one"]


def test_the_body_tei_reads_back_with_grobid_tei_xml_and_keeps_callouts() -> None:
    body = body_of([
        ("I-<section>", "1 Introduction"),
        ("I-<paragraph>", "Caffeine disturbs sleep"),
        ("I-<citation_marker>", "[1]"),
        ("<paragraph>", ". It is common ."),
        ("I-<figure>", "Figure 1 . Sleep"),
    ])
    found = Extraction(ExtractStatus.SUCCESS, header=GrobidBiblio(authors=[], title="T"),
                       references=refs(), body=body)
    tei = extraction_tei(found, TeiOptions(segment_sentences=True,
                                           coordinates=frozenset({"s", "ref", "figure"})))
    doc = grobid_tei_xml.parse_document_xml(tei)
    # grobid_tei_xml joins the text's pieces with spaces, as it does GROBID's
    assert doc.body is not None and "Caffeine disturbs sleep [1] ." in " ".join(doc.body.split())
    assert len(doc.citations or []) == 3
    root = ET.fromstring(tei)
    head = root.find(f".//{TEI}body/{TEI}div/{TEI}head")
    assert head is not None and head.get("n") == "1" and head.text == "Introduction"
    ref = root.find(f".//{TEI}body//{TEI}s/{TEI}ref")
    assert ref is not None and ref.get("target") == "#b0" and ref.get("type") == "bibr"
    assert ref.get("coords", "").startswith("1,")
    sentences = root.findall(f".//{TEI}body//{TEI}s")
    assert ["".join(s.itertext()) for s in sentences] == [
        "Caffeine disturbs sleep [1] .", "It is common ."]
    figure = root.find(f".//{TEI}body/{TEI}figure")
    assert figure is not None and figure.get("{http://www.w3.org/XML/1998/namespace}id") \
        == "fig_0"
    # no raw reference strings unless asked for (GROBID's includeRawCitations=0)
    assert root.find(f".//{TEI}note[@type='raw_reference']") is None


def test_header_only_tei_has_no_body() -> None:
    found = Extraction(ExtractStatus.SUCCESS, header=GrobidBiblio(authors=[], title="T"),
                       references=refs())
    root = ET.fromstring(extraction_tei(found, TeiOptions(header_only=True)))
    assert root.find(f"{TEI}text") is None
    assert grobid_tei_xml.parse_document_xml(ET.tostring(root)).header.title == "T"
