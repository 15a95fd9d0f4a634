"""The Solr cluster of the tests that take a cluster down.

Most Solr tests share the session's cluster (``solr_cluster`` in tests/conftest.py)
and only read it or kill one node, which the ``solr`` fixture starts again. A test
that stops, kills, restarts or stalls the cluster as a whole runs on the fault tests'
cluster (``solr_fault_cluster``, same parallel group), taken whole (``whole``) first.
"""

from __future__ import annotations

from sandcrawler_testkit.solr_cluster import SolrCluster

#: the configset the kit's tests create collections from (the session's cluster has it too)
CONFIGSET = "sandcrawler-testkit"

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
