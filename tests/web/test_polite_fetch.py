"""Polite fetching against real loopback servers: the per-host gate (concurrency,
delay between starts, back-off on 429/503), the User-Agent, robots.txt, the
blocklist and the crawl policy.

Timings are measured at the server and asserted on their lower bounds only."""

from __future__ import annotations

import gc
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from email.utils import formatdate
from itertools import pairwise

import pytest

from sandcrawler.app.services import Services
from sandcrawler.app.settings import load_settings
from sandcrawler.core.errors import ConfigError, RecordError
from sandcrawler.records.statuses import IngestFileStatus
from sandcrawler.version import __version__
from sandcrawler.web.blocklist import UrlBlocklist
from sandcrawler.web.http.fetch import HttpFetcher
from sandcrawler.web.http.hosts import HostGate
from sandcrawler.web.policy import CrawlPolicy
from sandcrawler.web.robots import MAX_BYTES, RobotsRules
from sandcrawler_testkit.sites import Answer, SiteServer

HOSTS = ("a.example", "b.example", "web.archive.org")


@pytest.fixture
def site() -> Iterator[SiteServer]:
    with SiteServer() as server:
        yield server


def fetcher_for(site: SiteServer, gate: HostGate | None = None, **kw: object) -> HttpFetcher:
    return HttpFetcher(timeout=10, routes=site.routes(*HOSTS), gate=gate, **kw)  # type: ignore[arg-type]


def get(fetcher: HttpFetcher, url: str) -> tuple[int, bytes]:
    opened = fetcher.open(url)
    try:
        return opened.status, opened.response.read()
    finally:
        opened.close()


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- the per-host gate ---------------------------------------------------------------


@pytest.mark.parametrize("limit", [1, 2, 3])
def test_concurrency_per_host_never_exceeds_the_limit(site: SiteServer, limit: int) -> None:
    site.hold = 0.15
    fetcher = fetcher_for(site, HostGate(concurrency=limit, delay=0))
    urls = [f"https://{host}/page/{i}" for i in range(8) for host in ("a.example", "b.example")]
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda u: get(fetcher, u), urls))
    assert {status for status, _ in answers} == {200}
    assert site.max_in_flight == {"a.example": limit, "b.example": limit}


def test_without_a_gate_requests_overlap(site: SiteServer) -> None:
    """The measurement above can see more than the limit."""
    site.hold = 0.15
    fetcher = fetcher_for(site)
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda i: get(fetcher, f"https://a.example/{i}"), range(8)))
    assert site.max_in_flight["a.example"] > 3


def test_delay_between_starts_to_one_host(site: SiteServer) -> None:
    delay = 0.2
    fetcher = fetcher_for(site, HostGate(concurrency=4, delay=delay))
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda i: get(fetcher, f"https://a.example/{i}"), range(6)))
    starts = sorted(s.start for s in site.seen("a.example"))
    assert len(starts) == 6
    gaps = [b - a for a, b in pairwise(starts)]
    assert min(gaps) >= delay * 0.75  # measured at the server: a little jitter allowed


def test_every_redirect_hop_passes_the_gate(site: SiteServer) -> None:
    delay = 0.2
    site.answer("a.example", "/start", Answer(302, b"", {"Location": "/middle"}))
    site.answer("a.example", "/middle", Answer(302, b"", {"Location": "/end"}))
    fetcher = fetcher_for(site, HostGate(concurrency=2, delay=delay))
    assert get(fetcher, "https://a.example/start") == (200, b"ok /end")
    starts = [s.start for s in site.seen("a.example")]
    assert [s.path for s in site.seen("a.example")] == ["/start", "/middle", "/end"]
    assert min(b - a for a, b in pairwise(starts)) >= delay * 0.75


