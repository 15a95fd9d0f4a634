"""The test kit's SolrCloud cluster taken down (sandcrawler_testkit.solr_cluster): a
node killed and started again, a shard left without a live replica, a node stalled
(SIGSTOP) and let go, the whole cluster restarted, the whole cluster killed at once
(a power cut). What Solr answers meanwhile is read over its HTTP API, as in
test_solr_cluster.py (docs/operations.md, "Solr test cluster", says what is seen).

These tests take a cluster down: they run on the fault tests' own cluster
(tests/helpers/solr.py), not on the session's, which other tests only read."""

from __future__ import annotations

import socket
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandcrawler_testkit.solr_cluster import SolrCluster
from tests.helpers.solr import whole
from tests.helpers.waiting import wait_until
from tests.testkit.test_solr_cluster import (
    EVERYTHING,
    WORKS,
    Found,
    _get,
    _post_json,
    create_collection,
    index,
    node_name,
    placement,
    replicas,
    select,
)

# seconds per test: real processes, ZooKeeper's session timeout waited out
pytestmark = pytest.mark.slow


def live_nodes(node: str) -> set[str]:
    return set(_get(f"{node}/admin/collections", action="CLUSTERSTATUS")["cluster"]["live_nodes"])


def refuses(url: str) -> bool:
    parsed = urllib.parse.urlsplit(url)
    try:
        with socket.create_connection((parsed.hostname, parsed.port), timeout=2):
            return False
    except ConnectionRefusedError:
        return True


def state(pid: int) -> str:
    """A process's state letter (``T``: stopped by a signal)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat[stat.rindex(")") + 2]


@pytest.fixture
def solr(solr_fault_cluster: SolrCluster) -> SolrCluster:
    """The fault tests' cluster with every node running (whatever the test before did)."""
    return whole(solr_fault_cluster)


@pytest.fixture(scope="module")
def works(solr_fault_cluster: SolrCluster) -> Iterator[str]:
    """A collection of 2 shards x 2 replicas holding WORKS, made once for the module."""
    name = f"kit-works-{uuid.uuid4().hex[:6]}"
    cluster = whole(solr_fault_cluster)
    create_collection(cluster.urls[0], name, shards=2, replicas=2)
    index(cluster.urls[0], name, WORKS)
    yield name
    whole(cluster)
    cluster.wait_for_active(name)
    _get(f"{cluster.urls[0]}/admin/collections", action="DELETE", name=name)


def test_a_killed_node_its_replicas_answer_and_it_rejoins(solr: SolrCluster, works: str) -> None:
    solr.wait_for_active(works)
    solr.kill_node(1)
    assert solr.pids[1] is None and refuses(solr.urls[1])
    # a crash, not a shutdown: ZooKeeper still has the node for its session's timeout
    assert node_name(solr.urls[1]) in live_nodes(solr.urls[0])
    # node 0 sends each shard's request to a replica; the one on node 1 refuses the
    # connection and Solr asks the other: the whole answer, not a partial one, without
    # shards.tolerant
    assert select(solr.urls[0], works) == Found(EVERYTHING, 24, False)
    assert select(solr.urls[0], works, **{"shards.tolerant": "true"}) == Found(EVERYTHING, 24,
                                                                                False)

    started = time.monotonic()
    solr.start_node(1)  # before ZooKeeper noticed it was gone: the node takes its place again
    solr.wait_for_active(works)
    print(f"node 1 back and its replicas active in {time.monotonic() - started:.1f}s")
    assert node_name(solr.urls[1]) in live_nodes(solr.urls[0])
    assert select(solr.urls[1], works) == Found(EVERYTHING, 24, False)


def test_a_shard_without_a_live_replica_is_an_error_or_a_flagged_partial_answer(
        solr: SolrCluster) -> None:
    """What the engine backend must never take for "nothing found": a collection of
    one replica per shard, the node holding one of the shards killed."""
    single = f"kit-single-{uuid.uuid4().hex[:6]}"
    create_collection(solr.urls[0], single, shards=2, replicas=1)
    index(solr.urls[0], single, WORKS)
    on_node_1 = [s for s, nodes in placement(solr.urls[0], single).items()
                 if nodes == {node_name(solr.urls[1])}]
    assert len(on_node_1) == 1, "one shard on each node"
    solr.kill_node(1)
    # while ZooKeeper still has node 1: 500, Solr's request to it refused
    with pytest.raises(urllib.error.HTTPError) as refused:
        select(solr.urls[0], single)
    assert refused.value.code == 500 and b"Connection refused" in refused.value.read()
    # shards.tolerant: 200 and the other shard's documents only, flagged partialResults
    partial = select(solr.urls[0], single, **{"shards.tolerant": "true"})
    assert partial.partial and 0 < partial.num_found < 24

    wait_until(lambda: node_name(solr.urls[1]) not in live_nodes(solr.urls[0]),
               solr.session_timeout + 20, "ZooKeeper to drop the killed node", interval=0.25)
    # once its session expired: 503, no replica of the shard left
    with pytest.raises(urllib.error.HTTPError) as unavailable:
        select(solr.urls[0], single)
    assert unavailable.value.code == 503
    assert b"no active servers hosting shard" in unavailable.value.read()
    assert select(solr.urls[0], single, **{"shards.tolerant": "true"}) == partial

    started = time.monotonic()
    solr.start_node(1)  # its old session gone: it joins at once
    solr.wait_for_active(single)
    print(f"node 1 back and its replicas active in {time.monotonic() - started:.1f}s")
    assert select(solr.urls[0], single) == Found(EVERYTHING, 24, False)
    _get(f"{solr.urls[0]}/admin/collections", action="DELETE", name=single)


