"""The match index on a Solr collection: the ``CandidateIndex`` the matcher reads
(lookups sent to one replica of each shard and merged here) and the writer
``match index --engine`` and ``match.sync`` fill (docs/matching.md)."""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import orjson

from sandcrawler.core.errors import SearchUnavailable
from sandcrawler.match.index import find_by_words
from sandcrawler.match.records import CatalogRecord
from sandcrawler.match.solr.client import SolrClient, SolrMissing

log = logging.getLogger(__name__)

META_ID = "_sandcrawler_meta"
#: loaded works become searchable within this long (ms) without a commit of their own
COMMIT_WITHIN_MS = 10_000
#: updates handed to the sender and not yet applied, at most
SENDING = 2
#: seconds a merge of a new collection into one segment per shard may take (it
#: ran at about 7 MB of index a second per shard here: an hour is some 25 GB a
#: shard, twice a shard of 10^8 works on 2 shards; sent again after a timeout,
#: a merge waits for the one under way)
MERGE_TIMEOUT = 3 * 3600.0
#: seconds a shard map is used before it is read again: a rebuild's new
#: collection is read within this long of the alias's move (at once when the
#: old one is deleted)
SHARD_MAP_TTL = 60.0
#: title words whose works-per-word count is remembered, at most, and for how long
DF_CACHE_WORDS = 200_000
DF_CACHE_TTL = 600.0


def document(rec: CatalogRecord) -> dict[str, Any]:
    """A work's Solr document."""
    doc: dict[str, Any] = {"id": rec.doi, "kind": "work", "rec": rec.dumps().decode(),
                           "t": rec.index_text(), "a": rec.index_names()}
    if loc := rec.locator:
        doc["loc"] = "\t".join(loc)
    if rec.alt_ids:
        doc["alt"] = list(rec.alt_ids)
    return doc


def _phrase(word: str) -> str:
    return '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"'


