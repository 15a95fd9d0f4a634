"""Labelled spans to GrobidBiblio: persons, dates, pages, identifiers."""

from __future__ import annotations

import pytest

from sandcrawler.citations.crf.biblio import (
    build_biblio,
    find_arxiv,
    find_doi,
    normalize_date,
    scope_value,
    split_pages,
)
from sandcrawler.citations.crf.names import split_names
from sandcrawler.tagging.tokens import tokenize


def names(text: str, editors: bool = False) -> list[tuple[str | None, ...]]:
    return [(a.full_name, a.given_name, a.middle_name, a.surname)
            for a in split_names(text, editors=editors)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Smith J", [("J Smith", "J", None, "Smith")]),
        ("Smith JA, Doe B, et al.",
         [("J A Smith", "J", "A", "Smith"), ("B Doe", "B", None, "Doe")]),
        ("J. Smith", [("J Smith", "J", None, "Smith")]),
        ("Smith, John", [("John Smith", "John", None, "Smith")]),
        ("Smith, John and Doe, Jane",
         [("John Smith", "John", None, "Smith"), ("Jane Doe", "Jane", None, "Doe")]),
        ("Quine, W. V. O.", [("W V O Quine", "W", "V O", "Quine")]),
        ("Gmytrasiewicz, P. J., Durfee, E. H., & Wehe, D. K.",
         [("P J Gmytrasiewicz", "P", "J", "Gmytrasiewicz"), ("E H Durfee", "E", "H", "Durfee"),
          ("D K Wehe", "D", "K", "Wehe")]),
        ("A. Cau, R. Kuiper, and W.-P. de Roever",
         [("A Cau", "A", None, "Cau"), ("R Kuiper", "R", None, "Kuiper"),
          ("W-P de Roever", "W-P", None, "de Roever")]),
        ("Abel T., Bryan G. L.", [("T Abel", "T", None, "Abel"), ("G L Bryan", "G", "L", "Bryan")]),
        ("Marc Shapiro & Susan Horwitz",
         [("Marc Shapiro", "Marc", None, "Shapiro"), ("Susan Horwitz", "Susan", None, "Horwitz")]),
        ("J.P. Collman", [("J P Collman", "J", "P", "Collman")]),
        ("Mødh PA", [("P A Mødh", "P", "A", "Mødh")]),
        ("van der Berg, J.", [("J van der Berg", "J", None, "van der Berg")]),
        ("张三, 李四", [("张三", "三", None, "张"), ("李四", "四", None, "李")]),
        ("山田 太郎", [("山田 太郎", "太郎", None, "山田")]),
        ("Dupont, J. et Martin, Y.", [("J Dupont", "J", None, "Dupont"),
                                      ("Y Martin", "Y", None, "Martin")]),
        ("et al.", []),
        ("", []),
        ("., ;", []),
    ],
)
def test_split_names(text: str, expected: list[tuple[str | None, ...]]) -> None:
    assert names(text) == expected


def test_editor_words_are_not_names() -> None:
    assert names("C. B. Jones and R. C. Shaw, editors", editors=True) == [
        ("C B Jones", "C", "B", "Jones"), ("R C Shaw", "R", "C", "Shaw")]
    assert names("Wiklind T (Eds.)", editors=True) == [("T Wiklind", "T", None, "Wiklind")]


@pytest.mark.parametrize(
    ("text", "expected"),
    [("1997", "1997"), ("1991a", "1991"), ("(2003)", "2003"), ("June 1978", "1978-06"),
     ("5 January 1997", "1997-01-05"), ("Sept. 12, 2001", "2001-09-12"),
     ("März 1998", "1998-03"), ("in press", None), ("12", None)],
)
def test_normalize_date(text: str, expected: str | None) -> None:
    assert normalize_date(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [("127-136", ("127", "136")), ("pp. 127–36", ("127", "136")), ("1234-56", ("1234", "1256")),
     ("L5", ("L5", None)), ("e1003456", ("e1003456", None)), ("39", ("39", None)),
     ("S12--S19", ("S12", "S19")), ("xii", ("xii", None)), ("—", (None, None))],
)
def test_split_pages(text: str, expected: tuple[str | None, str | None]) -> None:
    assert split_pages(text) == expected