def test_retry_after_slows_the_host_and_the_request_succeeds(site: SiteServer) -> None:
    site.answer("a.example", "/busy", Answer(429, b"slow down", {"Retry-After": "1"}),
                Answer(200, b"at last"))
    gate = HostGate(concurrency=2, delay=0)
    fetcher = fetcher_for(site, gate, retry_after_max=10)
    with ThreadPoolExecutor(2) as pool:
        busy = pool.submit(get, fetcher, "https://a.example/busy")
        # the 429 has reached the client (not only the server) and slowed the host
        deadline = time.monotonic() + 5
        while not gate.backed_off_for("a.example") and time.monotonic() < deadline:
            time.sleep(0.005)
        # the host is backed off now: a's next request waits, b's does not
        other = pool.submit(get, fetcher, "https://a.example/other")
        assert get(fetcher, "https://b.example/fine") == (200, b"ok /fine")
        assert busy.result() == (200, b"at last")
        assert other.result() == (200, b"ok /other")
    first, retried = site.seen("a.example", "/busy")
    (b,) = site.seen("b.example")
    (other_seen,) = site.seen("a.example", "/other")
    assert b.start < retried.start  # b.example was not slowed
    assert retried.start - first.end >= 0.9
    assert other_seen.start - first.end >= 0.9  # nor did another request to a.example start


def test_retry_after_as_an_http_date(site: SiteServer) -> None:
    when = formatdate(timeval=time.time() + 2, usegmt=True)
    site.answer("a.example", "/busy", Answer(503, b"", {"Retry-After": when}), Answer(200))
    fetcher = fetcher_for(site, HostGate(concurrency=1, delay=0), retry_after_max=10)
    assert get(fetcher, "https://a.example/busy")[0] == 200
    first, retried = site.seen("a.example", "/busy")
    assert retried.start - first.end >= 0.5  # the date has a resolution of one second


@pytest.mark.parametrize("retry_after", ["30", formatdate(4_102_444_800, usegmt=True)])
def test_retry_after_beyond_the_maximum_returns_the_answer(site: SiteServer,
                                                           retry_after: str) -> None:
    site.answer("a.example", "/busy", Answer(429, b"go away", {"Retry-After": retry_after}))
    gate = HostGate(concurrency=2, delay=0)
    fetcher = fetcher_for(site, gate, retry_after_max=2)
    assert get(fetcher, "https://a.example/busy") == (429, b"go away")
    assert len(site.seen("a.example", "/busy")) == 1
    assert gate.backed_off_for("a.example") > 1  # slowed, for at most retry_after_max
    assert gate.backed_off_for("b.example") == 0


def test_busy_without_retry_after_backs_off_exponentially(site: SiteServer) -> None:
    site.answer("a.example", "/busy", Answer(503), Answer(429), Answer(200, b"done"))
    fetcher = fetcher_for(site, HostGate(concurrency=1, delay=0), backoff=0.1, retries=3)
    assert get(fetcher, "https://a.example/busy") == (200, b"done")
    one, two, three = site.seen("a.example", "/busy")
    assert two.start - one.end >= 0.2 * 0.9  # twice backoff, then doubled
    assert three.start - two.end >= 0.4 * 0.9


@pytest.mark.parametrize("gated", [True, False])
@pytest.mark.parametrize("status", [429, 502, 503, 504])
def test_still_busy_after_the_retries_is_returned(site: SiteServer, gated: bool,
                                                  status: int) -> None:
    site.answer("a.example", "/busy", Answer(status, b"down", {"Retry-After": "0"}))
    gate = HostGate(concurrency=1, delay=0) if gated else None
    fetcher = fetcher_for(site, gate, retries=2)
    assert get(fetcher, "https://a.example/busy") == (status, b"down")
    assert len(site.seen("a.example", "/busy")) == 3


def test_gateway_errors_do_not_slow_the_host(site: SiteServer) -> None:
    site.answer("a.example", "/x", Answer(502, b"", {"Retry-After": "5"}))
    gate = HostGate(concurrency=1, delay=0)
    assert get(fetcher_for(site, gate, retries=0), "https://a.example/x")[0] == 502
    assert gate.backed_off_for("a.example") == 0


def test_a_dropped_response_gives_its_slot_back(site: SiteServer) -> None:
    fetcher = fetcher_for(site, HostGate(concurrency=1, delay=0))
    opened = fetcher.open("https://a.example/one")
    del opened  # never closed
    gc.collect()
    done = threading.Event()
    threading.Thread(target=lambda: (get(fetcher, "https://a.example/two"), done.set()),
                     daemon=True).start()
    assert done.wait(30), "the host stayed full"


# --- User-Agent ----------------------------------------------------------------------


