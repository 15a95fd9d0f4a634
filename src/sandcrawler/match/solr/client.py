"""Solr's HTTP API as the index and the admin call it: a node that fails is passed
over for the next, a round that fails everywhere is retried on the shared
back-off, and then the outage is raised (docs/matching.md, "On a search engine")."""

from __future__ import annotations

import base64
import http.client
import itertools
import logging
import ssl
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any, Self
from urllib.parse import urlencode

import orjson

from sandcrawler.core.errors import ConfigError, SearchUnavailable
from sandcrawler.core.retry import Backoff, RetryPolicy
from sandcrawler.match.solr.connections import NodeConnections, TooSlow, split_base, tls_context

log = logging.getLogger(__name__)

#: seconds a Collections API change may take (CREATE, ADDREPLICA, DELETE wait for
#: the cluster; one cut short by the per-request timeout would be sent again to
#: another node and made twice)
ADMIN_TIMEOUT = 180.0
_ADMIN_CHANGES = frozenset({"CREATE", "ADDREPLICA", "DELETE", "CREATEALIAS"})
#: what the Solr server answers when one of its own is down or busy
_RETRY_STATUSES = frozenset({502, 503, 504})
#: the options ``match.engine_options`` may hold
OPTIONS = ("username", "password", "ca_file", "verify", "direct_shards")
_FALSE = ("false", "0", "no")
_FORM = "application/x-www-form-urlencoded"


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
