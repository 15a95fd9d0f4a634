"""The match index and its sync with the ``crossref`` table, on SQLite and
PostgreSQL (the ``engine`` fixture), through the commands users run:
``persist crossref``, ``match index`` and ``match biblio``.
"""

from __future__ import annotations

import gzip
import io
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tarfile
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
from sqlalchemy import Engine, delete, update

from sandcrawler.db.schema import crossref
from sandcrawler.match import dump
from sandcrawler.match.index import SqliteIndex
from sandcrawler.match.sync import MARK
from tests.helpers.cli import invoke, run_cli
from tests.helpers.processes import alive, descendants
from tests.helpers.waiting import wait_until

# SQL: on SQLite and PostgreSQL
pytestmark = pytest.mark.both_backends

Work = dict[str, Any]


def work(doi: str, title: str, surname: str = "Smith", year: int = 2001, *,
         journal: str = "Journal of Examples", volume: str = "1", page: str = "1-10") -> Work:
    return {"DOI": doi, "type": "journal-article", "title": [title],
            "author": [{"given": "A.", "family": surname, "sequence": "first"}],
            "issued": {"date-parts": [[year]]}, "container-title": [journal],
            "volume": volume, "page": page,
            "indexed": {"date-time": "2024-01-02T03:04:05Z"}}


WORKS = [
    work("10.5555/a", "Glacier retreat in the southern Andes since the Little Ice Age",
         "Masiokas", 2009, volume="28", page="242-253"),
    work("10.5555/b", "Nitrogen fixation by cyanobacteria in oligotrophic lakes", "Howarth",
         1988, volume="33", page="669-687"),
    work("10.5555/c", "A lattice Boltzmann model for multiphase flow in porous media", "Shan",
         1993, volume="47", page="1815-1819"),
]
MORE = [
    work("10.5555/d", "Seasonal dynamics of soil respiration in boreal forests", "Kolari",
         2009, volume="14", page="1"),
    work("10.5555/e", "Bayesian inference of phylogenetic trees under relaxed clocks",
         "Drummond", 2006, volume="4", page="e88"),
]


def lines(works: Sequence[Work]) -> bytes:
    return b"\n".join(orjson.dumps(w) for w in works) + b"\n"


def persist(works: Sequence[Work]) -> None:
    result = invoke(["persist", "crossref", "-"], input=lines(works))
    assert result.exit_code == 0, result.stderr


def match_index(*args: str) -> str:
    """``match index``; its one line on stderr."""
    result = invoke(["match", "index", *args])
    assert result.exit_code == 0, result.stderr
    return result.stderr


def works_read(stderr: str) -> int:
    # "match index: 1,234 works read (…/s), …"
    return int(stderr.split("match index: ", 1)[1].split(" works read")[0].replace(",", ""))


def index_path() -> Path:
    return Path(os.environ["SANDCRAWLER_DATA_DIR"]) / "match" / "index.sqlite3"


def snapshot(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Everything the index holds, keyed by DOI (row ids differ between builds):
    the works, their locators and other ids, the full-text index's words (each
    with the works and occurrences it has), and any other table of the index's
    own but ``meta`` (whose mark may differ)."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        snap = {
            "works": sorted(conn.execute("SELECT doi, rec FROM works").fetchall()),
            "locators": sorted(conn.execute(
                "SELECT l.volume, l.page, w.doi FROM locators l JOIN works w ON w.id = l.id"
            ).fetchall()),
            "alt_ids": sorted(conn.execute(
                "SELECT a.key, w.doi FROM alt_ids a JOIN works w ON w.id = a.id").fetchall()),
        }
        # FTS5's own count of each word, read through a temporary vocabulary table
        # (the file is open read-only; whatever tables the index keeps itself)
        conn.execute("CREATE VIRTUAL TABLE temp.fts_words USING fts5vocab(main, titles, row)")
        snap["fts"] = sorted(conn.execute("SELECT term, doc, cnt FROM temp.fts_words"))
        names = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE "
            "'CREATE VIRTUAL%'")]
        for name in names:
            if name not in snap and name != "meta" and not name.startswith("titles"):
                snap[name] = sorted(conn.execute(f'SELECT * FROM "{name}"').fetchall())
        return snap
    finally:
        conn.close()


