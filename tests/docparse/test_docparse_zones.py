"""The header zone gives the introduction back to the body
(docparse/assembly/zones.py)."""

from __future__ import annotations

import pytest

from sandcrawler.docparse.assembly.zones import (
    BODY,
    HEADER,
    body_out_of_header,
    references_after_heading,
    stamps_apart,
)
from sandcrawler.docparse.layout.elements import Line, Token


def lines(*texts: str) -> list[Line]:
    out = []
    for n, text in enumerate(texts):
        words = text.split()
        out.append(Line([Token(w, "Times", 10, False, False, 50.0 + 30 * i, 100.0 + 12 * n,
                               25.0, 10, 0, space_after=i + 1 < len(words))
                         for i, w in enumerate(words)]))
    return out


PAPER = ("A Title of Some Length", "Ann Author and Bob Writer", "Abstract. We show things.",
         "Keywords: things")


@pytest.mark.parametrize("intro", [
    ("1 Introduction",), ("1. INTRODUCTION",), ("I. Introduction",),
    ("1", "Introduction and Related Work"), ("Introduction",), ("Background",),
])
def test_the_introduction_and_what_follows_go_back_to_the_body(intro: tuple[str, ...]) -> None:
    texts = (*PAPER, *intro, "The body's first paragraph.", "Its second line.")
    zones = [HEADER] * len(texts) + [BODY]
    out = body_out_of_header(lines(*texts, "More body."), zones)
    assert out == [HEADER] * len(PAPER) + [BODY] * (len(texts) - len(PAPER) + 1)


def test_a_title_that_is_an_introduction_stays_in_the_header() -> None:
    # no number and no abstract before it: it may be the title of an editorial
    texts = ("Introduction", "Ann Author", "Some text of the editorial.")
    zones = [HEADER] * 3
    assert body_out_of_header(lines(*texts), zones) == zones
    # a long line that starts with the word is not a head
    texts = (*PAPER, "Introduction of a new method for counting things in the header "
             "that runs on")
    zones = [HEADER] * len(texts)
    assert body_out_of_header(lines(*texts), zones) == zones


def test_only_the_header_zone_is_touched() -> None:
    texts = (*PAPER, "1 Introduction", "Text.")
    zones = [HEADER] * len(PAPER) + ["<body>", "<body>"]
    assert body_out_of_header(lines(*texts), zones) == zones


def test_arxivs_margin_stamp_is_set_apart_from_the_body() -> None:
    texts = ("arXiv:0908.0054v1 [astro-ph.CO] 1 Aug 2009", "The body says arXiv:0908.0054v1.")
    assert stamps_apart(lines(*texts), [BODY, BODY]) == ["<headnote>", BODY]


PT_BIBLIOGRAPHY = ("Referências", "1. Silva JA, Souza MB. Prevalência da hipertensão. "
                   "Rev Saude Publica 2010;44:1-9.", "2. Costa R. Saúde e trabalho. "
                   "Cad Saude Publica 2012;28:33-40.")


@pytest.mark.parametrize("heading", ["Referências", "REFERENCIAS BIBLIOGRÁFICAS",
                                     "Bibliografía", "Références", "Literaturverzeichnis",
                                     "6 References"])
def test_a_bibliography_left_in_the_body_goes_to_the_references(heading: str) -> None:
    texts = ("The last paragraph of the body.", heading, *PT_BIBLIOGRAPHY[1:],
             "Anexo 1", "Questionário aplicado aos participantes.")
    out = references_after_heading(lines(*texts), [BODY] * len(texts))
    assert out == [BODY, "<references>", "<references>", "<references>", BODY, BODY]


def test_a_bibliography_the_segmentation_found_is_left_alone() -> None:
    texts = ("Body.", *PT_BIBLIOGRAPHY, "A stray line")
    zones = [BODY, BODY, "<references>", "<references>", BODY]
    assert references_after_heading(lines(*texts), zones) == zones
    # a heading-like line inside a paragraph's text is no heading
    texts = ("See the references in the appendix for the whole list of sources used.",
             "More body text.")
    assert references_after_heading(lines(*texts), [BODY, BODY]) == [BODY, BODY]


def test_a_bibliographys_first_entries_taken_for_the_body_go_back_to_it() -> None:
    """Hoehnea 49 (SciELO): "Literatura citada", its first entries (set in bold)
    taken for body headings, the rest of the list in the references."""
    texts = ("Body.", "Literatura citada", "Ali, A. 2010. First entry.",
             "Clinical and Laboratory Standards Institute 2012. Second.",
             "Doughari, J.H. 2006. Third.", "Zhang, Q. 2019. Last.")
    zones = [BODY, BODY, BODY, BODY, "<references>", "<references>"]
    assert references_after_heading(lines(*texts), zones) == [BODY] + ["<references>"] * 5
