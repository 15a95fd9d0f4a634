"""The Solr cluster of the tests that take a cluster down.

Most Solr tests share the session's cluster (``solr_cluster`` in tests/conftest.py)
and only read it or kill one node, which the ``solr`` fixture starts again. A test
that stops, kills, restarts or stalls the cluster as a whole (every node, a power
cut, a restart) runs instead on a cluster kept for such tests (``fault_cluster``):
started at the first use in a test process, stopped when pytest ends, so the fault
modules of every package (the test kit's, the match index's) share one start. Their
fixture takes the session's ``solr_cluster`` as well, which puts them in its parallel
group (tests/conftest.py ``SERVICE_GROUPS``): every Solr test runs on one worker, one
at a time. Each test takes the cluster whole (``whole``) and leaves it as it likes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sandcrawler_testkit.solr_cluster import SolrCluster

#: the configset the kit's tests create collections from (the session's cluster has it too)
CONFIGSET = "sandcrawler-testkit"

_FAULT_CLUSTER = pytest.StashKey[SolrCluster]()


def fault_cluster(libs: Path, config: pytest.Config,
                  tmp_path_factory: pytest.TempPathFactory) -> SolrCluster:
    """The cluster the fault tests of this test process share: 2 nodes and
    ZooKeeper, the kit's configset uploaded, as the session's; started on first use."""
    cluster = config.stash.get(_FAULT_CLUSTER, None)
    if cluster is None:
        cluster = SolrCluster(libs, tmp_path_factory.mktemp("solr-faults"), nodes=2)
        config.add_cleanup(cluster.stop)
        cluster.start()
        cluster.upload_configset(CONFIGSET)
        config.stash[_FAULT_CLUSTER] = cluster
    return whole(cluster)


def whole(cluster: SolrCluster) -> SolrCluster:
    """Every node of ``cluster`` running: the cluster started again after a power
    cut or a stop, a frozen node thawed, a killed or stopped one started (same
    port, same data). Replicas that were down then recover: ``wait_for_active``."""
    if not cluster.running:
        cluster.start()  # its configset is kept in ZooKeeper's data
    for i in sorted(cluster.frozen):
        cluster.thaw_node(i)
    for i, pid in enumerate(cluster.pids):
        if pid is None:
            cluster.start_node(i)
    return cluster