def biblio(result: str) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in result.splitlines()]


def match_one(query: Work) -> dict[str, Any]:
    result = invoke(["match", "biblio", "-"], input=orjson.dumps(query) + b"\n")
    assert result.exit_code == 0, result.stderr
    [out] = biblio(result.stdout)
    return out


def set_updated(engine: Engine, doi: str, when: datetime) -> None:
    with engine.begin() as conn:
        conn.execute(update(crossref).where(crossref.c.doi == doi).values(updated=when))


def remove_index() -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(str(index_path()) + suffix).unlink(missing_ok=True)


# --- building and following the table --------------------------------------------------------

def test_match_index_builds_the_index(engine: Engine) -> None:
    persist(WORKS)
    stderr = match_index()
    assert works_read(stderr) == 3 and "3 in the index" in stderr and "bytes per work" in stderr
    index = SqliteIndex(index_path())
    try:
        assert index.size() == 3
        rec = index.by_doi("10.5555/c")
        assert rec is not None and rec.titles == (
            "a lattice boltzmann model for multiphase flow in porous media",)
        assert [r.doi for r in index.by_locators([("47", "1815")], 10)[0]] == ["10.5555/c"]
        assert index.meta(MARK) is not None
    finally:
        index.close()
    out = match_one({"id": "q", "title": "A lattice Boltzmann model for multiphase flow in "
                     "porous media", "authors": [{"surname": "Shan"}], "date": "1993"})
    assert (out["id"], out["doi"]) == ("q", "10.5555/c") and out["status"] in ("exact", "strong")


def test_match_index_reads_only_what_was_written_since(engine: Engine) -> None:
    """The mark follows ``crossref.updated``; a run reads the works written after
    it, and those within ``sync.OVERLAP`` (10 minutes) before it again."""
    persist(WORKS)
    now = datetime.now(UTC)
    for hours, w in zip((3, 2, 1), WORKS, strict=True):
        set_updated(engine, w["DOI"], now - timedelta(hours=hours))
    assert works_read(match_index()) == 3
    mark = SqliteIndex(index_path()).meta(MARK)
    assert mark is not None and datetime.fromisoformat(mark) == now - timedelta(hours=1)

    persist(MORE)
    # the two new works, and perhaps the one written within the overlap before the mark
    assert 2 <= works_read(match_index()) <= 3
    index = SqliteIndex(index_path())
    try:
        moved = index.meta(MARK)
        assert index.size() == 5
    finally:
        index.close()
    assert moved is not None and datetime.fromisoformat(moved) > now - timedelta(minutes=1)
    # nothing written since: at most the overlap is read again, and nothing changes
    before = snapshot(index_path())
    assert works_read(match_index()) <= 2
    assert snapshot(index_path()) == before


def test_a_work_updated_in_the_table_is_updated_in_the_index(engine: Engine) -> None:
    persist(WORKS)
    match_index()
    old_title = "Glacier retreat in the southern Andes since the Little Ice Age"
    query = {"title": old_title, "authors": [{"surname": "Masiokas"}], "date": "2009"}
    assert match_one(query)["doi"] == "10.5555/a"

    new_title = "Volcanic ash deposition on Patagonian icefields"
    persist([work("10.5555/a", new_title, "Masiokas", 2009, volume="28", page="242-253")])
    match_index()
    index = SqliteIndex(index_path())
    try:
        assert index.size() == 3
        assert [r.doi for r in index.by_words(["glacier", "andes", "retreat"], 10)] == []
        assert [r.doi for r in index.by_words(["volcanic", "patagonian"], 10)] == ["10.5555/a"]
    finally:
        index.close()
    old = match_one(query)
    assert old["doi"] is None and old["status"] not in ("exact", "strong"), old
    new = match_one({**query, "title": new_title})
    assert new["doi"] == "10.5555/a", new


