"""Which Crossref references get re-parsed, and how their strings are cleaned."""

from __future__ import annotations

import orjson
import pytest

from sandcrawler.core.errors import RecordError
from sandcrawler.refs.crossref_works import (
    select_references,
    should_reparse,
    unwrap_work,
    work_doi,
    work_indexed,
)
from sandcrawler.refs.repair import clean_unstructured, undouble

# The references GROBID was really given for the two fixture works: exactly those
# without a DOI and without structured metadata.
EXPECTED_KEYS = {
    "10.1007/978-3-030-64953-1_4": ["4_CR93", "4_CR193", "4_CR210"],
    "10.1017/s1047951103000064": [
        f"S1047951103000064_ref{n:03d}" for n in
        [25, 13, 12, 41, 2, 43, 37, 35, 3, 5, 17, 16, 1, 39, 32, 14, 8, 38, 18, 27, 34, 44, 6, 30]
    ],
}


def test_selection_on_real_works(crossref_lines: dict[str, bytes]) -> None:
    for doi, line in crossref_lines.items():
        work = unwrap_work(orjson.loads(line))
        assert work_doi(work) == doi
        selected = select_references(work)
        assert [r.key for r in selected] == EXPECTED_KEYS[doi]
        refs = work["reference"]
        for r in selected:
            assert refs[r.index]["key"] == r.key
            assert "DOI" not in refs[r.index]


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        ({"key": "a", "unstructured": "Smith J. A title. Nature 2001."}, True),
        ({"key": "a", "unstructured": "Smith J. A title.", "DOI": "10.1/x"}, False),
        ({"key": "a"}, False),
        ({"key": "a", "unstructured": 42}, False),
        ("just a string", False),
        ({"unstructured": "x y z w", "author": "Smith", "year": "2001",
          "article-title": "T"}, False),
        ({"unstructured": "x y z w", "author": "Smith", "year": "2001",
          "volume-title": "Book"}, False),
        ({"unstructured": "x y z w", "journal-title": "J", "volume": "3",
          "first-page": "4"}, False),
        # partial structure is not enough
        ({"unstructured": "Smith J. A title. 2001", "author": "Smith", "year": "2001"}, True),
        ({"unstructured": "Smith J. A title", "journal-title": "J", "volume": "3"}, True),
    ],
)
def test_should_reparse(ref: object, expected: bool) -> None:
    assert should_reparse(ref) is expected


def test_keys_default_to_index_and_short_strings_skipped() -> None:
    work = {"DOI": "10.1/X", "reference": [
        {"unstructured": "Smith J. A long enough title. 2001."},
        {"key": "k1", "unstructured": "1999."},
        {"key": "", "unstructured": "Jones K. Another reference. 2002."},
        {"key": 7, "unstructured": "Brown L. Numeric key reference. 2003."},
    ]}
    selected = select_references(work)
    assert [(r.index, r.key) for r in selected] == [(0, "0"), (2, "2"), (3, "7")]


@pytest.mark.parametrize(
    ("obj", "status"),
    [
        ([1, 2], "not-crossref-work"),
        ("text", "not-crossref-work"),
        ({"foo": 1}, "not-crossref-work"),
        ({"status": "ok", "message": {"foo": 1}}, "not-crossref-work"),
        ({"type": "journal-article"}, "missing-doi"),
        ({"DOI": "", "type": "journal-article"}, "missing-doi"),
        ({"DOI": "   ", "type": "journal-article"}, "missing-doi"),
        ({"DOI": 12, "type": "journal-article"}, "missing-doi"),
        ({"DOI": "not-a-doi", "type": "journal-article"}, "bad-doi"),
    ],
)
def test_bad_works(obj: object, status: str) -> None:
    with pytest.raises(RecordError) as exc:
        work_doi(unwrap_work(obj))
    assert exc.value.status == status


def test_references_not_a_list() -> None:
    with pytest.raises(RecordError) as exc:
        select_references({"DOI": "10.1/x", "reference": {"key": "a"}})
    assert exc.value.status == "bad-references"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("10.1007/ABC", "10.1007/abc"),
        ("https://doi.org/10.1007/ABC", "10.1007/abc"),
        ("doi:10.1007/abc", "10.1007/abc"),
        (" 10.1007/abc ", "10.1007/abc"),
    ],
)
def test_doi_lower_cased(value: str, expected: str) -> None:
    assert work_doi({"DOI": value}) == expected


@pytest.mark.parametrize(
    ("indexed", "expected"),
    [
        ({"date-time": "2021-05-10T22:08:45Z"}, "2021-05-10T22:08:45Z"),
        ({"date-time": "2021-05-10T23:08:45+01:00"}, "2021-05-10T22:08:45Z"),
        ({"timestamp": 1620684525000}, "2021-05-10T22:08:45Z"),
        (None, None),
        ({}, None),
    ],
)
def test_indexed(indexed: object, expected: str | None) -> None:
    assert work_indexed({"indexed": indexed}) == expected


def test_bad_indexed() -> None:
    with pytest.raises(RecordError) as exc:
        work_indexed({"indexed": {"date-time": "yesterday"}})
    assert exc.value.status == "bad-indexed"


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("Smith J &amp; Jones K. Title. 2001.", "Smith J & Jones K. Title. 2001."),
        ("Smith J &amp;amp; Jones K. Title.", "Smith J & Jones K. Title."),
        ("In: Wiley &amp;#38; Sons", "In: Wiley & Sons"),
        ("O&apos;Brien P. Title.", "O'Brien P. Title."),
        ("Smith J. <i>Nature</i> 2001;<b>3</b>:4.", "Smith J. Nature 2001;3:4."),
        ("Smith J. <jats:italic>Cell</jats:italic>.", "Smith J. Cell."),
        ("Smith\u00a0J.\tTitle.\n 2001.", "Smith J. Title. 2001."),
        ("Smith  J.\u2009Title\u200b.", "Smith J. Title."),
        ("Smith J.\x00 Title\x07.", "Smith J. Title."),
        ("  padded  ", "padded"),
        ("M\u00c3\u00bcller H. \u00c3\u0153ber Titel.", "M\u00fcller H. \u00dcber Titel."),
        ("Mu\u0308ller H.", "M\u00fcller H."),
        ("Smith J. A title. 2001.Smith J. A title. 2001.", "Smith J. A title. 2001."),
        ("Smith J. A title. 2001. Smith J. A title. 2001.", "Smith J. A title. 2001."),
        ("a < b and c > d", "a < b and c > d"),
        ("Müller H. Über Titel.", "Müller H. Über Titel."),
    ],
)
def test_clean_unstructured(raw: str, clean: str) -> None:
    assert clean_unstructured(raw) == clean


def test_undouble_keeps_short_repeats() -> None:
    assert undouble("abcabc") == "abcabc"
    assert undouble("Title. Title.") == "Title. Title."
