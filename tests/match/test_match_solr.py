"""The matcher on Apache Solr gives the answers it gives on the embedded index
(issue 28), on the test kit's real SolrCloud cluster (2 nodes; collections of 2
shards of 2 replicas).

The hard cases of issue 25 run on both engines in test_match_hard_cases.py (its
``catalog`` fixture is parametrised by tests/helpers/match_engines.py). Here: what only
an engine has (a DOI read by real-time get before any commit, the alias a reader
follows through a rebuild, no index behind the alias), and ``sandcrawler match
biblio`` as a real process on each engine, on the same input and the same
catalog, giving the same lines.

The catalog and queries are the matching evaluation's (bench/data/match/, real
Crossref works; bench/data/match/SOURCES.md), the gold stripped.
"""

from __future__ import annotations

import gzip
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from sandcrawler.config import MatchSettings
from sandcrawler.core.errors import ConfigError
from sandcrawler.match.dump import load_dump
from sandcrawler.match.matcher import Matcher
from sandcrawler.match.records import from_crossref
from sandcrawler.match.solr import SolrAdmin, open_reader, open_writer
from sandcrawler.records.statuses import MatchStatus, Status
from sandcrawler_testkit.solr_cluster import SolrCluster
from tests.helpers.cli import invoke, run_cli
from tests.helpers.match_engines import solr_settings, write_dump
from tests.helpers.paths import REPO

DATA = REPO / "bench" / "data" / "match"
GOLD = ("expected_doi", "case", "noise")

Work = dict[str, Any]


def read_gz(path: Path, n: int | None = None) -> list[dict[str, Any]]:
    with gzip.open(path, "rb") as f:
        rows = [orjson.loads(line) for line in f if line.strip()]
    return rows[:n] if n is not None else rows


def work(doi: str, title: str, surname: str, year: int) -> Work:
    return {"DOI": doi, "type": "journal-article", "title": [title],
            "author": [{"given": "A.", "family": surname, "sequence": "first"}],
            "issued": {"date-parts": [[year]]}, "container-title": ["Journal of Examples"],
            "volume": "7", "page": "101-110"}


def biblio(w: Work) -> dict[str, Any]:
    return {"title": w["title"][0], "authors": [{"surname": w["author"][0]["family"]}],
            "date": str(w["issued"]["date-parts"][0][0])}


OLD = [work("10.5555/old.1", "Glacier retreat in the southern Andes since the Little Ice Age",
            "Masiokas", 2009),
       work("10.5555/old.2", "Nitrogen fixation by cyanobacteria in oligotrophic lakes",
            "Howarth", 1988)]
NEW = [work("10.5555/new.1", "A lattice Boltzmann model for multiphase flow in porous media",
            "Shan", 1993),
       work("10.5555/new.2", "Seasonal dynamics of soil respiration in boreal forests",
            "Kolari", 2009)]


def load(match: MatchSettings, works: list[Work], path: Path, *,
         rebuild: bool) -> Callable[[], None]:
    """``works`` loaded as ``match index --engine --dump`` loads them; the
    ``finish`` that makes them the index, not yet called."""
    writer, finish = open_writer(match, rebuild=rebuild)
    try:
        load_dump(writer, write_dump(path, works), rebuild=True)
    finally:
        writer.close()
    return finish


