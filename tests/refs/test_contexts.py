"""Sections and citation contexts read from a full-text TEI (refs/contexts.py):
GROBID's own, and the cascade's in GROBID's layout."""

from __future__ import annotations

import pytest
from grobid_tei_xml.types import GrobidAuthor, GrobidBiblio

from sandcrawler.core.errors import RecordError
from sandcrawler.docparse.assembly.tei import TeiOptions, extraction_tei
from sandcrawler.records.extraction import Extraction
from sandcrawler.records.fulltext import Body, Callout, CalloutKind, Paragraph, Section
from sandcrawler.records.statuses import ExtractStatus
from sandcrawler.refs.contexts import read_body
from tests.helpers.paths import SHARED_DATA
from tests.helpers.skips import unavailable


def test_a_real_grobid_tei_gives_sections_and_contexts() -> None:
    path = SHARED_DATA / "sandcrawler-fixtures" / "23b29ea36382680716be08fc71aa81bd226e8a85.xml"
    if not path.exists():
        unavailable(f"{path} is not here", "SHARED_DATA")
    body = read_body(path.read_bytes())
    heads = [(s.number, s.head) for s in body.sections]
    assert ("1", "Introduction") in heads and ("2.1", "Background") in heads
    # GROBID 0.5.1 linked most of its callouts; each context holds its callout
    assert body.callouts > 100 and body.linked / body.callouts > 0.9
    assert any("As Hecht [2] points out" in c for c in body.contexts[1])


@pytest.mark.parametrize("sentences", [False, True])
def test_our_tei_gives_the_same_contexts_with_or_without_sentences(sentences: bool) -> None:
    text = "Sleep is short [1]. Others disagree [2]. Nobody knows."
    para = Paragraph(text, [Callout(CalloutKind.BIBR, "[1]", 15, 18, "b0"),
                            Callout(CalloutKind.BIBR, "[2]", 36, 39, "b1")])
    refs = [GrobidBiblio(authors=[GrobidAuthor(full_name="A B")], title=t) for t in "xy"]
    found = Extraction(ExtractStatus.SUCCESS, header=GrobidBiblio(authors=[], title="T"),
                       references=refs, body=Body([Section("Intro", "1", [para])]))
    body = read_body(extraction_tei(found, TeiOptions(segment_sentences=sentences)))
    assert [(s.number, s.head) for s in body.sections] == [("1", "Intro")]
    assert (body.callouts, body.linked) == (2, 2)
    if sentences:
        assert body.contexts == {0: ["Sleep is short [1]."], 1: ["Others disagree [2]."]}
    else:
        assert body.contexts[0] == body.contexts[1] == [text]


def test_a_broken_tei_is_a_record_error() -> None:
    with pytest.raises(RecordError):
        read_body(b"<TEI><text><body><div><p>unclosed")
