"""The end-to-end extraction truth set (bench/data/extract/, docs/extraction-eval.md)
is well-formed and matches the PDFs it describes; bench/eval/extract_e2e.py counts what
the docs say. No extractor needed."""

from __future__ import annotations

import hashlib
import importlib
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import orjson
import pytest

from tests.helpers.paths import REPO

BENCH = REPO / "bench"
TRUTH = BENCH / "data" / "extract" / "truth.jsonl"
GROBID_COMMIT = "b8d6bec302189e29a6c358ea513f8be834004a86"
#: ../shared/data/pdfs files left out of the truth set (SOURCES.md says why)
LEFT_OUT = {"dehypenisation1.pdf"}


@pytest.fixture(scope="module")
def e2e() -> ModuleType:
    """bench/eval/extract_e2e.py, a script: it puts bench/ on sys.path for _common.py,
    which adds the script directories; the path is put back afterwards."""
    saved = list(sys.path)
    sys.path.insert(0, str(BENCH / "eval"))
    try:
        return importlib.import_module("extract_e2e")
    finally:
        sys.path[:] = saved


def truth_lines() -> list[dict[str, Any]]:
    return [orjson.loads(x) for x in TRUTH.read_bytes().splitlines() if x.strip()]


def test_truth_lines_are_complete_and_distinct() -> None:
    lines = truth_lines()
    assert len(lines) == 14
    assert len({x["sha1"] for x in lines}) == len(lines)
    assert len({x["file"] for x in lines}) == len(lines)
    for x in lines:
        assert set(x) == {"file", "sha1", "title", "authors", "doi", "references_printed",
                          "source", "notes"}
        assert re.fullmatch(r"[0-9a-f]{40}", x["sha1"])
        assert x["title"] == x["title"].strip() and len(x["title"]) > 10
        assert x["authors"], x["file"]
        for a in x["authors"]:
            assert set(a) == {"full_name", "surname"}
            assert a["surname"] and a["surname"] in a["full_name"]
        assert x["doi"] is None or x["doi"].startswith("10.")
        assert isinstance(x["references_printed"], int) and x["references_printed"] >= 0
        assert GROBID_COMMIT in x["source"] and "kermitt2/grobid" in x["source"]


def test_truth_totals() -> None:
    """The figures docs/extraction-eval.md quotes."""
    lines = truth_lines()
    assert sum(x["references_printed"] for x in lines) == 176
    assert sum(len(x["authors"]) for x in lines) == 68
    assert sum(x["doi"] is not None for x in lines) == 2


def test_shared_pdfs_are_in_the_truth(shared_data: Path) -> None:
    pdfs = sorted((shared_data / "pdfs").glob("*.pdf"))
    if not pdfs:
        pytest.fail(f"no PDF in {shared_data / 'pdfs'}")
    known = {x["sha1"]: x["file"] for x in truth_lines()}
    missing = [p.name for p in pdfs if p.name not in LEFT_OUT
               and hashlib.sha1(p.read_bytes()).hexdigest() not in known]
    assert missing == []


@pytest.mark.parametrize(("a", "b", "equal"), [
    ("TIMP: An R Package for Modeling Multi-way Spectroscopic Measurements",
     "timp an r package for modeling multiway spectroscopic measurements", True),
    ("Trace-based Just-in-Time Type Specialization", "Trace‐based “Just‐in‐Time” Type  "
     "Specialization.", True),
    ("COHERENCE PROPERTIES OF QUANTUM DOT RESONANCE FLUORESCENCE",
     "COHERENCE PROPERTIES OF QUANTUM DOT RESONANCE", False),
])
def test_soft_ignores_case_punctuation_and_space(e2e: ModuleType, a: str, b: str,
                                                  equal: bool) -> None:
    assert (e2e.soft(a) == e2e.soft(b)) is equal


def test_levenshtein_ratio(e2e: ModuleType) -> None:
    assert e2e.levenshtein_ratio("abcde", "ABCDE") == 1.0
    assert e2e.levenshtein_ratio("abcde", "abcdx") == pytest.approx(0.8)
    assert e2e.levenshtein_ratio("abcde", "") == 0.0


def line(title: str, surnames: list[str], refs: int, doi: str = "") -> dict[str, Any]:
    return {"path": "x.pdf", "status": "success",
            "header": {"title": title, "doi": doi,
                       "authors": [{"full_name": f"A. {s}"} for s in surnames]},
            "abstract": None, "references": [{"unstructured": "r"}] * refs}


def test_score_counts_as_documented(e2e: ModuleType) -> None:
    """A right title, a wrong one and a missing one: precision 1/2, recall 1/3; the
    references found are capped at the printed count per PDF."""
    truth = [
        e2e.Truth("a.pdf", "a" * 40, "Right Title", (e2e.Author("Ann Smith", "Smith"),),
                  "10.1/a", 10),
        e2e.Truth("b.pdf", "b" * 40, "Another Title", (e2e.Author("Bo Li", "Li"),
                                                       e2e.Author("Cy Wu", "Wu")), None, 4),
        e2e.Truth("c.pdf", "c" * 40, "Third Title", (e2e.Author("Di Ng", "Ng"),), None, 0),
    ]
    got = {
        "a" * 40: e2e.Extracted.from_line(line("right title.", ["Smith"], 12, "10.1/A")),
        "b" * 40: e2e.Extracted.from_line(line("Wrong", ["Wu", "Li", "Extra"], 2)),
        "c" * 40: e2e.Extracted.from_line(line("", [], 3)),
    }
    rep = e2e.score(truth, got)
    assert (rep.title_soft.correct, rep.title_soft.given, rep.title_soft.expected) == (1, 2, 3)
    assert rep.title_soft.f1 == pytest.approx(2 * 0.5 * (1 / 3) / (0.5 + 1 / 3))
    assert (rep.first_author.correct, rep.first_author.given) == (1, 2)
    assert (rep.authors.correct, rep.authors.given, rep.authors.expected) == (3, 4, 4)
    assert rep.authors_field.correct == 1
    assert (rep.doi.correct, rep.doi.expected, rep.doi_unprinted) == (1, 1, 0)
    assert (rep.refs_found_capped, rep.refs_printed, rep.refs_extra) == (12, 14, 5)
    assert rep.statuses == {"success": 3}


def test_a_pdf_without_a_line_counts_as_missing(e2e: ModuleType) -> None:
    truth = [e2e.Truth("a.pdf", "a" * 40, "T", (e2e.Author("A B", "B"),), None, 5)]
    rep = e2e.score(truth, {})
    assert (rep.title_soft.given, rep.title_soft.expected) == (0, 1)
    assert rep.refs_found_capped == 0 and rep.statuses == {"(no line)": 1}
