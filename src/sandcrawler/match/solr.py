"""The match index on Apache Solr (SolrCloud): the same ``CandidateIndex`` the
matcher reads, and the same writer ``match index`` fills (docs/matching.md, "On
a search engine").

* **Documents.** One per work, by DOI: the ``CatalogRecord`` as JSON (``rec``,
  all that is read back), its folded title words (``t``) and first authors'
  surnames (``a``) exactly as the embedded index gets them, volume and first
  page (``loc``), other identifiers (``alt``). One more document, ``kind:meta``,
  holds the loader's marks (how far into the crossref table or a dump it got).
  The schema is code: ``solr_config/`` is uploaded as a configset named after
  its version.
* **Aliases.** Queries and incremental loads go to ``match.engine_collection``,
  an alias. A rebuild loads a new collection (``<alias>-<time>``) and then
  points the alias at it: readers never see an index half built, and the old
  collection is deleted once the alias has moved.
* **Requests.** JSON over HTTP(S) with keep-alive, optional basic
  authentication and CA file (``match.engine_options``), a timeout per request.
  A node that does not answer (refused, timed out, 5xx) is passed over for the
  next of ``match.engine_urls``; when every node has failed, the round is tried
  again on the shared back-off policy (``retry.RetryPolicy``), and then
  ``SearchUnavailable`` is raised: an outage, never an empty answer. An answer
  that says it is partial (a shard with no live replica) is an outage too, so a
  missing shard can never turn into a persisted ``no-match``.
* **Batches.** Solr has no multi-search request; the matcher sends a batch's
  lookups concurrently instead (``concurrency``), over the pooled connections.
* **Shards asked directly.** A lookup goes to one replica of each shard
  (``distrib=false``) and the answers are merged here: through a node, Solr
  makes the same lookup three requests and about four times the work.
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import io
import itertools
import logging
import ssl
import threading
import time
import zipfile
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Self
from urllib.parse import urlencode

import orjson

from sandcrawler.config import MatchSettings
from sandcrawler.core.errors import ConfigError, SearchUnavailable
from sandcrawler.core.retry import Backoff, RetryPolicy
from sandcrawler.match.index import choose_words
from sandcrawler.match.records import CatalogRecord
from sandcrawler.match.solr_http import NodeConnections, TooSlow, split_base, tls_context

log = logging.getLogger(__name__)

CONFIG_DIR = Path(__file__).resolve().parent / "solr_config"


def _configset_name() -> str:
    """The configset's name carries a digest of its files: a changed schema or
    configuration is uploaded under a new name (collections made before keep
    theirs until a rebuild), never over the one a collection uses."""
    digest = hashlib.sha1()
    for path in sorted(CONFIG_DIR.glob("*.xml")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return f"sandcrawler-match-{digest.hexdigest()[:10]}"


SCHEMA = _configset_name()
META_ID = "_sandcrawler_meta"
#: loaded works become searchable within this long (ms) without a commit of their own
COMMIT_WITHIN_MS = 10_000
#: updates handed to the sender and not yet applied, at most
SENDING = 2
#: seconds a Collections API change may take (CREATE, ADDREPLICA, DELETE wait for
#: the cluster; one cut short by the per-request timeout would be sent again to
#: another node and made twice)
ADMIN_TIMEOUT = 180.0
#: seconds a merge of a new collection into one segment per shard may take (it
#: ran at about 7 MB of index a second per shard here: an hour is some 25 GB a
#: shard, twice a shard of 10^8 works on 2 shards; sent again after a timeout,
#: a merge waits for the one under way)
MERGE_TIMEOUT = 3 * 3600.0
_ADMIN_CHANGES = frozenset({"CREATE", "ADDREPLICA", "DELETE", "CREATEALIAS"})
#: what the Solr server answers when one of its own is down or busy
_RETRY_STATUSES = frozenset({502, 503, 504})
#: the options ``match.engine_options`` may hold
OPTIONS = ("username", "password", "ca_file", "verify", "direct_shards")
_FALSE = ("false", "0", "no")
_FORM = "application/x-www-form-urlencoded"
#: seconds a shard map is used before it is read again: a rebuild's new
#: collection is read within this long of the alias's move (at once when the
#: old one is deleted)
SHARD_MAP_TTL = 60.0
#: title words whose works-per-word count is remembered, at most, and for how long
DF_CACHE_WORDS = 200_000
DF_CACHE_TTL = 600.0


class SolrClient:
    """JSON requests to a SolrCloud cluster through whichever of its nodes answers."""

    def __init__(self, urls: Sequence[str], *, timeout: float = 10.0,
                 options: Mapping[str, str] | None = None,
                 policy: RetryPolicy | None = None) -> None:
        if not urls:
            raise ConfigError("match.engine = solr needs match.engine_urls: the base URLs of "
                              "the Solr nodes, e.g. [\"http://solr1:8983/solr\"]")
        options = dict(options or {})
        unknown = sorted(set(options) - set(OPTIONS))
        if unknown:
            raise ConfigError(f"match.engine_options: unknown {', '.join(unknown)} "
                              f"(known: {', '.join(OPTIONS)})")
        self.urls = [u.rstrip("/") for u in urls]
        self.timeout = timeout
        self.policy = policy or RetryPolicy(attempts=4, base=0.5, factor=2.0, cap=8.0,
                                            jitter=0.2)
        self._headers = {"Accept": "application/json", "User-Agent": "sandcrawler"}
        if options.get("username"):
            token = f"{options['username']}:{options.get('password', '')}".encode()
            self._headers["Authorization"] = "Basic " + base64.b64encode(token).decode()
        #: lookups go to one replica of each shard (``distrib=false``) and are
        #: merged here, instead of through a node that fans them out: a third of
        #: the work on Solr's side. Off (``direct_shards: "false"``) when the
        #: nodes' own addresses cannot be reached, only match.engine_urls (a proxy).
        self.direct_shards = options.get("direct_shards", "true").lower() not in _FALSE
        self._tls = tls_context(options.get("ca_file") or None,
                                options.get("verify", "true").lower() not in _FALSE) \
            if any(u.startswith("https:") for u in self.urls) else None
        #: keep-alive connections per node, and each base URL's node and path
        self._nodes: dict[tuple[str, str, int | None], NodeConnections] = {}
        self._bases: dict[str, tuple[NodeConnections, str]] = {}
        # requests spread over the nodes; a node that failed is asked last for a while
        self._turn = itertools.count()
        self._down_until: dict[str, float] = {}
        self._lock = threading.Lock()

    def close(self) -> None:
        for node in list(self._nodes.values()):
            node.close()
        self._nodes.clear()
        self._bases.clear()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _order(self, bases: Sequence[str] | None = None) -> list[str]:
        urls = list(bases or self.urls)
        start = next(self._turn) % len(urls)
        urls = urls[start:] + urls[:start]
        now = time.monotonic()
        with self._lock:
            return sorted(urls, key=lambda u: self._down_until.get(u, 0.0) > now)

    def _node(self, base: str) -> tuple[NodeConnections, str]:
        """The connections to ``base``'s node, and ``base``'s path: a core's URL is
        its node's and a path, and the node's connections serve its every core."""
        known = self._bases.get(base)
        if known is not None:
            return known
        with self._lock:  # made once, whichever thread asks first
            known = self._bases.get(base)
            if known is not None:
                return known
            origin, prefix = split_base(base)
            node = self._nodes.get(origin)
            if node is None:
                if self._tls is None and origin[0] == "https":
                    self._tls = tls_context(None, True)  # a core on an https node
                node = NodeConnections(origin, connect_timeout=min(self.timeout, 5.0),
                                       context=self._tls)
                self._nodes[origin] = node
            known = self._bases[base] = (node, prefix)
            return known

    def _mark_down(self, url: str) -> None:
        with self._lock:
            self._down_until[url] = time.monotonic() + 5.0

    def request(self, path: str, params: Mapping[str, Any] | None = None, *,
                body: bytes | None = None, content_type: str = "application/json",
                timeout: float | None = None,
                bases: Sequence[str] | None = None) -> dict[str, Any]:
        """``path`` (``/<collection>/select``, ``/admin/collections``…) on a node
        that answers; its JSON. SearchUnavailable when no node does, after the
        back-off; ConfigError for an answer that says the request is wrong
        (SolrMissing for a collection or core that is not there).
        ``timeout``: this request's read timeout, instead of the client's.
        ``bases``: the URLs to try in turn instead of the nodes' (the cores of
        one shard's replicas)."""
        query = urlencode({"wt": "json", **(params or {})}, doseq=True)
        if body is None:
            # the parameters as a form: a query's words stay out of the URL, which
            # the HTTP client would otherwise scan character by character
            target, body, content_type = path, query.encode(), _FORM
        else:
            target = f"{path}?{query}"
        headers = {**self._headers, "Content-Type": content_type}
        read = timeout or self.timeout
        backoff = Backoff(self.policy)
        failures: list[str] = []
        while True:
            for base in self._order(bases):
                try:
                    node, prefix = self._node(base)
                    # the whole answer within twice the read timeout
                    status, data = node.request(
                        "POST", prefix + target, body, headers, read_timeout=read,
                        deadline=time.monotonic() + 2 * read)
                except ssl.SSLCertVerificationError as e:
                    raise ConfigError(f"Solr at {base}: its TLS certificate is not trusted "
                                      f"({e.verify_message}): set match.engine_options "
                                      "ca_file to the CA that signed it") from None
                except TooSlow as e:
                    self._mark_down(base)
                    failures.append(f"{base}: {e}")
                    continue
                except (OSError, http.client.HTTPException) as e:
                    self._mark_down(base)
                    failures.append(f"{base}: {type(e).__name__}")
                    continue
                if status in _RETRY_STATUSES or status >= 500:
                    self._mark_down(base)
                    failures.append(f"{base}: HTTP {status} {_message(data)}")
                    continue
                if status != 200:
                    raise _refused(path, status, data)
                answer = _json(data)
                if not answer:
                    # not a JSON object (a proxy's page, a compressed or cut body):
                    # never read as an empty answer, which would be a false no-match
                    self._mark_down(base)
                    failures.append(f"{base}: an answer that is not Solr's JSON")
                    continue
                header = answer.get("responseHeader") or {}
                if header.get("partialResults"):
                    # a shard answered by no replica: nothing may be concluded
                    failures.append(f"{base}: partial results")
                    continue
                return answer
            delay = backoff.next_delay()
            if delay is None:
                tried = failures[-len(bases or self.urls):]
                raise SearchUnavailable(f"Solr: no node answered {path} ({'; '.join(tried)})")
            log.info("Solr %s: no node answered, again in %.1fs", path, delay)
            time.sleep(delay)

    def update(self, collection: str, payload: object, **params: Any) -> None:
        self.request(f"/{collection}/update", params, body=orjson.dumps(payload))

    def collections_api(self, action: str, **params: Any) -> dict[str, Any]:
        return self.request("/admin/collections", {"action": action, **params},
                            timeout=max(self.timeout, ADMIN_TIMEOUT)
                            if action in _ADMIN_CHANGES else None)