@pytest.mark.parametrize(("kw", "header"), [
    ({}, f"sandcrawler/{__version__}"),
    ({"user_agent": "examplebot", "contact": "mailto:ops@example.org"},
     f"examplebot/{__version__} (+mailto:ops@example.org)"),
])
def test_user_agent_the_server_receives(site: SiteServer, kw: dict[str, str],
                                        header: str) -> None:
    fetcher = fetcher_for(site, **kw)
    opened = fetcher.open("https://a.example/x")
    opened.close()
    (seen,) = site.seen("a.example")
    assert seen.headers["User-Agent"] == header
    assert ("User-Agent", header) in opened.final.request_headers  # what a WARC records
    assert seen.headers["Accept-Encoding"] == "identity"


def test_no_contact_is_said_once_for_a_host_beyond_loopback(
        site: SiteServer, caplog: pytest.LogCaptureFixture) -> None:
    """Routed origins and loopback are the operator's own: no warning; the first
    request elsewhere (here a name that does not resolve) warns once per fetcher."""
    fetcher = fetcher_for(site, retries=0)
    with caplog.at_level("WARNING", logger="sandcrawler.web.http.fetch"):
        get(fetcher, "https://a.example/x")  # routed to the loopback site
        for url in ("http://127.0.0.1:9/", "http://localhost:9/",
                    "http://no-such-host.invalid/", "http://other.invalid/"):
            with pytest.raises(RecordError):
                get(fetcher, url)
    warnings = [r.getMessage() for r in caplog.records if "crawl.contact" in r.getMessage()]
    assert len(warnings) == 1 and "no-such-host.invalid" in warnings[0]
    caplog.clear()
    with (caplog.at_level("WARNING", logger="sandcrawler.web.http.fetch"),
          pytest.raises(RecordError)):
        get(fetcher_for(site, retries=0, contact="mailto:ops@example.org"),
            "http://no-such-host.invalid/")
    assert not [r for r in caplog.records if "crawl.contact" in r.getMessage()]


# --- robots.txt ----------------------------------------------------------------------


def robots_for(site: SiteServer, **kw: object) -> tuple[RobotsRules, HostGate]:
    gate = HostGate(concurrency=2, delay=0)
    fetcher = fetcher_for(site, gate, backoff=0.01)
    return RobotsRules(fetcher, gate=gate, **kw), gate  # type: ignore[arg-type]


def test_robots_disallow_and_allow(site: SiteServer) -> None:
    site.robots("a.example", "User-agent: *\nDisallow: /private\nAllow: /private/open\n\n"
                             "User-agent: otherbot\nDisallow: /\n")
    robots, _ = robots_for(site)
    assert robots.reason("https://a.example/private/x") == (
        "https://a.example/robots.txt disallows /private/x for sandcrawler")
    assert robots.allowed("https://a.example/private/open/x")
    assert robots.allowed("https://a.example/public")
    assert not robots.allowed("https://A.example/private")
    assert len(site.seen("a.example", "/robots.txt")) == 1  # fetched once per origin


def test_robots_group_for_our_agent(site: SiteServer) -> None:
    site.robots("a.example", "User-agent: *\nAllow: /\n\nUser-agent: examplebot\nDisallow: /\n")
    robots, _ = robots_for(site, agent="examplebot")
    assert not robots.allowed("https://a.example/anything")
    robots, _ = robots_for(site, agent="sandcrawler")
    assert robots.allowed("https://a.example/anything")


@pytest.mark.parametrize(("status", "allowed", "why"), [
    (404, True, None),
    (403, True, None),  # RFC 9309: any 4xx is "unavailable"
    (500, False, "answered HTTP 500"),
    (503, False, "answered HTTP 503"),
    (429, False, "answered HTTP 429"),
])
def test_robots_status(site: SiteServer, status: int, allowed: bool, why: str | None) -> None:
    site.robots("a.example", "User-agent: *\nDisallow: /\n", status=status)
    robots, _ = robots_for(site)
    reason = robots.reason("https://a.example/paper.pdf")
    assert (reason is None) == allowed
    if why:
        assert why in reason and "whole site is disallowed" in reason  # type: ignore[operator]


def test_robots_unreachable_disallows_the_site() -> None:
    gate = HostGate(concurrency=2, delay=0)
    fetcher = HttpFetcher(timeout=2, retries=0, gate=gate,
                          routes={"https://down.example": f"http://127.0.0.1:{closed_port()}"})
    robots = RobotsRules(fetcher, gate=gate)
    reason = robots.reason("https://down.example/x")
    assert reason is not None and "does not answer" in reason and "https://down.example" in reason
    # nothing is fetched; the record says the host does not answer
    with pytest.raises(RecordError) as e:
        CrawlPolicy(UrlBlocklist(), robots).check("https://down.example/x")
    assert e.value.status == "fetch-error"


