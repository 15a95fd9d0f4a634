"""Matching on a real SolrCloud cluster (2 nodes, the index on 2 shards of 2
replicas) while it fails: every node down, every node stalled past the request
timeout, one node stalled at the default timeout, one node killed mid-run and
mid-load, the whole cluster restarted mid-run of ``match refs``.

What must hold (issue 28): an engine that is down or times out never gives a
``no-match``, which would be kept as a false answer; it is an outage, said once,
and the command ends with the infrastructure exit status (or the run backs off
and goes on). Runs that ride through a fault give the answers of a run without
it: nothing changes to no-match, nothing is lost or doubled.

These tests take the cluster down: they run on the fault tests' own cluster
(tests/helpers/solr.py), not on the session's, which other tests only read.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from sqlalchemy import Engine, delete

from sandcrawler.cli.exits import EXIT_INFRASTRUCTURE
from sandcrawler.config import MatchSettings
from sandcrawler.db.schema import citation
from sandcrawler_testkit.solr_cluster import SolrCluster, SolrUnavailable
from tests.helpers.cli import run_cli
from tests.helpers.solr import whole
from tests.helpers.waiting import wait_until
from tests.match.test_match_index import persist
from tests.match.test_match_refs import age_sources, as_ref, catalog, refs_rows, table
from tests.match.test_match_solr_load import (
    SolrMatch,
    alias_of_its_own,
    jsonl,
    made_up,
    match_index,
    works_read,
)

# seconds per test: real processes, timeouts and ZooKeeper's session waited out
pytestmark = pytest.mark.slow


@pytest.fixture
def solr_match(solr_fault_cluster: SolrCluster, request: pytest.FixtureRequest,
               monkeypatch: pytest.MonkeyPatch) -> Iterator[SolrMatch]:
    """As test_match_solr_load.py's, on the fault tests' cluster, every node running."""
    with alias_of_its_own(whole(solr_fault_cluster), request, monkeypatch) as sm:
        yield sm


def biblio_lines(works: list[dict[str, Any]]) -> bytes:
    """The works as references a parser gives, one JSON line each, ``id`` its position."""
    return jsonl([as_ref(w, str(i), i) for i, w in enumerate(works)])


def loaded(solr_match: SolrMatch, n: int, tmp_path: Path) -> list[dict[str, Any]]:
    """``n`` real Crossref works loaded into this test's alias (from a dump)."""
    works = catalog(n)
    dump = tmp_path / "catalog.jsonl"
    dump.write_bytes(jsonl(works))
    match_index("--dump", str(dump))
    return works


def results(stdout: bytes) -> list[tuple[str, str, str | None]]:
    return [(r["id"], r["status"], r["doi"]) for r in map(orjson.loads, stdout.splitlines())]


def error_lines(stderr: bytes) -> list[str]:
    return [ln for ln in stderr.decode().splitlines() if ln.startswith("Error:")]


def wait_all_active(solr: SolrCluster, solr_match: SolrMatch) -> None:
    """Every node up and every replica of this test's collections active."""
    whole(solr)
    deadline = time.monotonic() + 120
    for collection in solr_match.collections():
        while True:
            try:
                solr.wait_for_active(collection, timeout=max(1.0, deadline - time.monotonic()))
                break
            except SolrUnavailable:
                # the kit gives up on a 500 too: a node whose ZooKeeper session
                # expired answers so while it joins again
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)


@contextlib.contextmanager
def stalled(solr: SolrCluster, *nodes: int) -> Iterator[None]:
    """These nodes' JVMs (every node's if none is named) stopped (SIGSTOP,
    ``freeze_node``): connections are accepted by the kernel, nothing answers."""
    frozen = list(nodes or range(solr.nodes))
    for i in frozen:
        solr.freeze_node(i)
    try:
        yield
    finally:
        for i in frozen:
            solr.thaw_node(i)