def test_a_frozen_node_takes_connections_answers_nothing_and_thaws(
        solr: SolrCluster, works: str) -> None:
    """``freeze_node`` (SIGSTOP): the port still accepts a connection (the kernel
    answers the handshake), no request is answered; ``thaw_node`` lets it go on,
    and within its ZooKeeper session it simply answers again."""
    solr.wait_for_active(works)
    pid = solr.pids[1]
    assert pid is not None
    solr.freeze_node(1)
    try:
        assert state(pid) == "T" and solr.frozen == {1}
        assert not refuses(solr.urls[1])
        with pytest.raises(TimeoutError):
            _get_within(f"{solr.urls[1]}/{works}/select", 1.0)
        # node 0 still answers for itself (no shard request of this one goes to node 1)
        assert select(solr.urls[0], works, distrib="false").num_found > 0
    finally:
        solr.thaw_node(1)
    assert state(pid) != "T" and solr.frozen == set()
    assert solr.pids[1] == pid  # the same JVM, let go
    assert select(solr.urls[1], works) == Found(EVERYTHING, 24, False)


def _get_within(url: str, timeout: float) -> bytes:
    query = urllib.parse.urlencode({"q": "*:*", "wt": "json"})
    with urllib.request.urlopen(f"{url}?{query}", timeout=timeout) as response:
        return bytes(response.read())


def test_a_whole_cluster_restart_keeps_the_data(solr: SolrCluster, works: str) -> None:
    # A cluster in health first: a document indexed while a replica still recovers
    # (node 1 was killed above) and a restart before it caught up can leave that
    # replica the shard's leader without it and the other replica with it, both
    # active (docs/operations.md, "Solr test cluster")
    solr.wait_for_active(works)
    urls, pids = list(solr.urls), list(solr.pids)
    before = select(solr.urls[0], works).ids
    index(solr.urls[1], works, [{"id": "work-late", "title_t": "Indexed before the restart"}])
    started = time.monotonic()
    solr.restart()
    restarted = time.monotonic() - started
    solr.wait_for_active(works)
    print(f"restart {restarted:.1f}s, replicas active after {time.monotonic() - started:.1f}s")
    # same ports (the URLs clients hold still work), new processes
    assert solr.urls == urls and not set(solr.pids) & set(pids)
    held = replicas(solr.urls[0], works)
    # both replicas of a shard hold the same documents, and the shards hold them all
    by_shard = {r.shard: {x.docs for x in held if x.shard == r.shard} for r in held}
    assert all(len(counts) == 1 for counts in by_shard.values()), held
    assert sum(counts.pop() for counts in by_shard.values()) == len(before) + 1, held
    for url in solr.urls:
        assert select(url, works) == Found(before | {"work-late"}, len(before) + 1, False)


def test_the_whole_cluster_killed_at_once_keeps_what_it_acknowledged(
        solr: SolrCluster, works: str) -> None:
    """A power cut: ZooKeeper and every node SIGKILLed together. An update Solr
    answered, committed or only in its update log, is there after the start."""
    solr.wait_for_active(works)
    before = select(solr.urls[0], works).ids
    index(solr.urls[0], works, [{"id": "work-committed"}])
    _post_json(f"{solr.urls[0]}/{works}/update?wt=json", [{"id": "work-in-the-log"}])
    urls = list(solr.urls)
    solr.kill()
    assert all(refuses(u) for u in urls)
    started = time.monotonic()
    solr.start()  # its nodes wait out their old ZooKeeper sessions first
    solr.wait_for_active(works)
    print(f"started again, replicas active in {time.monotonic() - started:.1f}s")
    assert solr.urls == urls
    after = before | {"work-committed", "work-in-the-log"}
    # Active is not yet caught up: a replica may still be replaying its update log
    # (CI once found one node answering without the update only in the log). What
    # was acknowledged must show on every node, however long its replay takes.
    def caught_up(url: str) -> bool:
        return select(url, works) == Found(after, len(after), False)

    for url in solr.urls:
        wait_until(lambda: caught_up(url), 60,  # noqa: B023 (called in this turn)
                   f"{url} answering every acknowledged update", interval=0.5)
