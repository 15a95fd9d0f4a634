"""The test kit's SolrCloud cluster really runs (sandcrawler_testkit.solr_cluster): a
collection of 2 shards with 2 replicas each over Solr's HTTP API, documents indexed and
found from either node. (Nodes killed, stalled and started again, a shard without a
live replica, the whole cluster restarted or killed at once: test_solr_cluster_faults.py,
on the fault tests' own cluster.)

Every call is plain HTTP, as the match index's engine backend makes them: the
Collections API creates collections from the configset the fixture uploaded with the
Configsets API (``sandcrawler-testkit``, the kit's ``data/solr/configset``)."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from sandcrawler_testkit.solr_cluster import SolrCluster

# seconds per test: real processes
pytestmark = pytest.mark.slow

CONFIGSET = "sandcrawler-testkit"
WORKS: list[dict[str, object]] = [
    {"id": f"work-{i}", "title_t": f"A study of sample {i}", "year_i": 2000 + i}
    for i in range(24)]
EVERYTHING = {f"work-{i}" for i in range(24)}


@dataclass(frozen=True)
class Found:
    """What a /select answered: the ids found, and whether Solr says some shard was missing."""
    ids: set[str]
    num_found: int
    partial: bool


def _get(url: str, **params: str | int) -> Any:
    """Solr's JSON answer, read here into the records below."""
    query = urllib.parse.urlencode({**params, "wt": "json"})
    with urllib.request.urlopen(f"{url}?{query}", timeout=120) as response:
        return json.loads(response.read())


def _post_json(url: str, body: object) -> None:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        response.read()


def create_collection(node: str, name: str, shards: int, replicas: int) -> None:
    """GET {node}/admin/collections?action=CREATE&name=..&numShards=..&replicationFactor=..
    &collection.configName=sandcrawler-testkit: it answers once every replica is made."""
    _get(f"{node}/admin/collections", action="CREATE", name=name,
         numShards=shards, replicationFactor=replicas, **{"collection.configName": CONFIGSET})


def index(node: str, collection: str, docs: list[dict[str, object]]) -> None:
    """POST {node}/{collection}/update?commit=true, a JSON array of documents."""
    _post_json(f"{node}/{collection}/update?commit=true&wt=json", docs)


def select(node: str, collection: str, q: str = "*:*", **params: str | int) -> Found:
    answer = _get(f"{node}/{collection}/select", q=q, rows=1000, fl="id", **params)
    response = answer["response"]
    return Found({str(d["id"]) for d in response["docs"]}, int(response["numFound"]),
                 bool(answer["responseHeader"].get("partialResults", False)))


def placement(node: str, collection: str) -> dict[str, set[str]]:
    """Shard -> the nodes (host:port_solr) holding one of its replicas."""
    status = _get(f"{node}/admin/collections", action="CLUSTERSTATUS", collection=collection)
    shards = status["cluster"]["collections"][collection]["shards"]
    return {name: {r["node_name"] for r in shard["replicas"].values()}
            for name, shard in shards.items()}


@dataclass(frozen=True)
class Replica:
    shard: str
    core: str
    state: str
    leader: bool
    docs: int  # what the core holds itself (distrib=false)


def replicas(node: str, collection: str) -> list[Replica]:
    status = _get(f"{node}/admin/collections", action="CLUSTERSTATUS", collection=collection)
    found = []
    for name, shard in status["cluster"]["collections"][collection]["shards"].items():
        for r in shard["replicas"].values():
            own = _get(f"{r['base_url']}/{r['core']}/select", q="*:*", rows=0, distrib="false")
            found.append(Replica(name, r["core"], r["state"], r.get("leader") == "true",
                                 int(own["response"]["numFound"])))
    return found


def node_name(url: str) -> str:
    """http://127.0.0.1:PORT/solr -> 127.0.0.1:PORT_solr, as ZooKeeper names it."""
    return url.removeprefix("http://").replace("/solr", "_solr")


@pytest.fixture(scope="module")
def works(solr_cluster: SolrCluster) -> Iterator[str]:
    """A collection of 2 shards x 2 replicas holding WORKS, made once for the module."""
    started = time.monotonic()
    create_collection(solr_cluster.urls[0], "works", shards=2, replicas=2)
    index(solr_cluster.urls[0], "works", WORKS)
    print(f"collection made and indexed in {time.monotonic() - started:.1f}s")
    yield "works"


def test_either_node_answers_for_both_shards(solr: SolrCluster, works: str) -> None:
    names = {node_name(u) for u in solr.urls}
    # each shard has a replica on each node: either node alone can answer EVERYTHING
    assert placement(solr.urls[0], works) == {"shard1": names, "shard2": names}
    for url in solr.urls:
        assert select(url, works) == Found(EVERYTHING, 24, False)
        assert select(url, works, "title_t:sample AND year_i:2007").ids == {"work-7"}
