"""`sandcrawler match refs`: references of grobid_refs rows resolved into the
citation table, on SQLite and PostgreSQL; resumed, run twice at once, killed;
and `persist crossref` keeping the match index current by itself.

The catalog is real Crossref metadata from the matching evaluation's sources
(bench/data/match/refs/catalog.jsonl.gz; bench/build/match_sources.py cites them).
The references are those works as refs_json objects, as a parser gives them,
plus references that are bad in each way the issue names.
"""

from __future__ import annotations

import gzip
import os
import signal
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
from sqlalchemy import Engine, select, update

from sandcrawler.db.schema import citation, crossref, grobid_refs
from sandcrawler.match.index import SqliteIndex
from sandcrawler.match.sync import MARK
from tests.helpers.cli import invoke, run_cli
from tests.helpers.paths import REPO

# SQL: on SQLite and PostgreSQL
pytestmark = pytest.mark.both_backends

CATALOG = REPO / "bench" / "data" / "match" / "refs" / "catalog.jsonl.gz"
MATCHED = {"exact", "strong"}
#: a document's references (grobid_refs source document)
DOC_UUID = str(uuid.UUID(int=0x5A4D))


def catalog(n: int) -> list[dict[str, Any]]:
    """The first ``n`` works with a title, an author with a family name and a year."""
    works = []
    with gzip.open(CATALOG, "rb") as fh:
        for line in fh:
            w = orjson.loads(line)
            if w.get("title") and any("family" in a for a in w.get("author", [])) \
                    and w.get("issued", {}).get("date-parts"):
                works.append(w)
                if len(works) == n:
                    break
    return works


def as_ref(work: dict[str, Any], key: str, index: int) -> dict[str, Any]:
    """A Crossref work as a parsed reference (GrobidBiblio.to_dict() fields)."""
    ref = {"id": key, "index": index, "title": work["title"][0],
           "authors": [{"surname": a["family"], "full_name": f"{a.get('given', '')} "
                        f"{a['family']}".strip()} for a in work["author"] if "family" in a],
           "date": str(work["issued"]["date-parts"][0][0]),
           "journal": (work.get("container-title") or [None])[0],
           "volume": work.get("volume"), "first_page": (work.get("page") or "").split("-")[0]}
    return {k: v for k, v in ref.items() if v}


#: references that are bad each in its own way, and the statuses they may get
BAD_REFS: list[tuple[dict[str, Any], set[str]]] = [
    ({"id": "nothing"}, {"too-little"}),
    ({"id": "wrong-type", "title": 5, "authors": "Smith"}, {"bad-biblio"}),
    ({"id": "huge", "title": "word " * 2000, "authors": [{"surname": "Smith"}]},
     {"no-match", "too-little", "weak"}),
    ({"id": "elsewhere", "title": "A study of things no catalog here has heard of",
      "authors": [{"surname": "Nobody"}], "date": "1999"}, {"no-match", "weak", "too-little"}),
]


def refs_rows(works: list[dict[str, Any]], citing: int, per: int = 6,
              bad: bool = True) -> tuple[list[bytes], dict[tuple[str, int], str | None]]:
    """grobid_refs JSON lines for the first ``citing`` works (and one document),
    each citing ``per`` others; and the DOI each reference should resolve to."""
    lines: list[bytes] = []
    expected: dict[tuple[str, int], str | None] = {}
    n = len(works)
    for i in range(citing + 1):
        source, source_id = ("document", DOC_UUID) if i == citing else \
            ("crossref", works[i]["DOI"])
        name = f"uuid:{source_id}" if source == "document" else f"doi:{source_id.lower()}"
        refs = []
        for j in range(per):
            cited = works[(i * 7 + j * 13 + 1) % n]
            refs.append(as_ref(cited, f"ref{j}", j))
            expected[(name, j)] = cited["DOI"].lower()
        if bad and i % 3 == 0:
            for ref, _ in BAD_REFS:
                expected[(name, len(refs))] = None
                refs.append(ref)
        lines.append(orjson.dumps({"source": source, "source_id": source_id,
                                   "source_ts": "2024-01-01T00:00:00Z", "refs_json": refs}))
    return lines, expected