def _json(data: bytes) -> dict[str, Any]:
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def _message(data: bytes) -> str:
    error = _json(data).get("error") or {}
    msg = error.get("msg") if isinstance(error, dict) else None
    return str(msg)[:200] if msg else ""


class SolrMissing(ConfigError):
    """Solr has no such collection or core (HTTP 404): no index yet, or a
    collection deleted since the shard map was read (a rebuild moved the alias)."""


def _refused(path: str, status: int, data: bytes) -> ConfigError:
    msg = _message(data) or data[:200].decode("utf-8", "replace")
    if status == 404:
        return SolrMissing(f"Solr has no {path.split('/')[1]!r} (HTTP 404): build the index "
                           "with `sandcrawler match index --engine`")
    if status in (401, 403):
        return ConfigError(f"Solr refused {path} (HTTP {status}): check "
                           "match.engine_options username and password")
    if 300 <= status < 400:
        # never followed: a node's answer saying "go elsewhere" (perhaps to an
        # internal address) is a wrong URL in the settings
        return ConfigError(f"Solr answered {path} with a redirect (HTTP {status}), which is "
                           "not followed: match.engine_urls must be the nodes' own base URLs, "
                           "e.g. https://solr1:8983/solr")
    return ConfigError(f"Solr refused {path} (HTTP {status}): {msg or 'no message'}")