def test_rebuild_reads_the_whole_table_again(engine: Engine) -> None:
    """Incremental runs add and replace; a work deleted from the table leaves the
    index only with ``--rebuild``."""
    persist([*WORKS, *MORE])
    match_index()
    with engine.begin() as conn:
        conn.execute(delete(crossref).where(crossref.c.doi == "10.5555/b"))
    match_index()
    assert SqliteIndex(index_path()).size() == 5
    stderr = match_index("--rebuild")
    assert works_read(stderr) == 4 and "4 in the index" in stderr
    index = SqliteIndex(index_path())
    try:
        assert index.by_doi("10.5555/b") is None and index.size() == 4
        assert index.by_words(["cyanobacteria"], 10) == []
    finally:
        index.close()
    rebuilt = snapshot(index_path())
    # a fresh build from nothing holds the same
    remove_index()
    match_index()
    assert snapshot(index_path()) == rebuilt


def test_match_biblio_brings_an_older_index_current_first(engine: Engine) -> None:
    persist(WORKS)
    match_index()
    persist(MORE)  # the index is now older than the table
    out = match_one({"id": 1, "title": "Seasonal dynamics of soil respiration in boreal "
                     "forests", "authors": [{"surname": "Kolari"}], "date": "2009"})
    assert out["doi"] == "10.5555/d" and out["status"] in ("exact", "strong"), out
    assert SqliteIndex(index_path()).size() == 5


def test_match_biblio_without_an_index_builds_it(engine: Engine) -> None:
    persist(WORKS)
    remove_index()
    out = match_one({"title": "Nitrogen fixation by cyanobacteria in oligotrophic lakes",
                     "authors": [{"surname": "Howarth"}], "date": "1988"})
    assert out["doi"] == "10.5555/b", out
    assert SqliteIndex(index_path()).size() == 3