def load(tmp_path: Path, works: list[dict[str, Any]], lines: list[bytes]) -> None:
    """The catalog into crossref and its index, the rows into grobid_refs."""
    w = tmp_path / "works.jsonl"
    w.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in works))
    r = tmp_path / "refs.jsonl"
    r.write_bytes(b"".join(x + b"\n" for x in lines))
    for args in (["persist", "crossref", str(w)], ["match", "index"],
                 ["persist", "grobid-refs", str(r)]):
        result = invoke(args)
        assert result.exit_code == 0, result.stderr


Row = tuple[str, int, str | None, str | None, str, float | None, tuple[str, ...]]


def table(engine: Engine) -> list[Row]:
    with engine.connect() as conn:
        rows = conn.execute(select(citation.c.citing, citation.c.ref_index,
                                   citation.c.ref_key, citation.c.cited_doi,
                                   citation.c.status, citation.c.score, citation.c.reasons)
                            .order_by(citation.c.citing, citation.c.ref_index)).all()
    return [(c, i, k, d, s, sc, tuple(r or ())) for c, i, k, d, s, sc, r in rows]


def age_sources(engine: Engine, hours: float = 1) -> None:
    """As if the grobid_refs rows were written ``hours`` ago (the source's
    resumption margin, SETTLE, is 10 minutes)."""
    with engine.begin() as conn:
        conn.execute(update(grobid_refs).values(
            updated=datetime.now(UTC) - timedelta(hours=hours)))


# -- resolving --------------------------------------------------------------------------------


def test_refs_resolved_into_citation_rows(engine: Engine, tmp_path: Path) -> None:
    works = catalog(40)
    lines, expected = refs_rows(works, citing=12)
    load(tmp_path, works, lines)
    result = invoke(["match", "refs"])
    assert result.exit_code == 0, result.stderr
    assert "match refs: 13 records" in result.stderr and "success 13" in result.stderr
    rows = table(engine)
    assert {(c, i) for c, i, *_ in rows} == set(expected)  # one row per reference
    by_key = {(c, i): (k, d, s) for c, i, k, d, s, *_ in rows}
    for key, doi in expected.items():
        _ref_key, cited, status = by_key[key]
        if doi is not None:
            assert (cited, status) == (doi, "exact"), key
        else:
            assert cited is None and status not in MATCHED, key
    # the bad references: a status each
    bad = {k: s for (c, i), (k, _, s) in by_key.items() if c == f"doi:{works[0]['DOI']}"
           and k in {r["id"] for r, _ in BAD_REFS}}
    for ref, statuses in BAD_REFS:
        assert bad[ref["id"]] in statuses, (ref["id"], bad[ref["id"]])
    assert any(c == f"uuid:{DOC_UUID}" for c, *_ in rows)  # the document's too

    # again, --redo: the same rows, none added
    again = invoke(["match", "refs", "--redo"])
    assert again.exit_code == 0, again.stderr
    assert table(engine) == rows


def test_source_option_chooses_whose_references(engine: Engine, tmp_path: Path) -> None:
    works = catalog(20)
    lines, _ = refs_rows(works, citing=3, bad=False)
    load(tmp_path, works, lines)
    assert invoke(["match", "refs", "--source", "documents"]).exit_code == 0
    assert {c for c, *_ in table(engine)} == {f"uuid:{DOC_UUID}"}
    assert invoke(["match", "refs", "--source", "crossref", "--limit", "2"]).exit_code == 0
    assert len({c for c, *_ in table(engine)}) == 3