def test_lookups_direct_or_through_a_node_and_works_loaded_while_reading(
        solr: SolrCluster, tmp_path: Path) -> None:
    """Lookups go to a replica of each shard and are merged here (the default),
    or through a node (``direct_shards: "false"``, behind a proxy): the same
    works either way, for every kind of lookup. Then a work loaded into the
    alias's collection while a reader reads it (as persist crossref feeds it):

    * its DOI is found at once, by real-time get from the update log, before
      any commit opens a searcher on it;
    * its title is found once committed, by the same reader, which had looked
      for it before: the reader remembers works per title word, but not a word
      no title had (a remembered 0 would skip the word: a false no-match)."""
    match = solr_settings(solr, "t-solr-read")
    works = [*OLD, NEW[1], work("10.5555/same.loc", "Another work at volume seven page one "
                                "hundred and one", "Shan", 1993)]
    load(match, works, tmp_path / "works.jsonl", rebuild=True)()
    direct = open_reader(match)
    through = open_reader(solr_settings(solr, "t-solr-read",
                                        engine_options={"direct_shards": "false"}))
    writer, finish = open_writer(match)
    try:
        assert direct.client.direct_shards and not through.client.direct_shards
        at_7_101 = ["10.5555/new.2", "10.5555/old.1", "10.5555/old.2", "10.5555/same.loc"]
        for index in (direct, through):
            assert [sorted(r.doi for r in found) for found in index.by_locators(
                [("7", "101"), ("8", "1"), ("7", "101")], 10)] == [at_7_101, [], at_7_101]
            assert len(index.by_locators([("7", "101")], 2)[0]) == 2
            assert index.document_frequency(["andes", "in", "nowhereword"]) == \
                {"andes": 1, "in": 3, "nowhereword": 0}
        for words in (["glacier", "andes"], ["volume", "seven", "lakes"]):
            assert [r.doi for r in direct.by_words(words, 10)] == \
                [r.doi for r in through.by_words(words, 10)] != []
        matcher = Matcher(direct)
        [before] = matcher.match_many([biblio(NEW[0])])  # its words asked with expect()
        assert before.status is MatchStatus.NO_MATCH

        record = from_crossref("10.5555/new.1", NEW[0])
        with writer.transaction():
            assert writer.upsert([record]) == 1
        writer.flush()  # the update applied (it goes out on the writer's sender thread)
        # no finish(): nothing has committed it (the batch's commitWithin is 10 s)
        assert direct.by_doi("10.5555/new.1") == record
        assert direct.by_doi("10.5555/new.9") is None
        finish()
        [after] = matcher.match_many([biblio(NEW[0])])
        assert (after.status, after.doi) == (MatchStatus.EXACT, "10.5555/new.1")
    finally:
        direct.close()
        through.close()
        writer.close()


def test_a_reader_on_the_alias_sees_a_rebuild_once_it_is_finished(
        solr: SolrCluster, tmp_path: Path) -> None:
    match = solr_settings(solr, "t-solr-alias")
    load(match, OLD, tmp_path / "old.jsonl", rebuild=True)()
    admin = SolrAdmin(open_reader(match).client, match.engine_collection, shards=2,
                      replicas=2)
    first = admin.target()
    assert first is not None and first.startswith("t-solr-alias-")
    reader = open_reader(match)
    matcher = Matcher(reader)
    try:
        def answers() -> list[tuple[Status, str | None]]:
            return [(r.status, r.doi) for r in
                    matcher.match_many([biblio(w) for w in [*OLD, *NEW]])]

        was = [(MatchStatus.EXACT, "10.5555/old.1"), (MatchStatus.EXACT, "10.5555/old.2"),
               (MatchStatus.NO_MATCH, None), (MatchStatus.NO_MATCH, None)]
        assert answers() == was
        # a rebuild loads a new collection: the reader goes on with the old one
        finish = load(match, NEW, tmp_path / "new.jsonl", rebuild=True)
        second = [c for c in admin.collections() if c.startswith("t-solr-alias-")
                  and c != first]
        assert len(second) == 1 and admin.target() == first
        assert answers() == was
        finish()
        # the alias moved: the same reader now reads the new works, the old
        # collection is gone
        assert admin.target() == second[0]
        assert first not in admin.collections()
        assert answers() == [(MatchStatus.NO_MATCH, None), (MatchStatus.NO_MATCH, None),
                             (MatchStatus.EXACT, "10.5555/new.1"),
                             (MatchStatus.EXACT, "10.5555/new.2")]
    finally:
        reader.close()
        admin.client.close()


def test_no_index_behind_the_alias_says_build_it(solr: SolrCluster) -> None:
    with pytest.raises(ConfigError, match="match index --engine"):
        open_reader(solr_settings(solr, "t-solr-never-built"))


def test_an_empty_index_on_solr_is_an_empty_catalog(solr: SolrCluster, tmp_path: Path) -> None:
    match = solr_settings(solr, "t-solr-empty")
    load(match, [], tmp_path / "none.jsonl", rebuild=False)()
    reader = open_reader(match)
    try:
        assert reader.size() == 0
        [r] = Matcher(reader).match_many([{"id": 3, **biblio(OLD[0]), "doi": "10.5555/old.1"}])
        assert (r.status, r.doi, r.id) == (MatchStatus.EMPTY_CATALOG, None, 3)
    finally:
        reader.close()


