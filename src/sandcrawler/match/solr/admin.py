"""Collections and aliases: the configset uploaded under a name that carries its
digest, a rebuild loaded into a new collection and the alias moved to it."""

from __future__ import annotations

import hashlib
import io
import logging
import time
import zipfile
from pathlib import Path

from sandcrawler.core.errors import ConfigError, SearchUnavailable
from sandcrawler.core.retry import RetryPolicy
from sandcrawler.match.solr.client import SolrClient

log = logging.getLogger(__name__)

CONFIG_DIR = Path(__file__).resolve().parent / "config"


def _configset_name() -> str:
    """The configset's name carries a digest of its files: a changed schema or
    configuration is uploaded under a new name (collections made before keep
    theirs until a rebuild), never over the one a collection uses."""
    digest = hashlib.sha1()
    for path in sorted(CONFIG_DIR.glob("*.xml")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return f"sandcrawler-match-{digest.hexdigest()[:10]}"


SCHEMA = _configset_name()

def configset_zip(directory: Path = CONFIG_DIR) -> bytes:
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as archive:
        for path in sorted(directory.glob("*.xml")):
            archive.write(path, path.name)
    return data.getvalue()


class SolrAdmin:
    """The collection behind ``alias``: created on first use, replaced by a rebuild."""

    def __init__(self, client: SolrClient, alias: str, *, shards: int, replicas: int) -> None:
        self.client = client
        self.alias = alias
        self.shards = shards
        self.replicas = replicas

    def aliases(self) -> dict[str, str]:
        answer = self.client.collections_api("LISTALIASES")
        return {str(k): str(v) for k, v in (answer.get("aliases") or {}).items()}

    def collections(self) -> list[str]:
        return [str(c) for c in self.client.collections_api("LIST").get("collections") or []]

    def target(self) -> str | None:
        """The collection the alias points at now (None: no index yet)."""
        return self.aliases().get(self.alias)

    def upload_configset(self) -> None:
        if SCHEMA in (self.client.request("/admin/configs", {"action": "LIST"})
                      .get("configSets") or []):
            return
        self.client.request("/admin/configs", {"action": "UPLOAD", "name": SCHEMA},
                            body=configset_zip(), content_type="application/octet-stream")

    def create(self, replicas: int | None = None) -> str:
        """A new empty collection for this alias (not yet behind it)."""
        self.upload_configset()
        name = f"{self.alias}-{time.strftime('%Y%m%d%H%M%S')}"
        if name in self.collections():
            name += f"-{int(time.time() * 1000) % 1000:03d}"
        try:
            self.client.collections_api("CREATE", name=name, numShards=self.shards,
                                        replicationFactor=replicas or self.replicas,
                                        waitForFinalState="true",
                                        **{"collection.configName": SCHEMA})
        except ConfigError:
            # a CREATE whose node did not answer in time is sent again to the next
            # node, which says the collection exists: the first one made it (the
            # name is this call's own)
            if name not in self.collections():
                raise
        return name

    def unfinished(self) -> str | None:
        """The newest of this alias's collections that no alias points at: a first
        load that was stopped before it finished (it resumes there)."""
        behind = {c for v in self.aliases().values() for c in v.split(",")}
        mine = sorted(c for c in self.collections()
                      if c.startswith(self.alias + "-") and c not in behind)
        return mine[-1] if mine else None

    def add_replicas(self, collection: str) -> None:
        """Every shard of ``collection`` brought to ``replicas`` copies. A new
        replica copies the leader's index files instead of indexing every
        document again: a bulk load into one copy, then this, costs half."""
        status = self.client.collections_api("CLUSTERSTATUS", collection=collection)
        shards = ((status.get("cluster") or {}).get("collections") or {}) \
            .get(collection, {}).get("shards") or {}
        for shard, info in shards.items():
            for _ in range(self.replicas - len(info.get("replicas") or {})):
                self.client.collections_api("ADDREPLICA", collection=collection, shard=shard,
                                            waitForFinalState="true")

    def point(self, collection: str) -> list[str]:
        """The alias moved to ``collection``; the collections it pointed at before,
        and this alias's unfinished ones, are deleted (returned)."""
        before = self.target()
        self.client.collections_api("CREATEALIAS", name=self.alias, collections=collection)
        old = [c for c in (before or "").split(",") if c and c != collection]
        while (orphan := self.unfinished()) is not None:
            if orphan not in old:  # the collection the alias left is one now
                old.append(orphan)
            self.client.collections_api("DELETE", name=orphan)
        for name in old:
            if name not in self.collections():
                continue
            self.client.collections_api("DELETE", name=name)
        return old

    def index_bytes(self, collection: str) -> int:
        """Bytes on disk of every replica of ``collection``: each node's cores'
        index sizes (a node that does not answer counts nothing)."""
        total = 0
        for url in self.client.urls:
            try:
                with SolrClient([url], timeout=self.client.timeout,
                                policy=RetryPolicy(attempts=1)) as node:
                    status = node.request("/admin/cores", {"action": "STATUS"})
            except SearchUnavailable:
                continue
            for core in (status.get("status") or {}).values():
                if (core.get("cloud") or {}).get("collection") == collection:
                    total += int((core.get("index") or {}).get("sizeInBytes") or 0)
        return total