def test_robots_redirect_is_followed(site: SiteServer) -> None:
    site.answer("a.example", "/robots.txt", Answer(301, b"", {"Location": "https://b.example/r"}))
    site.answer("b.example", "/r", Answer(200, b"User-agent: *\nDisallow: /x\n"))
    robots, _ = robots_for(site)
    assert not robots.allowed("https://a.example/x/1")
    assert robots.allowed("https://a.example/y")


def test_robots_redirect_loop_is_unavailable(site: SiteServer) -> None:
    site.answer("a.example", "/robots.txt", Answer(302, b"", {"Location": "/robots.txt"}))
    robots, _ = robots_for(site)
    assert robots.allowed("https://a.example/x")


def test_huge_robots_is_read_up_to_500_kib(site: SiteServer) -> None:
    head = b"User-agent: *\nDisallow: /early\n"
    filler = b"# " + b"x" * 98 + b"\n"
    body = head + filler * (MAX_BYTES // len(filler)) + b"Disallow: /late\n"
    assert len(body) > MAX_BYTES
    site.robots("a.example", body)
    robots, _ = robots_for(site)
    assert not robots.allowed("https://a.example/early/1")
    assert robots.allowed("https://a.example/late/1")


@pytest.mark.parametrize(("text", "delay"), [
    ("User-agent: *\nCrawl-delay: 2\n", 2.0),
    ("User-agent: *\nCrawl-delay: 3600\n", 30.0),  # capped
    ("User-agent: *\nRequest-rate: 1/5s\n", 5.0),
    ("User-agent: *\nCrawl-delay: 0.01\n", 0.25),  # never below the gate's own
    ("User-agent: *\nDisallow:\n", 0.25),
])
def test_crawl_delay_raises_the_hosts_delay(site: SiteServer, text: str, delay: float) -> None:
    site.robots("a.example", text)
    gate = HostGate(concurrency=2, delay=0.25, max_delay=30)
    robots = RobotsRules(fetcher_for(site), gate=gate)
    assert robots.allowed("https://a.example/x")
    assert gate.delay_for("a.example") == delay
    assert gate.delay_for("b.example") == 0.25


def test_robots_ignore_hosts_are_not_asked(site: SiteServer) -> None:
    site.robots("a.example", "User-agent: *\nDisallow: /\n")
    robots, _ = robots_for(site, ignore_hosts=["A.Example"])
    assert robots.allowed("https://a.example/x")
    assert not site.seen("a.example", "/robots.txt")


def test_robots_cache_expires(site: SiteServer) -> None:
    site.robots("a.example", "User-agent: *\nDisallow: /\n")
    robots, _ = robots_for(site, ttl=0)
    assert not robots.allowed("https://a.example/x")
    site.robots("a.example", "User-agent: *\nAllow: /\n")
    assert robots.allowed("https://a.example/x")
    assert len(site.seen("a.example", "/robots.txt")) == 2


def test_robots_fetched_once_by_many_threads(site: SiteServer) -> None:
    site.hold = 0.1
    site.robots("a.example", "User-agent: *\nDisallow: /no\n")
    robots, _ = robots_for(site)
    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(robots.allowed, [f"https://a.example/no/{i}" for i in range(8)]))
    assert got == [False] * 8
    assert len(site.seen("a.example", "/robots.txt")) == 1


# --- blocklist and policy -------------------------------------------------------------


BLOCKLIST = UrlBlocklist(["archive.org", "*.Example.NET", "jstor.org."],
                         [r"/cookieAbsent", r"://[^/]*/(?:action/)?login\b"])


@pytest.mark.parametrize(("url", "why"), [
    ("https://archive.org/details/x", "host archive.org is archive.org"),
    ("https://web.archive.org/web/2020/x", "host web.archive.org is a subdomain of archive.org"),
    ("http://WWW.JSTOR.ORG:8080/stable/1", "host www.jstor.org is a subdomain of jstor.org"),
    ("https://cdn.example.net/a.pdf", "host cdn.example.net is a subdomain of example.net"),
    ("https://pub.example.com/cookieAbsent?x", "matches '/cookieAbsent'"),
    ("https://pub.example.com/action/login?redirect=1", "matches"),
    ("https://notarchive.org/x", None),
    ("https://archive.org.evil.example/x", None),
    ("https://pub.example.com/loginpage", None),
    ("https://pub.example.com/paper.pdf", None),
])
def test_blocklist(url: str, why: str | None) -> None:
    reason = BLOCKLIST.reason(url)
    if why is None:
        assert reason is None
    else:
        assert reason is not None and why in reason