@pytest.mark.parametrize(("text", "expected"),
                         [("Vol. 12", "12"), ("no. 3-4", "3-4"), ("(2)", "2"), ("Suppl", "Suppl")])
def test_scope_value(text: str, expected: str) -> None:
    assert scope_value(text) == expected


def test_identifiers() -> None:
    assert find_doi("doi: 10.1103/PhysRevD.95.076006.") == "10.1103/PhysRevD.95.076006"
    assert find_doi("https://doi.org/10.1000/abc(1)xyz;") == "10.1000/abc(1)xyz"
    assert find_doi("no doi here 10.12/short") is None
    assert find_arxiv("arXiv:1708.00594v2 [hep-ph]") == "1708.00594v2"
    assert find_arxiv("hep-th/9901001") == "hep-th/9901001"
    assert find_arxiv("math.AG/0309136") == "math.AG/0309136"


def biblio(text: str, labelled: list[tuple[str, str]]):  # type: ignore[no-untyped-def]
    """build_biblio on ``text`` where each (label, substring) labels those tokens."""
    tokens = tokenize(text)
    labels = ["O"] * len(tokens)
    for label, piece in labelled:
        start = text.index(piece)
        end = start + len(piece)
        for i, t in enumerate(tokens):
            if t.start >= start and t.end <= end:
                labels[i] = label
    return build_biblio(text, tokens, labels)


def test_build_biblio_article() -> None:
    text = ('Smith J, Doe A. "A study of things." Phys. Rev. D 95(3), 076006–076010 (1997). '
            "doi:10.1103/PhysRevD.95.076006. PMID: 12345. https://doi.org/10.1103/x")
    b = biblio(text, [("author", "Smith J, Doe A"), ("title", "A study of things."),
                      ("journal", "Phys. Rev. D"), ("volume", "95"), ("issue", "3"),
                      ("pages", "076006–076010"), ("date", "1997"),
                      ("doi", "doi:10.1103/PhysRevD.95.076006"),
                      ("web", "https://doi.org/10.1103/x")])
    assert [a.surname for a in b.authors] == ["Smith", "Doe"]
    assert b.title == "A study of things"
    assert b.journal == "Phys. Rev. D"
    assert (b.volume, b.issue, b.date) == ("95", "3", "1997")
    assert (b.first_page, b.last_page, b.pages) == ("076006", "076010", "076006-076010")
    assert b.doi == "10.1103/PhysRevD.95.076006"
    assert b.pmid == "12345"  # recognised although not labelled
    assert b.url is None  # a DOI URL is redundant with the DOI
    assert b.unstructured == text


def test_build_biblio_chapter_and_book() -> None:
    text = "Goodman N (1972) A world. In: Problems and projects. Bobbs-Merrill, pp 155-172"
    chapter = biblio(text, [("author", "Goodman N"), ("date", "1972"), ("title", "A world"),
                            ("booktitle", "Problems and projects"),
                            ("publisher", "Bobbs-Merrill"), ("pages", "155-172")])
    assert (chapter.title, chapter.book_title) == ("A world", "Problems and projects")
    assert chapter.publisher == "Bobbs-Merrill"
    book = biblio(text, [("booktitle", "Problems and projects")])
    assert (book.title, book.book_title) == ("Problems and projects", None)


def test_build_biblio_nothing_labelled() -> None:
    b = biblio("arXiv:1708.00594 and PMC1234567", [])
    assert b.arxiv_id == "1708.00594" and b.pmcid == "PMC1234567"
    empty = build_biblio("", [], [])
    assert empty.unstructured == "" and empty.authors == [] and empty.is_empty()
