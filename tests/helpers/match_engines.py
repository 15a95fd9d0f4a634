"""What the matching tests share to run on every engine of the match index
(``match.engine``, ``match/engines.py``): the embedded SQLite index, and Apache
Solr on the test kit's cluster (the ``solr`` fixture: 2 nodes, each collection
on 2 shards of 2 replicas).

``catalogs.index(works)`` loads Crossref works into a fresh index of the engine
the test runs on, the way ``match index --dump`` loads one: the engine's writer
(``open_writer``), ``load_dump`` with ``rebuild`` (the index emptied first), then
``finish()`` (on Solr, the commit that makes the works searchable); and opens the
engine's reader on it (on Solr, the alias). A test module parametrises its tests
over the engines by taking the fixtures with ``from tests.helpers.match_engines import
catalogs as catalogs, match_engine as match_engine``.

On Solr the n-th index a test builds is the alias ``t-<module>-<n>``, reused
from test to test (creating a collection takes seconds; emptying one does not:
a delete of everything drops Lucene's segments whole, so no word statistics
of an earlier test's works are left behind).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import orjson
import pytest

from sandcrawler.config import MatchSettings
from sandcrawler.core.imports import load_object
from sandcrawler.match.dump import load_dump
from sandcrawler.match.engines import ENGINES
from sandcrawler.match.index import CandidateIndex
from sandcrawler_testkit.solr_cluster import SolrCluster

Work = dict[str, Any]

#: the engines every parametrised matching test runs on
ENGINE_NAMES = ("embedded", "solr")


def solr_settings(cluster: SolrCluster, alias: str, **overrides: Any) -> MatchSettings:
    """``[match]`` of a Solr index behind ``alias`` on the test cluster: 2 shards
    of 2 replicas (either node holds every shard), short timeouts."""
    values: dict[str, Any] = {"engine": "solr", "engine_urls": cluster.urls,
                              "engine_collection": alias, "engine_shards": 2,
                              "engine_replicas": 2, "engine_timeout": 30.0}
    return MatchSettings(**{**values, **overrides})


def write_dump(path: Path, works: Sequence[Work]) -> Path:
    """Works as a dump's JSON lines (one work per line, as the API's ``message``)."""
    path.write_bytes(b"".join(orjson.dumps(w) + b"\n" for w in works))
    return path


class Catalogs:
    """Indexes of works on one engine, each built fresh; closes what it opened."""

    def __init__(self, engine: str, workdir: Path, cluster: SolrCluster | None,
                 prefix: str) -> None:
        self.engine = engine
        self.workdir = workdir
        self.cluster = cluster
        self.prefix = prefix
        self.opened: list[CandidateIndex] = []

    def settings(self, n: int) -> MatchSettings:
        if self.cluster is None:
            return MatchSettings(index=self.workdir / f"index{n}.sqlite3")
        return solr_settings(self.cluster, f"{self.prefix}-{n}")

    def index(self, works: Sequence[Work]) -> CandidateIndex:
        """A reader on a fresh index of exactly ``works``."""
        n = len(self.opened)
        match = self.settings(n)
        dump = write_dump(self.workdir / f"catalog{n}.jsonl", works)
        engine = ENGINES[self.engine]
        writer, finish = load_object(engine.writer)(match, rebuild=False)
        try:
            load_dump(writer, dump, rebuild=True)
            finish()
        finally:
            writer.close()
        index: CandidateIndex = load_object(engine.reader)(match)
        self.opened.append(index)
        return index

    def close(self) -> None:
        for index in self.opened:
            index.close()


@pytest.fixture(params=ENGINE_NAMES)
def match_engine(request: pytest.FixtureRequest) -> str:
    """The engine of the match index a test runs on (``solr``: on the shared
    cluster, skipped where it cannot run unless required)."""
    if request.param == "solr":
        request.getfixturevalue("solr")
    return str(request.param)


@pytest.fixture
def catalogs(match_engine: str, request: pytest.FixtureRequest,
             tmp_path: Path) -> Iterator[Catalogs]:
    cluster = request.getfixturevalue("solr") if match_engine == "solr" else None
    module = request.node.module.__name__.rpartition(".")[2].removeprefix("test_")
    built = Catalogs(match_engine, tmp_path, cluster, "t-" + module.replace("_", "-"))
    yield built
    built.close()