def assert_outage(result: subprocess.CompletedProcess[bytes]) -> str:
    """Exit 3, the outage said in one ``Error:`` line naming Solr, no answer printed."""
    err = result.stderr.decode()
    assert result.returncode == EXIT_INFRASTRUCTURE, err
    assert "Traceback" not in err
    [line] = error_lines(result.stderr)
    assert "Solr" in line, line
    assert result.stdout == b"", result.stdout[:500]
    return line


# --- the whole engine down or stalled: an outage, never a no-match ---------------------------


def test_every_node_down_is_an_outage(engine: Engine, solr_match: SolrMatch,
                                      tmp_path: Path) -> None:
    works = loaded(solr_match, 20, tmp_path)
    biblios = biblio_lines(works)
    for i in range(solr_match.cluster.nodes):
        solr_match.cluster.kill_node(i)
    line = assert_outage(run_cli(["match", "biblio", "-"], input=biblios))
    assert "no node answered" in line


def test_every_node_stalled_past_the_timeout_is_an_outage(engine: Engine, solr_match: SolrMatch,
                                                          tmp_path: Path) -> None:
    works = loaded(solr_match, 20, tmp_path)
    biblios = biblio_lines(works)
    # the command's start (the schema, the index opened) takes its time before the
    # first request to Solr: the nodes are stalled only while it waits on them
    env = {"SANDCRAWLER_MATCH_ENGINE_TIMEOUT": "0.25"}
    with stalled(solr_match.cluster):
        result = run_cli(["match", "biblio", "-"], input=biblios, env=env, timeout=60)
    try:
        line = assert_outage(result)
        assert "TimeoutError" in line, line
    finally:
        wait_all_active(solr_match.cluster, solr_match)
    # and once they answer again (at the default timeout: a cold node is slower
    # than 0.25 s), the same command matches every one
    again = run_cli(["match", "biblio", "-"], input=biblios)
    assert again.returncode == 0, again.stderr.decode()
    assert [s for _, s, _ in results(again.stdout)] == ["exact"] * 20