class SolrIndex:
    """``CandidateIndex`` on a Solr collection (or alias), and the writer
    ``match.sync`` and ``match index --engine`` use."""

    def __init__(self, client: SolrClient, collection: str, *, concurrency: int = 8,
                 commit_within: int | None = COMMIT_WITHIN_MS) -> None:
        self.client = client
        self.collection = collection
        #: lookups of one batch the matcher may have in flight at once
        self.concurrency = concurrency
        #: ms within which written works become searchable; None: at ``optimize``
        #: only (a collection no reader sees yet: each soft commit opens a searcher)
        self.commit_within = commit_within
        self._pending: list[dict[str, Any]] = []
        self._marks: dict[str, str] | None = None
        # updates go out on one thread of their own, in order, while the loader
        # reads the next batch; at most SENDING are waiting (memory stays bounded)
        self._sender: ThreadPoolExecutor | None = None
        self._sending: deque[Future[None]] = deque()
        #: the failure of a send: nothing after it is sent
        self._send_failed: BaseException | None = None
        # the shard map (direct lookups), and works per title word lately read
        self._map: tuple[tuple[str, ...], ...] = ()
        self._map_read = 0.0
        self._map_lock = threading.Lock()
        self._df: dict[str, int] = {}
        self._df_read = 0.0
        #: words the current batch's ``expect`` found in no title (for that batch only)
        self._absent: frozenset[str] = frozenset()

    # --- reading ----------------------------------------------------------------------

    def _shards(self, *, again: bool = False) -> tuple[tuple[str, ...], ...]:
        with self._map_lock:
            if again or not self._map or time.monotonic() - self._map_read > SHARD_MAP_TTL:
                shards = shard_map(self.client, self.collection)
                if shards != self._map:
                    self._df = {}  # another collection (a rebuild), other counts
                self._map, self._map_read = shards, time.monotonic()
            return self._map

    def _ask(self, handler: str, params: Mapping[str, Any],
             **through_node: str) -> list[dict[str, Any]]:
        """``handler``'s answers: one per shard, asked of one replica of each
        (another of the shard's replicas when one does not answer); or, with
        ``direct_shards`` off, one answer from a node that asks them
        (``through_node``: the parameters for that way only). A core that is not
        there (the alias moved and its collection was deleted) sends the map to
        be read again, once."""
        if not self.client.direct_shards:
            return [self.client.request(f"/{self.collection}{handler}",
                                        {**params, **through_node})]
        for again in (False, True):
            shards = self._shards(again=again)
            try:
                return [self.client.request(handler, {**params, "distrib": "false"},
                                            bases=replicas) for replicas in shards]
            except SolrMissing:
                if again:
                    raise
        raise AssertionError("unreachable")

    def _select(self, q: str, rows: int, fq: str = "kind:work") -> list[CatalogRecord]:
        answers = self._ask(
            "/select", {"q": q, "fq": fq, "rows": rows, "fl": "rec,score"},
            # through a node: the stored record comes back with the ranking, in one
            # pass over the shards instead of two; it answers from its own copies first
            **{"distrib.singlePass": "true", "shards.preference": "replica.location:local"})
        # each shard's best, merged by score as Solr's own merge does (the scores
        # are each shard's own: Solr's default, local statistics)
        docs = [d for answer in answers for d in (answer.get("response") or {}).get("docs") or []]
        docs.sort(key=lambda d: -float(d.get("score") or 0.0))
        docs = docs[:rows]
        return [CatalogRecord.loads(d["rec"]) for d in docs if d.get("rec")]

    def size(self) -> int:
        answer = self.client.request(f"/{self.collection}/select",
                                     {"q": "kind:work", "rows": 0})
        return int((answer.get("response") or {}).get("numFound") or 0)

    def by_doi(self, doi: str) -> CatalogRecord | None:
        # real-time get: by id, from the update log too (a work just loaded)
        answer = self.client.request(f"/{self.collection}/get", {"id": doi, "fl": "rec"})
        doc = answer.get("doc")
        return CatalogRecord.loads(doc["rec"]) if isinstance(doc, dict) and doc.get("rec") \
            else None

    def by_alt_id(self, key: str) -> CatalogRecord | None:
        found = self._select(f"alt:{_phrase(key)}", 1)
        return found[0] if found else None

    def document_frequency(self, words: Sequence[str]) -> dict[str, int]:
        """Works per title word over every shard (0 for a word no title has),
        read from the terms' dictionaries: no posting is read. Works deleted
        or replaced still count until their segment is merged away."""
        if time.monotonic() - self._df_read > DF_CACHE_TTL or len(self._df) > DF_CACHE_WORDS:
            # Counts move as works are loaded. A count some minutes old steers
            # which words are asked as well; a word no title had is not
            # remembered (a work loaded since may have it: skipping it could
            # make a false no-match).
            self._df, self._df_read = {}, time.monotonic()
        known, absent = self._df, self._absent
        out = {w: known.get(w, 0) for w in words}
        # terms.list is split on commas (and a folded word has none)
        asked = [w for w in words if w not in known and w not in absent
                 and "," not in w and "\\" not in w]
        if not asked:
            return out
        answers = self._ask("/terms", {"terms.fl": "t", "terms.list": ",".join(asked),
                                       "terms.limit": len(asked), "json.nl": "map"})
        counts = dict.fromkeys(asked, 0)
        for answer in answers:
            for w, n in (((answer.get("terms") or {}).get("t")) or {}).items():
                if w in counts:
                    counts[w] += int(n)
        known.update((w, n) for w, n in counts.items() if n > 0)
        out.update(counts)
        return out

    def expect(self, words: Iterable[str]) -> None:
        """The counts of a batch's title words in one request per shard; the
        words no title has are remembered until the next batch only."""
        unique = list(dict.fromkeys(w for w in words if w))
        self._absent = frozenset()
        if unique:
            counts = self.document_frequency(unique)
            self._absent = frozenset(w for w in unique if counts.get(w, 0) == 0)

    def by_words(self, words: Sequence[str], limit: int) -> list[CatalogRecord]:
        return find_by_words(words, self.document_frequency,
                             lambda expression: self._select(f"t:({expression})", limit),
                             _phrase, limit)

    def by_names(self, surnames: Sequence[str], limit: int) -> list[CatalogRecord]:
        names = list(dict.fromkeys(n for n in surnames if n))[:3]
        if not names:
            return []
        return self._select("a:(" + " AND ".join(_phrase(n) for n in names) + ")", limit)

    def by_locators(self, pairs: Sequence[tuple[str, str]], limit: int
                    ) -> list[list[CatalogRecord]]:
        keys = list(dict.fromkeys(f"{volume}\t{page}" for volume, page in pairs))
        if not keys:
            return [[] for _ in pairs]
        found: dict[str, list[dict[str, Any]]] = {k: [] for k in keys}
        if len(keys) == 1:
            # one locator (a parsed reference's): a plain search gives the same
            # first ``limit`` works as a group would, without grouping's cost (the
            # group values looked up in every segment's docValues)
            for answer in self._ask("/select", {"q": "loc:" + _phrase(keys[0]),
                                                "fq": "kind:work", "fl": "rec",
                                                "rows": limit}):
                found[keys[0]].extend((answer.get("response") or {}).get("docs") or [])
        else:
            # one request for them all: grouped by locator, each group its first
            # ``limit`` works, as a request of its own would give them
            params = {"q": "loc:(" + " OR ".join(_phrase(k) for k in keys) + ")",
                      "fq": "kind:work", "fl": "rec", "rows": len(keys),
                      "group": "true", "group.field": "loc", "group.limit": limit}
            for answer in self._ask("/select", params):
                for group in ((answer.get("grouped") or {}).get("loc") or {}).get(
                        "groups") or []:
                    docs = found.get(str(group.get("groupValue")))
                    if docs is not None:
                        docs.extend((group.get("doclist") or {}).get("docs") or [])
        return [[CatalogRecord.loads(d["rec"]) for d in found[f"{volume}\t{page}"][:limit]
                 if d.get("rec")] for volume, page in pairs]

    def close(self) -> None:
        try:
            self.flush()
        finally:
            if self._sender is not None:
                self._sender.shutdown(cancel_futures=True)
            self.client.close()

    # --- writing (match.sync's writer) ---------------------------------------------------

    def meta(self, key: str) -> str | None:
        if self._marks is None:
            answer = self.client.request(f"/{self.collection}/get", {"id": META_ID,
                                                                     "fl": "marks"})
            doc = answer.get("doc")
            marks = orjson.loads(doc["marks"]) if isinstance(doc, dict) and doc.get("marks") \
                else {}
            self._marks = {str(k): str(v) for k, v in marks.items()}
        return self._marks.get(key)

    def set_meta(self, key: str, value: str) -> None:
        self.meta(key)
        assert self._marks is not None
        self._marks[key] = value

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """The works upserted inside, then the marks, in a request of their own sent
        once the works' request has been answered: a mark is never ahead of the
        works it counts. (Not in the same request: over shards, Solr applies a
        request's documents shard by shard, and an update that fails on one
        shard only applies the others', the marks' shard's too.) After a failed
        send nothing more is sent: a later batch's mark counts the failed
        batch's works as well. A batch loaded and not marked is loaded again
        from the last mark, and loading a work twice changes nothing."""
        self._pending = []
        marks_before = dict(self._marks or {})
        try:
            yield
        except BaseException:
            self._pending, self._marks = [], marks_before
            raise
        docs = self._pending
        meta = None
        if self._marks is not None and self._marks != marks_before:
            meta = {"id": META_ID, "kind": "meta", "marks": orjson.dumps(self._marks).decode()}
        self._pending = []
        if docs or meta is not None:
            # searchable within seconds without a commit per batch (the loader's
            # finish commits at once)
            params = {} if self.commit_within is None else {"commitWithin": self.commit_within}
            if self._sender is None:
                self._sender = ThreadPoolExecutor(1, thread_name_prefix="solr-update")
            # one sender, so the requests apply in order
            self._sending.append(self._sender.submit(self._send, docs, meta, params))
            while len(self._sending) > SENDING:
                self._sending.popleft().result()  # its failure is raised here

    def _send(self, docs: list[dict[str, Any]], meta: dict[str, Any] | None,
              params: dict[str, Any]) -> None:
        if self._send_failed is not None:
            raise SearchUnavailable(f"Solr: not sent after an update failed "
                                    f"({self._send_failed})")
        try:
            if docs:
                self.client.update(self.collection, docs, **params)
            if meta is not None:
                self.client.update(self.collection, [meta], **params)
        except BaseException as e:
            self._send_failed = e
            raise

    def flush(self) -> None:
        """Every update handed over so far has been applied (or its error raised)."""
        while self._sending:
            self._sending.popleft().result()

    def upsert(self, records: Iterable[CatalogRecord]) -> int:
        docs = {rec.doi: document(rec) for rec in records}  # one DOI twice: the last wins
        self._pending.extend(docs.values())
        return len(docs)

    def optimize(self) -> None:
        """Make what was loaded searchable (a hard commit that opens a searcher)."""
        self.flush()
        self.client.update(self.collection, {"commit": {}})

    def merge(self) -> None:
        """Each shard's index merged into one segment: a lookup then seeks each
        term once per shard instead of once per segment (at 10^6 works, a match
        took about 15% less time after this merge, which took 16 s). Only for a
        collection no reader sees yet: a merge rewrites the whole index, and
        updates made later are merged in by Solr's own policy."""
        self.flush()
        log.info("Solr: merging %s's shards into one segment each", self.collection)
        self.client.request(f"/{self.collection}/update",
                            {"optimize": "true", "maxSegments": 1, "waitSearcher": "true"},
                            body=b"{}", timeout=MERGE_TIMEOUT)

    def clear(self) -> None:
        self.flush()
        self.client.update(self.collection, {"delete": {"query": "*:*"}, "commit": {}})
        self._marks = {}