# --- `sandcrawler match biblio` as a process, on each engine ---------------------------------


def engine_env(solr: SolrCluster, alias: str) -> dict[str, str]:
    return {"SANDCRAWLER_MATCH_ENGINE": "solr",
            "SANDCRAWLER_MATCH_ENGINE_URLS": orjson.dumps(solr.urls).decode(),
            "SANDCRAWLER_MATCH_ENGINE_COLLECTION": alias,
            "SANDCRAWLER_MATCH_ENGINE_REPLICAS": "2"}


def match_biblio(path: Path, env: dict[str, str], *args: str) -> tuple[list[bytes], str]:
    done = run_cli(["match", "biblio", str(path), *args], env=env, timeout=600)
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout.splitlines(), done.stderr.decode()


def test_match_biblio_on_solr_writes_the_embedded_index_lines(
        solr: SolrCluster, tmp_path: Path) -> None:
    env = engine_env(solr, "t-solr-cli")
    queries = [{k: v for k, v in q.items() if k not in GOLD}
               for q in [*read_gz(DATA / "headers" / "queries.jsonl.gz", 300),
                         *read_gz(DATA / "refs" / "queries.jsonl.gz", 100)]]
    lines = [orjson.dumps(q) for q in queries] + [b"{not json", b"[1, 2]"]
    path = tmp_path / "queries.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")

    # no index on the engine yet: it says how to make one
    done = run_cli(["match", "biblio", str(path)], env=env)
    assert (done.returncode, done.stdout) == (1, b"")
    assert done.stderr.decode() == ("Error: Solr has no match index 't-solr-cli': build it "
                                    "with `sandcrawler match index --engine`\n")
    done = run_cli(["match", "index", "--engine"], env=env)
    assert done.returncode == 0, done.stderr.decode()
    assert re.fullmatch(r"match index: 0 works read \(0/s\), 0 in the index, [\d.]+s; "
                        r"solr t-solr-cli\n", done.stderr.decode())
    # nothing in the crossref table yet: every line empty-catalog, on both
    embedded, said = match_biblio(path, {})
    on_solr, said_solr = match_biblio(path, env)
    assert on_solr == embedded
    assert Counter(orjson.loads(x)["status"] for x in on_solr) == {
        "empty-catalog": len(queries), "bad-json": 1, "bad-biblio": 1}
    assert "the catalog is empty" in said and "the catalog is empty" in said_solr

    catalog = tmp_path / "catalog.jsonl"
    catalog.write_bytes(b"".join(orjson.dumps(w) + b"\n"
                                 for w in read_gz(DATA / "headers" / "catalog.jsonl.gz")))
    assert invoke(["persist", "crossref", str(catalog)]).exit_code == 0
    done = run_cli(["match", "index", "--engine", "--rebuild"], env=env, timeout=600)
    assert done.returncode == 0, done.stderr.decode()
    assert re.fullmatch(r"match index: 2,047 works read \([\d,]+/s\), 2,047 in the index, "
                        r"[\d.]+s; solr t-solr-cli\n", done.stderr.decode())

    embedded, _ = match_biblio(path, {})
    # on the engine with -j 2 and the batch's lookups side by side: the same lines
    on_solr, _ = match_biblio(path, env, "-j", "2")
    assert len(embedded) == len(on_solr) == len(lines)
    differ = 0
    for ours, theirs in zip(embedded, on_solr, strict=True):
        if ours == theirs:
            continue
        # A no-match's score and reasons describe the best of the works it
        # rejected; which of several wrong works ranks first rests on details of
        # BM25 that differ (FTS5's idf and its rows' length, authors included;
        # Lucene's per shard): the answer is the same, its notes may not be.
        a, b = orjson.loads(ours), orjson.loads(theirs)
        assert a["status"] == b["status"] == "no-match", (a, b)
        assert (a["id"], a["doi"]) == (b["id"], b["doi"])
        differ += 1
    statuses = Counter(orjson.loads(x)["status"] for x in embedded)
    # the input exercises what retrieval decides: found, not found, in doubt
    assert statuses["exact"] > 100 and statuses["no-match"] > 20 and statuses["weak"] > 0 \
        and statuses["strong"] > 0, statuses
    assert differ < statuses["no-match"] // 4, (differ, statuses)