def test_with_match_feed_off_persist_crossref_leaves_the_index_to_match_index(
        engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bulk load without the feed: no index until `match index`, which then has all."""
    remove_index()
    monkeypatch.setenv("SANDCRAWLER_MATCH_FEED", "false")
    persist(WORKS)
    assert not index_path().exists()
    match_index()
    assert SqliteIndex(index_path()).size() == 3


def test_persist_crossref_adds_its_works_to_the_index(engine: Engine,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Without `match index`, and with the matcher's own update turned off."""
    persist(WORKS)
    assert SqliteIndex(index_path()).size() == 3
    monkeypatch.setenv("SANDCRAWLER_MATCH_UPDATE", "false")
    persist(MORE)
    out = match_one({"title": "Bayesian inference of phylogenetic trees under relaxed clocks",
                     "authors": [{"surname": "Drummond"}], "date": "2006"})
    assert out["doi"] == "10.5555/e", out


def test_an_empty_table_gives_empty_catalog(engine: Engine) -> None:
    stderr = match_index()
    assert works_read(stderr) == 0 and "0 in the index" in stderr
    out = match_one({"id": 2, "title": "Anything at all about lakes", "date": "2001"})
    assert (out["id"], out["status"], out["doi"]) == (2, "empty-catalog", None)


# --- killed, concurrent ------------------------------------------------------------------------

_WORDS = [
    "glacier", "ocean", "protein", "lattice", "nitrogen", "soil", "forest", "river",
    "membrane", "kinase", "enzyme", "neuron", "cortex", "galaxy", "plasma", "quantum",
    "polymer", "catalyst", "isotope", "aerosol", "sediment", "coral", "estuary", "basin",
    "tectonic", "magma", "crystal", "alloy", "fibre", "ligand", "receptor", "antibody",
    "vaccine", "malaria", "cholera", "genome", "allele", "mutation", "hormone", "insulin",
    "cardiac", "renal", "hepatic", "pulmonary", "thermal", "acoustic", "optical",
    "seismic", "lunar", "solar", "wind", "turbine", "battery", "electrode", "anode",
    "cathode", "graphene", "silicon", "laser", "photon", "boson", "lepton",
]


def synthetic(n: int, seed: int = 25) -> Iterator[dict[str, Any]]:
    """``crossref`` rows of ``n`` made-up works (distinct titles, volumes, pages),
    written a second apart (so ``sync.OVERLAP`` re-reads 600 of them, not all),
    ten at a time at the same instant (a page may end inside a tie)."""
    rnd = random.Random(seed)
    base = datetime(2024, 5, 1, tzinfo=UTC)
    for i in range(n):
        title = " ".join(rnd.choice(_WORDS) for _ in range(7)) + f" w{i}"
        doi = f"10.5555/syn.{i}"
        record = work(doi, title, rnd.choice(["Ito", "Okafor", "Berg", "Silva"]),
                      rnd.randint(1950, 2024), volume=str(rnd.randint(1, 300)),
                      page=str(rnd.randint(1, 5000)))
        if i % 7 == 0:
            record["pmid"] = str(10_000_000 + i)
        yield {"doi": doi, "indexed": base, "record": record,
               "updated": base + timedelta(seconds=i // 10)}


def fill(engine: Engine, n: int) -> None:
    rows = list(synthetic(n))
    with engine.begin() as conn:
        for start in range(0, n, 5000):
            conn.execute(crossref.insert(), rows[start:start + 5000])


def start_match_index(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "sandcrawler", "match", "index", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, **(env or {})})


def clean_build(tmp_path: Path) -> dict[str, list[tuple[Any, ...]]]:
    clean = tmp_path / "clean.sqlite3"
    result = run_cli(["match", "index"], env={"SANDCRAWLER_MATCH_INDEX": str(clean)})
    assert result.returncode == 0, result.stderr
    return snapshot(clean)


def _indexed(path: Path) -> int:
    if not path.exists():
        return 0
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1)
        try:
            return int(conn.execute("SELECT count(*) FROM works").fetchone()[0])
        finally:
            conn.close()
    except sqlite3.OperationalError:  # not created yet
        return 0


def test_a_build_reads_each_row_once(engine: Engine) -> None:
    """Pages of ``sync.BATCH`` rows end inside a tie of ``updated`` (ten rows
    share each instant): the next page starts after the last (updated, doi) read,
    neither skipping nor reading again the rest of the tie."""
    fill(engine, 12_000)
    stderr = match_index()
    assert works_read(stderr) == 12_000 and "12,000 in the index" in stderr


@pytest.mark.slow  # seconds: real processes, killed or side by side
def test_a_run_killed_midway_resumes_to_a_clean_build(engine: Engine, tmp_path: Path) -> None:
    n = 40_000
    fill(engine, n)
    path = index_path()
    proc = start_match_index()
    deadline = time.monotonic() + 120
    while _indexed(path) == 0 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    # the run reads works in a second process (n is past PARALLEL_FROM)
    tree = descendants(proc.pid)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the run ended before it could be killed"
    at_kill = _indexed(path)
    assert 0 < at_kill < n, at_kill
    assert tree, "the run had no reader process to leave behind"
    # nothing of the killed run lives on (its reader once did, for good)
    wait_until(lambda: not any(alive(p) for p in tree), 30, "the killed run's processes to end")

    result = run_cli(["match", "index"])
    assert result.returncode == 0, result.stderr
    # the rerun resumes: it reads again only the overlap before the killed run's
    # mark (10 minutes: 6,000 rows written ten a second)
    assert works_read(result.stderr.decode()) <= n - at_kill + 6000
    assert snapshot(path) == clean_build(tmp_path)


@pytest.mark.slow  # seconds: real processes, killed or side by side
def test_two_match_index_at_once(engine: Engine, tmp_path: Path) -> None:
    n = 20_000
    fill(engine, n)
    procs = [start_match_index() for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (_, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err.decode()
        assert f"{n:,} in the index" in err.decode()
    assert snapshot(index_path()) == clean_build(tmp_path)


# --- an index that is not one ------------------------------------------------------------------

def _one_line_error(result: subprocess.CompletedProcess[bytes]) -> str:
    err = result.stderr.decode()
    assert result.returncode == 1, err
    assert "Traceback" not in err
    [line] = [ln for ln in err.splitlines() if ln.strip()]
    assert line.startswith("Error: ")
    return line


@pytest.mark.parametrize("command", [["match", "index"], ["match", "biblio", "-"]])
def test_a_corrupt_index_file_is_a_clear_error(engine: Engine, command: list[str]) -> None:
    persist(WORKS)
    remove_index()
    path = index_path()
    garbage = b"this is not an SQLite database\n" * 100
    path.write_bytes(garbage)
    result = run_cli(command, input=b'{"title": "x"}\n')
    line = _one_line_error(result)
    assert str(path) in line
    assert path.read_bytes() == garbage


def test_a_foreign_sqlite_file_is_refused_and_left_alone(engine: Engine) -> None:
    """Someone else's database at the index's path is neither read nor written."""
    persist(WORKS)
    remove_index()
    path = index_path()
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE accounts (id INTEGER PRIMARY KEY, name TEXT)")
    conn.execute("INSERT INTO accounts (name) VALUES ('ada')")
    conn.commit()
    conn.close()
    result = run_cli(["match", "index"])
    line = _one_line_error(result)
    assert str(path) in line
    conn = sqlite3.connect(path)
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    finally:
        conn.close()
    assert tables == {"accounts"}


def test_an_index_of_another_schema_version_says_rebuild_and_rebuild_works(
        engine: Engine) -> None:
    persist(WORKS)
    match_index()
    conn = sqlite3.connect(index_path())
    conn.execute("UPDATE meta SET value = '0' WHERE key = 'schema'")
    conn.commit()
    conn.close()
    line = _one_line_error(run_cli(["match", "index"]))
    assert "--rebuild" in line
    result = run_cli(["match", "index", "--rebuild"])
    assert result.returncode == 0, result.stderr.decode()
    assert SqliteIndex(index_path()).size() == 3


# --- the CLI contract of match biblio ---------------------------------------------------------

CONTRACT_INPUT = [
    orjson.dumps({"id": "a", "title": "Glacier retreat in the southern Andes since the Little "
                  "Ice Age", "authors": [{"surname": "Masiokas"}], "date": "2009"}),
    b"{not json",
    orjson.dumps({"id": 7, "title": "A lattice Boltzmann model for multiphase flow in porous "
                  "media", "authors": [{"surname": "Shan"}], "date": "1993",
                  "doi": "10.5555/C"}),
    orjson.dumps([1, 2]),
    orjson.dumps({"id": None, "title": "Introduction"}),
    orjson.dumps({"id": "w", "title": {"not": "a string"}}),
    orjson.dumps({"id": {"k": 1}, "unstructured": "Howarth RW. Nitrogen fixation by "
                  "cyanobacteria in oligo-\ntrophic lakes. Limnol Oceanogr 1988;33:669-87."}),
    orjson.dumps({"id": "z", "title": "Ocean acidification and the decline of pteropods",
                  "date": "2015", "authors": [{"surname": "Bednarsek"}]}),
    b"\xff\xfe not utf-8",
]


def _contract(result: subprocess.CompletedProcess[bytes]) -> list[dict[str, Any]]:
    assert result.returncode == 0, result.stderr.decode()
    return [orjson.loads(line) for line in result.stdout.splitlines()]


@pytest.mark.slow  # seconds: real processes, killed or side by side
def test_match_biblio_cli_contract(engine: Engine) -> None:
    persist([*WORKS, *MORE])
    match_index()
    stdin = b"\n".join(CONTRACT_INPUT) + b"\n"
    result = run_cli(["match", "biblio", "-", "--progress"], input=stdin)
    out = _contract(result)
    assert len(out) == len(CONTRACT_INPUT)
    for line in out:
        assert {"id", "status", "doi", "score", "reasons"} <= set(line), line
        assert line["doi"] is None or line["doi"] == line["doi"].lower()
    got = [(o["id"], o["status"], o["doi"]) for o in out]
    assert got[0] == ("a", got[0][1], "10.5555/a") and got[0][1] in ("exact", "strong")
    assert got[1][1:] == ("bad-json", None)
    assert got[2][0] == 7 and got[2][2] == "10.5555/c" and "doi:verified" in out[2]["reasons"]
    assert got[3][1:] == ("bad-biblio", None)
    assert got[4] == (None, "too-little", None)
    assert got[5] == ("w", "bad-biblio", None)
    assert got[6][0] == {"k": 1} and got[6][2] == "10.5555/b"
    assert got[7][0] == "z" and got[7][1] in ("no-match", "weak") and got[7][2] is None
    assert got[8][1:] == ("bad-utf8", None)
    err = result.stderr.decode()
    assert "match biblio" in err  # progress and the summary, on stderr
    assert "Traceback" not in err

    again = run_cli(["match", "biblio", "-", "-j", "2", "--batch-size", "2"], input=stdin)
    assert _contract(again) == out


@pytest.mark.slow  # seconds: real processes, killed or side by side
def test_match_biblio_reads_a_file_and_keeps_order_with_jobs(engine: Engine,
                                                              tmp_path: Path) -> None:
    persist([*WORKS, *MORE])
    queries = []
    for i in range(300):
        w = [*WORKS, *MORE][i % 5]
        queries.append({"id": i, "title": w["title"][0],
                        "authors": [{"surname": w["author"][0]["family"]}],
                        "date": str(w["issued"]["date-parts"][0][0])})
    path = tmp_path / "biblios.jsonl"
    path.write_bytes(lines(queries))
    one = _contract(run_cli(["match", "biblio", str(path)]))
    two = _contract(run_cli(["match", "biblio", str(path), "-j", "2", "--batch-size", "7"]))
    assert one == two
    assert [o["id"] for o in one] == list(range(300))
    assert [o["doi"] for o in one] == [[*WORKS, *MORE][i % 5]["DOI"] for i in range(300)]


# --- dumps as Crossref ships them: tar archives ------------------------------------------------


def _tar(path: Path, members: dict[str, bytes], mode: str) -> Path:
    with tarfile.open(path, mode) as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def _numbered(n: int) -> list[Work]:
    return [work(f"10.5555/t{i}", f"Tidal mixing over rough topography, part {i}", "Munk",
                 1998, volume="45", page=f"{i}") for i in range(n)]


def test_dump_in_a_tar_as_crossref_ships_it(tmp_path: Path) -> None:
    """The public data file (a tar of *.json.gz, each {"items": [...]}, a README
    beside them) and a Plus snapshot (all.json.tar.gz of *.json), read in place."""
    works = _numbered(12)
    public = _tar(tmp_path / "April 2025 Public Data File from Crossref.tar", {
        "April 2025 Public Data File from Crossref/0.json.gz":
            gzip.compress(orjson.dumps({"items": works[:5]})),
        "April 2025 Public Data File from Crossref/README.md": b"not a dump file\n",
        "April 2025 Public Data File from Crossref/1.json.gz":
            gzip.compress(orjson.dumps({"items": works[5:8]})),
    }, "w")
    assert works_read(match_index("--dump", str(public))) == 8
    assert works_read(match_index("--dump", str(public))) == 0  # every member marked done
    snapshot = _tar(tmp_path / "all.json.tar.gz", {
        "0.json": orjson.dumps({"items": works[8:]}),
        "1.json": orjson.dumps({"items": works[:2]}),  # already in: loaded again, no change
    }, "w:gz")
    stderr = match_index("--dump", str(snapshot))
    assert works_read(stderr) == 6 and " 12 in the index" in stderr, stderr


def test_a_dump_cut_short_loads_what_it_holds_then_says_so(tmp_path: Path) -> None:
    works = _numbered(3000)
    members = {f"{i}.json": orjson.dumps({"items": works[i * 1000:(i + 1) * 1000]})
               for i in range(3)}
    whole = _tar(tmp_path / "whole.tar.gz", members, "w:gz").read_bytes()
    cut = tmp_path / "all.json.tar.gz"
    cut.write_bytes(whole[:len(whole) * 2 // 3])  # a download that stopped
    result = invoke(["match", "index", "--dump", str(cut)])
    assert result.exit_code == 1
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("Error: the dump") and "damaged or cut short" in line, line
    assert "Traceback" not in result.stderr
    # the whole copy, under the same name: the members loaded before are passed over
    cut.write_bytes(whole)
    stderr = match_index("--dump", str(cut))
    assert 0 < works_read(stderr) < 3000 and " 3,000 in the index" in stderr, stderr


def test_a_dump_bomb_is_refused_not_read_into_memory(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A gzip file of one endless line after a good one: the good works are
    loaded, the bomb ends the load with one line. (The cap is 256 MiB; 1 MiB
    here, so that the bomb is small.)"""
    monkeypatch.setattr(dump, "MAX_TEXT", 2**20)
    bomb = tmp_path / "dump" / "1.json.gz"
    bomb.parent.mkdir()
    bomb.write_bytes(gzip.compress(b"0" * 2**23, compresslevel=9))  # 8 MiB in 8 KiB
    (tmp_path / "dump" / "0.json").write_bytes(lines(_numbered(5)))
    result = invoke(["match", "index", "--dump", str(tmp_path / "dump")])
    assert result.exit_code == 1
    [line] = result.stderr.strip().splitlines()
    assert "1.json.gz cannot be read to its end" in line and "over 1 MiB" in line, line
    # the good file is in, and marked done (the same mark as the file alone)
    stderr = match_index("--dump", str(tmp_path / "dump" / "0.json"))
    assert works_read(stderr) == 0 and " 5 in the index" in stderr, stderr


def test_the_count_of_works_is_kept_with_them(tmp_path: Path) -> None:
    """``size()`` reads the count every write keeps (count(*) reads the whole
    table); a replaced work is not counted twice, ``clear`` starts from 0, and an
    index written before the count was kept is counted."""
    from sandcrawler.match.records import from_crossref

    path = tmp_path / "index.sqlite3"
    index = SqliteIndex(path, readonly=False)

    def upsert(*works: dict[str, Any]) -> None:
        with index.transaction():
            index.upsert([from_crossref(w["DOI"], w) for w in works])

    def counted() -> int:
        return int(index.conn.execute("SELECT count(*) FROM works").fetchone()[0])

    try:
        assert index.size() == 0
        upsert(work("10.5555/1", "Glacier retreat"), work("10.5555/2", "Ocean heat"))
        upsert(work("10.5555/2", "Ocean heat content"), work("10.5555/3", "Lake ice"))
        assert index.size() == counted() == 3
        # a write rolled back counts nothing
        with pytest.raises(RuntimeError), index.transaction():
            index.upsert([from_crossref("10.5555/4", work("10.5555/4", "Sea ice"))])
            raise RuntimeError
        assert index.size() == counted() == 3
        index.conn.execute("DELETE FROM meta WHERE key = 'works'")  # an older index
        assert index.size() == 3
        index.clear()
        upsert(work("10.5555/5", "Permafrost"))
        assert index.size() == counted() == 1
    finally:
        index.close()
    assert SqliteIndex(path).size() == 1