def shard_map(client: SolrClient, collection: str) -> tuple[tuple[str, ...], ...]:
    """The cores of each shard of ``collection`` (a collection or an alias):
    the active replicas on live nodes, or, for a shard with none, all of its
    replicas (the map may be older than the cluster: they are tried in turn,
    and an outage is said when none answers)."""
    cluster = client.collections_api("CLUSTERSTATUS", collection=collection).get("cluster") or {}
    live = set(cluster.get("live_nodes") or ())
    shards: list[tuple[str, ...]] = []
    for info in (cluster.get("collections") or {}).values():
        for name, shard in (info.get("shards") or {}).items():
            if shard.get("state", "active") != "active":
                continue  # a shard split's parent: its children hold its works
            good: list[str] = []
            other: list[str] = []
            for replica in (shard.get("replicas") or {}).values():
                url = f"{str(replica.get('base_url', '')).rstrip('/')}/{replica.get('core')}"
                up = replica.get("state") == "active" and replica.get("node_name") in live
                (good if up else other).append(url)
            if not good and not other:
                raise SearchUnavailable(f"Solr: shard {name!r} of {collection!r} has no replica")
            shards.append(tuple(good or other))
    if not shards:
        raise SolrMissing(f"Solr has no {collection!r}: build the index with "
                          "`sandcrawler match index --engine`")
    return tuple(shards)