def test_resumed_runs_pass_over_current_works(engine: Engine, tmp_path: Path) -> None:
    works = catalog(30)
    lines, expected = refs_rows(works, citing=6)
    load(tmp_path, works, lines)
    age_sources(engine)
    first = invoke(["match", "refs"])
    assert "success 7" in first.stderr and "already current" not in first.stderr
    rows = table(engine)
    second = invoke(["match", "refs"])
    assert second.exit_code == 0
    assert "match refs: 0 records" in second.stderr
    assert "7 works already current, passed over" in second.stderr
    assert table(engine) == rows

    # one work's references change (fewer of them): only it is resolved again,
    # and its positions past the new list are gone
    shorter = orjson.loads(lines[0])
    shorter["refs_json"] = shorter["refs_json"][:2]
    shorter["source_ts"] = "2024-02-01T00:00:00Z"
    path = tmp_path / "shorter.jsonl"
    path.write_bytes(orjson.dumps(shorter) + b"\n")
    assert invoke(["persist", "grobid-refs", str(path)]).exit_code == 0
    third = invoke(["match", "refs"])
    assert "success 1" in third.stderr and "6 works already current" in third.stderr
    citing = f"doi:{shorter['source_id'].lower()}"
    assert [i for c, i, *_ in table(engine) if c == citing] == [0, 1]
    assert len(table(engine)) == len(expected) - (len(orjson.loads(lines[0])["refs_json"]) - 2)


def test_bad_grobid_refs_rows_get_a_status(engine: Engine, tmp_path: Path) -> None:
    """A row another producer wrote, which is not the seed's (a reference that is
    not an object): the work gets bad-row, the run goes on."""
    works = catalog(20)
    lines, _ = refs_rows(works, citing=2, bad=False)
    load(tmp_path, works, lines)
    with engine.begin() as conn:
        conn.execute(grobid_refs.insert().values(
            source="crossref", source_id="10.1234/odd", refs_json=["a string", {}]))
    result = invoke(["match", "refs"])
    assert result.exit_code == 0, result.stderr
    assert "doi:10.1234/odd: bad-row: not a grobid_refs row: refs_json.0: " in result.stderr
    assert "success 3" in result.stderr and "bad-row 1" in result.stderr
    assert not [c for c, *_ in table(engine) if "odd" in c]


def test_empty_catalog_refuses_the_run(engine: Engine, tmp_path: Path) -> None:
    """An empty catalog says nothing about a reference: no empty-catalog rows are
    written (they would also mark the works as resolved); the run stops in one line."""
    lines, _ = refs_rows(catalog(10), citing=2)
    load(tmp_path, [], lines)
    result = invoke(["match", "refs"])
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == [
        "Error: the match index is empty: load Crossref works with `sandcrawler persist "
        "crossref FILE` and build the index with `sandcrawler match index` first"]
    assert table(engine) == []


# -- at once, and killed ----------------------------------------------------------------------


def _big(engine: Engine, tmp_path: Path) -> tuple[int, dict[tuple[str, int], str | None]]:
    works = catalog(200)
    lines, expected = refs_rows(works, citing=150, per=8)
    load(tmp_path, works, lines)
    return len(lines), expected


def _check_complete(engine: Engine, expected: dict[tuple[str, int], str | None]) -> None:
    """Every reference has exactly its row, the same as a clean run writes."""
    rows = table(engine)
    assert [(c, i) for c, i, *_ in rows] == sorted(expected)
    clean = run_cli(["match", "refs", "--redo", "--silent"])
    assert clean.returncode == 0, clean.stderr.decode()
    assert table(engine) == rows


@pytest.mark.slow
def test_two_runs_at_once_lose_and_duplicate_nothing(engine: Engine, tmp_path: Path) -> None:
    _count, expected = _big(engine, tmp_path)
    runs = [subprocess.Popen([sys.executable, "-m", "sandcrawler", "match", "refs",
                              "--batch-size", "3", "--silent"], stderr=subprocess.PIPE,
                             env=dict(os.environ)) for _ in range(2)]
    for run in runs:
        _, err = run.communicate(timeout=300)
        assert run.returncode == 0, err.decode()
    _check_complete(engine, expected)