def test_the_engine_going_down_mid_run_stops_it_with_no_wrong_answer(
        engine: Engine, solr_match: SolrMatch, tmp_path: Path) -> None:
    """Biblios fed one at a time: the first answered, then every node killed; the
    biblios after get no answer line at all, the run says why once and exits 3."""
    works = loaded(solr_match, 20, tmp_path)
    lines = biblio_lines(works).splitlines(keepends=True)
    proc = subprocess.Popen([sys.executable, "-m", "sandcrawler", "match", "biblio", "-",
                             "--batch-size", "1"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        answered = []
        for line in lines[:3]:
            proc.stdin.write(line)
            proc.stdin.flush()
            answered.append(proc.stdout.readline())
        for i in range(solr_match.cluster.nodes):
            solr_match.cluster.kill_node(i)
        out, err = proc.communicate(b"".join(lines[3:]), timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert [s for _, s, _ in results(b"".join(answered))] == ["exact"] * 3
    assert proc.returncode == EXIT_INFRASTRUCTURE, err.decode()
    assert out == b"", out[:500]  # no answer for any biblio after the outage
    [said] = error_lines(err)
    assert "Solr" in said and "no node answered" in said, said


# --- one node killed mid-run: the replica answers, or the run backs off -----------------------


def test_one_node_killed_mid_run_changes_no_answer(engine: Engine, solr_match: SolrMatch,
                                                   tmp_path: Path) -> None:
    works = loaded(solr_match, 300, tmp_path)
    biblios = biblio_lines(works)
    clean = run_cli(["match", "biblio", "-", "--batch-size", "10"], input=biblios)
    assert clean.returncode == 0, clean.stderr.decode()
    expected = results(clean.stdout)
    assert len(expected) == 300 and sum(s == "exact" for _, s, _ in expected) >= 290

    source = tmp_path / "biblios.jsonl"
    source.write_bytes(biblios)
    proc = subprocess.Popen([sys.executable, "-m", "sandcrawler", "match", "biblio",
                             str(source), "--batch-size", "10"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    try:
        first = proc.stdout.readline()  # the run is under way: a batch answered
        solr_match.cluster.kill_node(1)
        # read through the same buffered reader (communicate() reads the pipe
        # itself and would skip what readline buffered)
        rest = proc.stdout.read()
        err = proc.stderr.read() if proc.stderr is not None else b""
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    got = results(first + rest)
    assert proc.returncode == 0, err.decode()
    assert got == expected  # nothing lost, nothing changed (to no-match or otherwise)


def test_one_node_stalled_at_the_default_timeout_changes_no_answer(
        engine: Engine, solr_match: SolrMatch, tmp_path: Path) -> None:
    """One node's JVM stopped (SIGSTOP), not killed, for the whole of a run at the
    default ``match.engine_timeout``: its port takes connections and answers
    nothing. A request to it is given up after the timeout, the node is passed
    over (marked down) and each shard's other replica, on the other node,
    answers (docs/matching.md, "An outage is never a no-match"): the run's lines
    are those of a run without the stall, and it ends 0."""
    timeout = MatchSettings.model_fields["engine_timeout"].default
    assert timeout == 10.0  # the default the docs give (docs/matching.md)
    assert "SANDCRAWLER_MATCH_ENGINE_TIMEOUT" not in os.environ
    works = loaded(solr_match, 12, tmp_path)
    biblios = biblio_lines(works)
    # what a run without the stall answers (the stalled-past-the-timeout test's
    # second run shows it): each biblio its own work, exact
    expected = [(str(i), "exact", w["DOI"].lower()) for i, w in enumerate(works)]

    cluster = solr_match.cluster
    try:
        with stalled(cluster, 1):
            started = time.monotonic()
            result = run_cli(["match", "biblio", "-", "--batch-size", "4"], input=biblios,
                             timeout=300)
            took = time.monotonic() - started
    finally:
        thawed = time.monotonic()
        wait_all_active(cluster, solr_match)
    print(f"the run with node 1 stalled {took:.1f}s, its replicas active again after "
          f"{time.monotonic() - thawed:.1f}s")
    err = result.stderr.decode()
    assert result.returncode == 0, err
    assert "Traceback" not in err and error_lines(result.stderr) == [], err
    assert results(result.stdout) == expected  # nothing lost, nothing changed
    # the stalled node was asked and waited on for the timeout (requests spread
    # over the nodes): the run rode through the stall, it did not miss it
    assert took >= timeout, took


# --- the whole cluster restarted mid-run of match refs ------------------------------------------


def refs_loaded(solr_match: SolrMatch, tmp_path: Path, works: int, citing: int) -> int:
    """The catalog in the crossref table and loaded into Solr, and ``citing`` of
    its works' references (and a document's) in grobid_refs; how many citing."""
    catalog_works = catalog(works)
    lines, _ = refs_rows(catalog_works, citing=citing, per=6)
    persist(catalog_works)
    match_index()
    refs = tmp_path / "refs.jsonl"
    refs.write_bytes(b"".join(line + b"\n" for line in lines))
    result = run_cli(["persist", "grobid-refs", str(refs)])
    assert result.returncode == 0, result.stderr.decode()
    return len(lines)


def citing_done(engine: Engine) -> int:
    return len({c for c, *_ in table(engine)})


def test_a_cluster_restart_mid_match_refs_loses_and_doubles_nothing(
        engine: Engine, solr_match: SolrMatch, tmp_path: Path) -> None:
    count = refs_loaded(solr_match, tmp_path, works=120, citing=80)
    age_sources(engine)  # a work whose rows are written is current: a rerun passes it over
    clean = run_cli(["match", "refs", "--silent"])
    assert clean.returncode == 0, clean.stderr.decode()
    expected = table(engine)
    assert citing_done(engine) == count
    with engine.begin() as conn:
        conn.execute(delete(citation))

    run = subprocess.Popen([sys.executable, "-m", "sandcrawler", "match", "refs",
                            "--batch-size", "2"], stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while citing_done(engine) < 4:
            assert run.poll() is None, run.stderr.read().decode() if run.stderr else ""
            assert time.monotonic() < deadline
            time.sleep(0.05)
        solr_match.cluster.restart()
        _, err = run.communicate(timeout=300)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    done = citing_done(engine)
    if run.returncode == EXIT_INFRASTRUCTURE:
        # stopped by the restart: said once, and the works it finished are kept
        [line] = error_lines(err)
        assert "Solr" in line, err.decode()
        assert 4 <= done < count, err.decode()
        wait_all_active(solr_match.cluster, solr_match)
        rerun = run_cli(["match", "refs"])
        assert rerun.returncode == 0, rerun.stderr.decode()
        assert f"{done:,} works already current, passed over" in rerun.stderr.decode()
    else:
        # rode through it, backing off
        assert run.returncode == 0, err.decode()
    assert table(engine) == expected


# --- one node killed mid-load ---------------------------------------------------------------


def leader_node(solr_match: SolrMatch) -> int:
    """The index (in ``cluster.urls``) of a node that leads a shard of the alias's
    collection: killing it leaves that shard without a leader until re-election."""
    target = solr_match.aliases()[solr_match.alias]
    status = solr_match.get("/admin/collections", action="CLUSTERSTATUS", collection=target)
    shards = status["cluster"]["collections"][target]["shards"]
    [base, *_] = [r["base_url"] for shard in shards.values()
                  for r in shard["replicas"].values() if r.get("leader") == "true"]
    return solr_match.cluster.urls.index(base)


def test_one_node_killed_mid_load_loses_nothing(solr_match: SolrMatch, tmp_path: Path) -> None:
    """An incremental load into the alias's collection (2 copies of each shard);
    one node killed part-way: its shards' leaders move to the other node once
    its ZooKeeper session expires (10 s), updates answer 500 until then. The
    load's back-off rides through that, or, when the failover outlasts it, the
    load stops with the outage said once and a second run goes on from its
    marks (as the restart of ``match refs`` above): either way every work is in
    the index, once."""
    n = 40_000
    works = made_up(n)
    first = tmp_path / "first.jsonl"  # the alias and its collection made
    first.write_bytes(jsonl(works[:10]))
    match_index("--dump", str(first))
    root = tmp_path / "dump"
    root.mkdir()
    per = n // 4
    for i in range(4):
        (root / f"part-{i}.jsonl").write_bytes(jsonl(works[i * per:(i + 1) * per]))
    proc = subprocess.Popen([sys.executable, "-m", "sandcrawler", "match", "index", "--engine",
                             "--dump", str(root)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        def loading() -> bool:
            assert proc.poll() is None, "the load ended before a node was killed"
            return any(k.startswith("dump:part") for k in solr_match.marks())

        wait_until(loading, 120, "the load's first marks")
        solr_match.cluster.kill_node(leader_node(solr_match))
        _, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if proc.returncode == EXIT_INFRASTRUCTURE:
        # stopped by the failover: said once, no traceback, and the marks of
        # the batches it loaded kept
        [said] = error_lines(err)
        assert "Solr" in said and "Traceback" not in err.decode(), err.decode()
        wait_all_active(solr_match.cluster, solr_match)
        marks = {k: int(v) for k, v in solr_match.marks().items() if k.startswith("dump:part")}
        done = sum(per if v < 0 else v for v in marks.values())
        assert 0 < done < n, marks
        again = match_index("--dump", str(root))
        assert works_read(again) == n - done, (again, marks)
    else:
        # rode through it, backing off
        assert proc.returncode == 0, err.decode()
    assert solr_match.dois() == sorted(w["DOI"] for w in works)