def document(rec: CatalogRecord) -> dict[str, Any]:
    """A work's Solr document."""
    doc: dict[str, Any] = {"id": rec.doi, "kind": "work", "rec": rec.dumps().decode(),
                           "t": rec.index_text(), "a": rec.index_names()}
    if rec.volume and rec.page:
        doc["loc"] = f"{rec.volume}\t{rec.page}"
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
        # the words the embedded index would ask, chosen by the same counts:
        # the same candidates on both (an OR of every word ranks common words'
        # works among the rare ones' and finds others)
        unique = list(dict.fromkeys(w for w in words if w))
        plan = choose_words(unique, self.document_frequency(unique))
        if plan.all_of:
            found = self._select("t:(" + " AND ".join(_phrase(w) for w in plan.all_of) + ")",
                                 limit)
            if found:
                return found
        if not plan.any_of:
            return []
        return self._select("t:(" + " OR ".join(_phrase(w) for w in plan.any_of) + ")", limit)

    def by_names(self, surnames: Sequence[str], limit: int) -> list[CatalogRecord]:
        names = list(dict.fromkeys(n for n in surnames if n))[:3]
        if len(names) < 2:
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


# --- collections and aliases --------------------------------------------------------------


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


# --- the builders of match/engines.py -----------------------------------------------------


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
