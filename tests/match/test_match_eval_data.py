"""The matching evaluation data (bench/data/match/, docs/matching-evaluation.md) is
well-formed, is what bench/build/match_data.py builds, and covers every hard case of the
issue; the scoring counts what the docs say. No matcher needed."""

from __future__ import annotations

import gzip
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import orjson
import pytest

from tests.helpers.paths import REPO

BENCH = REPO / "bench"
DATA = BENCH / "data" / "match"
SETS = ("refs", "headers", "hard", "pairs")
GOLD = {"expected_doi", "case", "noise"}
#: refs_json field names (GrobidBiblio.to_dict()) a query may carry, besides gold and id
BIBLIO_FIELDS = {"title", "authors", "date", "journal", "volume", "issue", "pages",
                 "first_page", "last_page", "doi", "pmid", "pmcid", "arxiv_id", "unstructured"}
#: every hard case of issue 25, as the case prefix of at least one query of the hard set
HARD_CASES = [
    "notice:erratum-same-title", "notice:erratum", "notice:correction", "notice:corrigendum",
    "notice:retraction", "notice:retracted", "notice:reply", "book-review", "component",
    "another-year:query", "another-year:absent", "conference-journal:query",
    "conference-journal:absent", "generic-title:full", "generic-title:title-only",
    "translated-title:catalog-original", "translated-title:catalog-bilingual",
    "non-latin", "mojibake", "missing:no-year", "missing:surname-only",
    "missing:abbrev-journal", "missing:no-title-journal-volume-page",
    "wrong-doi:other-catalog-work", "wrong-doi:typo-not-in-catalog", "wrong-doi:work-absent",
    "verified-doi", "sparse-catalog",
]