@pytest.mark.slow
def test_killed_run_is_resumed(engine: Engine, tmp_path: Path) -> None:
    count, expected = _big(engine, tmp_path)
    age_sources(engine)
    run = subprocess.Popen([sys.executable, "-m", "sandcrawler", "match", "refs",
                            "--batch-size", "2", "--silent"], stderr=subprocess.PIPE,
                           env=dict(os.environ))
    deadline = time.monotonic() + 120
    while len({c for c, *_ in table(engine)}) < 10:
        assert run.poll() is None, run.stderr.read().decode() if run.stderr else ""
        assert time.monotonic() < deadline
        time.sleep(0.05)
    run.send_signal(signal.SIGKILL)
    run.wait()
    assert run.stderr is not None
    run.stderr.close()
    done = len({c for c, *_ in table(engine)})
    assert 10 <= done < count  # killed mid-run

    rerun = run_cli(["match", "refs"])
    assert rerun.returncode == 0, rerun.stderr.decode()
    err = rerun.stderr.decode()
    # works whose rows were committed before the kill are not resolved again
    current = int(err.split(" works already current")[0].rsplit("match refs: ", 1)[1]
                  .replace(",", ""))
    assert current >= done - 1  # at most the batch in hand at the kill was partly seen
    assert f"success {count - current}" in err
    _check_complete(engine, expected)


# -- persist crossref feeds the index ---------------------------------------------------------


def _index(tmp_path: Path) -> SqliteIndex:
    return SqliteIndex(tmp_path / "data" / "match" / "index.sqlite3")


def test_persist_crossref_adds_its_works_to_the_index(engine: Engine, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SANDCRAWLER_MATCH_UPDATE", "false")
    works = catalog(5)
    path = tmp_path / "works.jsonl"
    path.write_bytes(b"".join(orjson.dumps(w) + b"\n" for w in works))
    assert invoke(["persist", "crossref", str(path)]).exit_code == 0
    index = _index(tmp_path)
    try:
        assert index.size() == 5
        assert index.meta(MARK) is None  # never read from the table: the feed added them
    finally:
        index.close()
    w = works[2]
    query = {"id": 1, "title": w["title"][0],
             "authors": [{"surname": a["family"]} for a in w["author"] if "family" in a],
             "date": str(w["issued"]["date-parts"][0][0])}
    found = invoke(["match", "biblio", "-"], input=orjson.dumps(query))
    assert orjson.loads(found.stdout)["doi"] == w["DOI"].lower()

    # an older version of a work is not stored over the newer one: nor indexed
    older = dict(w, title=["An older title that the table never kept"],
                 indexed={"date-time": "2001-01-01T00:00:00Z"})
    path.write_bytes(orjson.dumps(older) + b"\n")
    assert invoke(["persist", "crossref", str(path)]).exit_code == 0
    index = _index(tmp_path)
    try:
        record = index.by_doi(w["DOI"].lower())
        assert record is not None and "older" not in str(record).lower()
    finally:
        index.close()
    with engine.connect() as conn:
        stored = conn.execute(select(crossref.c.record).where(
            crossref.c.doi == w["DOI"].lower())).scalar_one()
    assert stored["title"] == w["title"]


def test_index_that_cannot_be_written_leaves_the_database_write(
        engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocked = tmp_path / "blocked"
    blocked.mkdir()
    monkeypatch.setenv("SANDCRAWLER_MATCH_INDEX", str(blocked))  # a directory: no file there
    works = catalog(30)
    path = tmp_path / "works.jsonl"
    path.write_bytes(b"".join(orjson.dumps(w) + b"\n" for w in works))
    result = run_cli(["persist", "crossref", str(path), "--batch-size", "10"])
    err = result.stderr.decode()
    assert result.returncode == 0, err
    assert "success 30" in err
    assert err.count("the match index was not updated") == 1  # said once, not per batch
    assert "`sandcrawler match index` adds them" in err
    with engine.connect() as conn:
        assert len(conn.execute(select(crossref.c.doi)).all()) == 30
    # the index's own reading of the table catches up
    monkeypatch.setenv("SANDCRAWLER_MATCH_INDEX", str(tmp_path / "index.sqlite3"))
    assert invoke(["match", "index"]).exit_code == 0
    index = SqliteIndex(tmp_path / "index.sqlite3")
    try:
        assert index.size() == 30
    finally:
        index.close()
