"""`sandcrawler worker match-refs` as a real process with ``match.engine = solr``:
grobid_refs rows produced to its topic on a real Kafka broker are resolved against
the match index on the test kit's real SolrCloud cluster (2 nodes, 2 shards of 2
replicas) into the citation rows the embedded index gives for the same rows
(``match refs``; test_match_workers.py is the same worker on the embedded index).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from sqlalchemy import Engine, delete

from sandcrawler.db.schema import citation
from sandcrawler_testkit.solr_cluster import SolrCluster
from tests.helpers.cli import invoke
from tests.helpers.kafka import KafkaSpace, Workers
from tests.match.test_match_index import persist
from tests.match.test_match_refs import DOC_UUID, MATCHED, catalog, refs_rows, table
from tests.match.test_match_solr_load import SolrMatch, alias_of_its_own, match_index
from tests.match.test_match_workers import run_until_resolved

# seconds per test: a worker process, a Kafka consumer group, a Solr collection
pytestmark = pytest.mark.slow


@pytest.fixture
def solr_match(solr: SolrCluster, request: pytest.FixtureRequest,
               monkeypatch: pytest.MonkeyPatch) -> Iterator[SolrMatch]:
    """match.engine = solr in the environment (the worker inherits it), on an alias
    of this test's own on the session's cluster."""
    with alias_of_its_own(solr, request, monkeypatch) as sm:
        yield sm


def citing_works(engine: Engine) -> set[str]:
    return {c for c, *_ in table(engine)}


def test_worker_on_solr_writes_the_rows_the_embedded_index_gives(
        engine: Engine, tmp_path: Path, kafka: KafkaSpace, solr_match: SolrMatch,
        monkeypatch: pytest.MonkeyPatch) -> None:
    works = catalog(60)
    persist(works)
    stderr = match_index()  # the catalog loaded into the alias on Solr
    assert "60 in the index, " in stderr and f"solr {solr_match.alias}" in stderr, stderr
    lines, expected = refs_rows(works, citing=12)
    bad = [b"not json", orjson.dumps({"source": "pubmed", "source_id": "1", "refs_json": []})]
    topic, group = kafka.topic("grobid-refs"), kafka.group("match-refs")
    workers = Workers(tmp_path, kafka.settings_env, "match-refs")
    try:
        want = {c for c, _ in expected}
        w = run_until_resolved(workers, kafka, topic, group, [*lines, *bad],
                               lambda: citing_works(engine) == want)
    finally:
        workers.kill_all()
    on_solr = table(engine)
    assert [(c, i) for c, i, *_ in on_solr] == sorted(expected)
    for c, i, _key, doi, status, *_ in on_solr:
        if expected[(c, i)] is not None:
            assert (doi, status) == (expected[(c, i)], "exact"), (c, i)
        else:
            assert doi is None and status not in MATCHED, (c, i, status)
    assert f"uuid:{DOC_UUID}" in want
    assert ": bad-json: " in w.stderr
    assert "bad-row: grobid_refs source 'pubmed' names no citing work" in w.stderr

    # the same rows resolved on the embedded index: the same table, row for row
    with engine.begin() as conn:
        conn.execute(delete(citation))
    for name in ("SANDCRAWLER_MATCH_ENGINE", "SANDCRAWLER_MATCH_ENGINE_URLS",
                 "SANDCRAWLER_MATCH_ENGINE_COLLECTION"):
        monkeypatch.delenv(name)
    refs = tmp_path / "refs.jsonl"
    refs.write_bytes(b"".join(line + b"\n" for line in lines))
    for args in (["match", "index"], ["persist", "grobid-refs", str(refs)],
                 ["match", "refs", "--silent"]):
        result = invoke(args)
        assert result.exit_code == 0, (args, result.stderr)
    assert table(engine) == on_solr