def read(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rb") as f:
        return [orjson.loads(line) for line in f]


@pytest.fixture(scope="module")
def bench_modules() -> dict[str, ModuleType]:
    """bench/build/match_*.py and bench/eval/match_score.py, which import each other by
    bare name (run as scripts, each with its own directory on sys.path)."""
    saved = list(sys.path)
    sys.path[:0] = [str(BENCH / "build"), str(BENCH / "eval")]
    try:
        import match_data
        import match_score
        import match_synth
    finally:
        sys.path[:] = saved
    return {"data": match_data, "score": match_score, "synth": match_synth}


@pytest.fixture(scope="module", params=SETS)
def dataset(request: pytest.FixtureRequest) -> tuple[str, list[dict[str, Any]],
                                                     list[dict[str, Any]]]:
    name = request.param
    return name, read(DATA / name / "catalog.jsonl.gz"), read(DATA / name / "queries.jsonl.gz")


def test_catalog_is_crossref_works(dataset: tuple[str, list[Any], list[Any]]) -> None:
    _, catalog, _ = dataset
    dois = [w["DOI"] for w in catalog]
    assert len(dois) == len(set(dois))
    for w in catalog:
        assert w["DOI"] == w["DOI"].lower().strip() and w["DOI"].startswith("10.")
        assert w["indexed"]["date-time"] and w["type"]
        assert w.get("title") or w.get("container-title") or w.get("short-container-title")
        for key in ("title", "container-title", "short-container-title"):
            assert isinstance(w.get(key, []), list)
        for a in w.get("author", []):
            assert a.get("family") and a["sequence"] in ("first", "additional")


def test_queries_are_biblios_with_gold(dataset: tuple[str, list[Any], list[Any]]) -> None:
    name, catalog, queries = dataset
    dois = {w["DOI"] for w in catalog}
    ids = [q["id"] for q in queries]
    assert len(ids) == len(set(ids)) and all(i.startswith(f"{name}-") for i in ids)
    for q in queries:
        assert set(q) - GOLD - {"id"} <= BIBLIO_FIELDS, q["id"]
        assert q["case"]
        expected = q["expected_doi"]
        assert expected is None or expected in dois, q["id"]
        assert any(q.get(f) for f in BIBLIO_FIELDS), q["id"]
    nulls = sum(q["expected_doi"] is None for q in queries)
    # precision is measured: every set has queries whose right answer is "no match"
    assert 0.05 * len(queries) <= nulls < len(queries)


def test_refs_are_raw_strings_with_pdf_damage() -> None:
    queries = read(DATA / "refs" / "queries.jsonl.gz")
    assert all(set(q) == {"id", "unstructured"} | GOLD for q in queries)
    texts = [q["unstructured"] for q in queries]
    assert sum("\n" in t for t in texts) > len(texts) / 2
    assert sum("-\n" in t for t in texts) > len(texts) / 5
    noise = Counter(n for q in queries for n in q["noise"])
    assert {"line-breaks", "hyphenation", "ocr", "label", "truncated"} <= set(noise)
    cases = Counter(q["case"].split(":")[0] for q in queries)
    assert cases["in-catalog"] >= 1000 and cases["not-in-catalog"] >= 500


def test_headers_withhold_the_doi_and_damage_titles() -> None:
    queries = read(DATA / "headers" / "queries.jsonl.gz")
    assert not any(q.get("doi") for q in queries)
    cases = Counter(q["case"].split("+")[0].removeprefix("not-in-catalog:") for q in queries)
    assert cases["missing-title"] >= 50
    assert sum(v for k, v in cases.items() if k.startswith("garbage-title")) >= 100
    assert sum(q["title"] is None for q in queries) == sum(
        1 for q in queries if "missing-title" in q["case"])


def test_every_hard_case_is_represented() -> None:
    queries = read(DATA / "hard" / "queries.jsonl.gz")
    counts = Counter(q["case"] for q in queries)
    for case in HARD_CASES:
        n = sum(v for k, v in counts.items() if k.startswith(case))
        assert n >= 5, f"{case}: {n} queries"


def test_hard_catalog_holds_the_lookalikes() -> None:
    """The records a hard case is about are in its catalog: notices sharing the
    article's title, components, records with only title/surname/abbreviated
    journal/volume/first page and no year."""
    catalog = read(DATA / "hard" / "catalog.jsonl.gz")
    types = Counter(w["type"] for w in catalog)
    assert types["component"] >= 12 and types["proceedings-article"] >= 8
    titles = Counter(w["title"][0] for w in catalog if w.get("title"))
    assert sum(1 for t, n in titles.items() if n >= 2) >= 20  # shared titles
    sparse = [w for w in catalog if "issued" not in w and w.get("short-container-title")]
    assert len(sparse) >= 40 and all(len(w["author"]) == 1 and w["volume"] for w in sparse)
    assert any("update-to" in w for w in catalog)
    assert any(any(ord(c) > 0x3000 for c in w["title"][0]) for w in catalog if w.get("title"))


def test_wrong_doi_queries_carry_a_wrong_doi() -> None:
    queries = read(DATA / "hard" / "queries.jsonl.gz")
    for q in queries:
        if q["case"].startswith("wrong-doi"):
            assert q["doi"] and q["doi"].lower() != q["expected_doi"]
        elif q["case"].startswith("verified-doi"):
            assert q["doi"].lower() == q["expected_doi"]


def test_sets_are_what_the_builder_builds(bench_modules: dict[str, ModuleType]) -> None:
    """Rebuilt from the sources with the default seed, every set is byte for byte the
    committed one (reproducible; nobody edited the data by hand)."""
    built = bench_modules["data"].build_all(25)
    assert set(built) == set(SETS)
    for name, (catalog, queries) in built.items():
        assert orjson.loads(orjson.dumps(catalog)) == read(DATA / name / "catalog.jsonl.gz")
        assert orjson.loads(orjson.dumps(queries)) == read(DATA / name / "queries.jsonl.gz")


def test_synthetic_works_are_deterministic_and_varied(
        bench_modules: dict[str, ModuleType]) -> None:
    synth = bench_modules["synth"]
    a = list(synth.SynthWorks(7).lines(3000))
    assert a == list(synth.SynthWorks(7).lines(3000))
    assert a != list(synth.SynthWorks(8).lines(3000))
    works = [orjson.loads(line) for line in a]
    assert len({w["DOI"] for w in works}) == len(works)
    types = Counter(w["type"] for w in works)
    assert {"journal-article", "component", "proceedings-article", "book-chapter"} <= set(types)
    sparse = [w for w in works if "issued" not in w and w["type"] == "journal-article"]
    assert 0.1 < len(sparse) / len(works) < 0.3
    assert len({w["title"][0] for w in works}) > 0.9 * len(works)


@pytest.mark.parametrize(("name", "abbreviation"), [
    ("Journal of Biological Chemistry", "J. Biol. Chem."),
    ("Physical Review Letters", "Phys. Rev. Lett."),
    ("Annals of the New York Academy of Sciences", "Ann. New York Acad. Sci."),
])
def test_journal_abbreviations(bench_modules: dict[str, ModuleType], name: str,
                               abbreviation: str) -> None:
    synth = bench_modules["synth"]
    assert synth.abbreviate_journal(name) == abbreviation
    assert synth.abbreviate_journal(name, dots=False) == abbreviation.replace(".", "")


def test_scoring(bench_modules: dict[str, ModuleType]) -> None:
    score = bench_modules["score"].score
    queries = [
        {"id": "a", "expected_doi": "10.1/a", "case": "x"},
        {"id": "b", "expected_doi": "10.1/b", "case": "x"},
        {"id": "c", "expected_doi": None, "case": "y"},
        {"id": "d", "expected_doi": None, "case": "y"},
        {"id": "e", "expected_doi": "10.1/e", "case": "y"},
        {"id": "f", "expected_doi": "10.1/f", "case": "y"},
    ]
    results = [
        {"id": "a", "status": "exact", "doi": "10.1/A"},  # right (case-blind DOI)
        {"id": "b", "status": "strong", "doi": "10.1/z"},  # wrong work
        {"id": "c", "status": "strong", "doi": "10.1/c"},  # a match where none is right
        {"id": "d", "status": "no-match", "doi": None},  # right
        {"id": "e", "status": "weak", "doi": None},  # missed
    ]  # f: no output line
    s = score(queries, results)
    assert (s.queries, s.with_expected, s.matched, s.correct) == (6, 4, 3, 1)
    assert s.precision == pytest.approx(1 / 3) and s.recall == pytest.approx(1 / 4)
    assert s.missing_output == 1
    assert [(m.id, m.kind) for m in s.misses] == [
        ("b", "wrong-doi"), ("c", "false-match"), ("e", "missed"), ("f", "missed")]
    assert (s.cases["x"].right, s.cases["y"].right) == (1, 1)
    assert s.statuses["strong"].count == 2 and s.statuses["strong"].correct == 0


def test_catalog_fields_are_those_of_real_crossref_works(shared_data: Path) -> None:
    """Every field our catalogs use has the same JSON shape in real Crossref API works
    (the recorded responses in ../shared/data, read, not copied)."""
    real = [orjson.loads(p.read_bytes())["message"]
            for p in sorted((shared_data / "sandcrawler-fixtures").glob(
                "crossref_api_work_*.json"))]
    assert real
    ours = read(DATA / "hard" / "catalog.jsonl.gz")

    def shape(value: Any) -> Any:
        if isinstance(value, dict):
            return "dict"
        if isinstance(value, list):
            return ("list", shape(value[0]) if value else None)
        return type(value).__name__

    real_shapes = {k: shape(v) for w in real for k, v in w.items()}
    for w in ours:
        for key, value in w.items():
            if key in real_shapes and value:
                assert shape(value) == real_shapes[key], key
    for key in ("DOI", "title", "author", "container-title", "issued", "page", "type",
                "indexed"):
        assert key in real_shapes
    assert set(real[0]["author"][0]) >= {"given", "family", "sequence"}