def test_bad_blocklist_pattern_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match=r"crawl\.blocklist_patterns: '\(' is not a regular"):
        UrlBlocklist([], ["("])
    monkeypatch.setenv("SANDCRAWLER_CRAWL_BLOCKLIST_PATTERNS", '["ok", "[a-"]')
    with pytest.raises(ConfigError) as e:
        load_settings()
    assert str(e.value).startswith("invalid configuration: crawl.blocklist_patterns")
    assert "'[a-' is not a regular expression" in str(e.value)
    assert len(str(e.value).splitlines()) == 1


def test_policy_statuses(site: SiteServer) -> None:
    site.robots("a.example", "User-agent: *\nDisallow: /private\n")
    robots, _ = robots_for(site)
    policy = CrawlPolicy(BLOCKLIST, robots)
    policy.check("https://a.example/public")
    with pytest.raises(RecordError) as e:
        policy.check("https://web.archive.org/web/1/x")
    assert e.value.status == IngestFileStatus.SKIP_URL_BLOCKLIST
    assert "web.archive.org" in str(e.value)
    with pytest.raises(RecordError) as e:
        policy.check("https://a.example/private/1")
    assert e.value.status == IngestFileStatus.ROBOTS_DISALLOWED
    assert "robots.txt disallows /private/1" in str(e.value)
    assert not site.seen("web.archive.org")  # a blocklisted host's robots.txt is not asked


def test_a_redirect_to_a_blocklisted_url_is_refused(site: SiteServer) -> None:
    site.answer("a.example", "/paper", Answer(302, b"", {
        "Location": "https://web.archive.org/web/2020/https://a.example/paper"}))
    policy = CrawlPolicy(BLOCKLIST, None)
    fetcher = fetcher_for(site)
    with pytest.raises(RecordError) as e:
        fetcher.open("https://a.example/paper", check=policy.check)
    assert e.value.status == IngestFileStatus.SKIP_URL_BLOCKLIST
    assert [s.path for s in site.seen()] == ["/paper"]  # the target never requested


def test_check_refuses_the_first_url_before_any_request(site: SiteServer) -> None:
    fetcher = fetcher_for(site)
    with pytest.raises(RecordError):
        fetcher.open("https://web.archive.org/x", check=CrawlPolicy(BLOCKLIST).check)
    assert not site.seen()


# --- wiring ----------------------------------------------------------------------------


def test_services_build_the_gate_and_policy_from_crawl_settings(site: SiteServer) -> None:
    settings = load_settings(http_routes=site.routes(*HOSTS), crawl_host_concurrency=3,
                             crawl_host_delay=0.5, crawl_contact="mailto:ops@example.org",
                             crawl_user_agent="examplebot",
                             crawl_robots_ignore_hosts=["b.example"],
                             crawl_blocklist_domains=["c.example"])
    site.robots("a.example", "User-agent: examplebot\nDisallow: /x\n")
    site.robots("b.example", "User-agent: *\nDisallow: /\n")
    with Services(settings) as services:
        gate = services.fetcher.gate
        assert gate is services.host_gate
        assert (gate.concurrency, gate.delay) == (3, 0.5)
        assert services.fetcher.user_agent == (
            f"examplebot/{__version__} (+mailto:ops@example.org)")
        policy = services.crawl_policy
        with pytest.raises(RecordError) as e:
            policy.check("https://a.example/x/1")
        assert e.value.status == IngestFileStatus.ROBOTS_DISALLOWED
        policy.check("https://b.example/anything")  # ignored host
        with pytest.raises(RecordError) as e:
            policy.check("https://www.c.example/")
        assert e.value.status == IngestFileStatus.SKIP_URL_BLOCKLIST
    (robots,) = site.seen("a.example", "/robots.txt")
    assert robots.headers["User-Agent"].startswith("examplebot/")


def test_robots_off_in_settings() -> None:
    with Services(load_settings(crawl_robots=False)) as services:
        assert services.crawl_policy.robots is None
