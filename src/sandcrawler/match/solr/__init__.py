"""The match index on Apache Solr (SolrCloud), opened from ``match`` settings: the
reader and writer ``match.engines`` registers. ``client`` speaks to the nodes,
``index`` reads and loads a collection, ``admin`` manages collections and aliases."""

from __future__ import annotations

import logging
from collections.abc import Callable

from sandcrawler.config import MatchSettings
from sandcrawler.core.errors import ConfigError
from sandcrawler.core.moved import forward_attributes
from sandcrawler.match.solr.admin import SolrAdmin
from sandcrawler.match.solr.client import SolrClient
from sandcrawler.match.solr.index import SolrIndex

log = logging.getLogger(__name__)

# this package was one module: its other names still resolve here, for one release
__getattr__ = forward_attributes("sandcrawler.match.solr")


def client_of(match: MatchSettings) -> SolrClient:
    return SolrClient(match.engine_urls, timeout=match.engine_timeout,
                      options=match.engine_options)


def admin_of(match: MatchSettings, client: SolrClient) -> SolrAdmin:
    return SolrAdmin(client, match.engine_collection, shards=match.engine_shards,
                     replicas=match.engine_replicas)


def open_reader(match: MatchSettings) -> SolrIndex:
    """The alias matching reads; ConfigError when there is no index behind it."""
    client = client_of(match)
    admin = admin_of(match, client)
    try:
        if admin.target() is None and match.engine_collection not in admin.collections():
            raise ConfigError(f"Solr has no match index {match.engine_collection!r}: build it "
                              "with `sandcrawler match index --engine`")
    except BaseException:
        client.close()
        raise
    return SolrIndex(client, match.engine_collection, concurrency=match.engine_concurrency)


def open_writer(match: MatchSettings, *, rebuild: bool = False
                ) -> tuple[SolrIndex, Callable[[], None]]:
    """The collection to load, and ``finish``, which makes the load searchable.

    * The alias's collection, when it has one: works are upserted in place,
      searchable within ``COMMIT_WITHIN_MS`` (``persist crossref`` feeds it so)
      or at ``finish``.
    * Otherwise (the first load), or with ``rebuild``: a new collection with one
      copy of each shard, loaded with no reader to serve; ``finish`` then adds
      the other copies (``match.engine_replicas``) and points the alias at it,
      deleting the collection it replaced. A first load stopped part-way goes on
      in its unfinished collection; a rebuild always starts a new one."""
    client = client_of(match)
    admin = admin_of(match, client)
    current = None if rebuild else admin.target()
    if current is not None:
        index = SolrIndex(client, current, concurrency=match.engine_concurrency)
        return index, index.optimize
    collection = (None if rebuild else admin.unfinished()) or admin.create(replicas=1)
    index = SolrIndex(client, collection, concurrency=match.engine_concurrency,
                      commit_within=None)

    def finish() -> None:
        index.optimize()
        # merged before the other copies are added: they copy the merged files
        index.merge()
        admin.add_replicas(collection)
        moved = admin.point(collection)
        log.info("Solr: alias %s now %s (deleted: %s)", admin.alias, collection,
                 ", ".join(moved) or "none")

    return index, finish
