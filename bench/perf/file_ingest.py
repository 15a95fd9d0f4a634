"""File ingest of ``--requests`` requests (default 1,000) against loopback publisher sites.

Input, generated here: one ingest request per made-up article,
``{"ingest_type": "pdf", "base_url": "https://doi.org/10.5555/bench.<i>", ...}``. The DOI
resolver answers 302 to the article's landing page; the landing page links one PDF. The
landing pages are the real ones of ``../shared/data/sandcrawler-fixtures`` (PLOS ONE,
PeerJ, eLife: the three with a PDF link) with the article's host and identifiers
substituted, so every request has its own page and its own PDF URL, spread over five
hosts (two made-up hosts per PLOS and PeerJ template, eLife on its own host, where its
platform rule applies), each with a robots.txt allowing everything. The PDFs are distinct
small PDFs (``sandcrawler_testkit.pdfs.make_pdf``, ~1 KB, two pages of text): distinct
payloads, so no WARC revisit records. Per request: 3 URLs (resolver, page, PDF), on
average 213 KB of HTML and 1 KB of PDF.

The server: ``--server fast`` (default) serves pre-built responses (status line,
headers and body in one write) from a dict, ``http.server`` with Nagle off, in
``--server-procs`` forked processes (default 1) sharing one listening socket;
``--server testkit`` is the test kit's ``WebSite`` (same answers, headers and body
written separately), in one forked process. Either way the server is not in this
process (no GIL shared with the in-process measures); its CPU is read from ``/proc``.

Measured, each round with fresh data directories, in this order:

  (a) plain fetch  the same 3 URLs per request in this process: urllib3 straight
                   (routes as ``http.routes`` does: loopback URL, ``Host`` header), the
                   resolver's redirect followed, bodies read into memory, the PDF URL
                   known beforehand (no link finding); and ``HttpFetcher.open`` + read
                   (the product's fetcher, no host gate) for the same URLs;
  (b) crawl        ``Crawler.crawl`` per request, in ``WarcSession`` batches of 20 (as
                   ``ingest requests`` batches), each committed: robots.txt, host gate
                   (``crawl_host_delay=0``), fetch, WARC writing, CDX rows, HTML parsing
                   and link finding; PDF processing excluded. Services as the command
                   builds them (``Services(load_settings(...))``), SQLite and the local
                   store (fsync on) in a fresh data directory. Then (b2) the same crawls
                   again in the same data directory: replayed from the web archive;
  (c) command      ``python -m sandcrawler ingest requests -j J`` for each ``--jobs``
                   (default 1 and 4), fresh data directory, PDF processing included;
  (d) second runs  on the data directory of the first ``--jobs`` value's run: the same
                   command again without persisting (every URL replayed from the web
                   archive), then ``persist ingest-file`` of the first run's results and
                   the command again (recorded hits: ``success-existing``, no crawl).

Figures: requests/s = requests / wall seconds (a command's wall includes its start-up;
the start-up of ``ingest requests`` on an empty file is measured too, and rates net of
it are given). Server requests: what the server answered during the run, robots.txt
apart. Medians over ``--rounds``. With ``--profile DIR``, one more untimed (b), (b2) and
(d) under cProfile, the stats in DIR and a summary by category printed.

Run:  python bench/perf/file_ingest.py [--requests 1000] [--rounds 3] [--jobs 1 4]
                                  [--server fast|testkit] [--server-procs 1]
                                  [--profile DIR] [--skip-commands] [--out DIR]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import multiprocessing
import os
import pstats
import re
import shutil
import socket
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for _common.py
import orjson
from _common import (
    FIXTURES,
    arg_parser,
    bench_env,
    median,
    print_header,
    rate,
    sandcrawler,
    skip,
    work_dir,
)

BATCH = 20  # ingest requests' batch size: one WARC file per batch
RESOLVER = "doi.org"
ROBOTS = b"User-agent: *\nAllow: /\n"


# --- the sites -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Template:
    file: str
    hosts: tuple[str, ...]
    #: the original page's URL and its PDF link (as the crawler finds it)
    url: str
    pdf: str
    #: the original's host and identifiers, replaced by the article's
    subs: Callable[[str, int], list[tuple[str, str]]]


def _plos(host: str, n: int) -> list[tuple[str, str]]:
    return [("journals.plos.org", host), ("pone.0213978", f"pone.{n:07d}")]


def _peerj(host: str, n: int) -> list[tuple[str, str]]:
    return [("peerj.com", host), ("articles/4375", f"articles/{n}"),
            ("peerj.4375", f"peerj.{n}")]


def _elife(host: str, n: int) -> list[tuple[str, str]]:
    return [("44753", str(n))]


TEMPLATES = (
    Template("plos_one_article.html", ("journals.plos-a.example", "journals.plos-b.example"),
             "https://journals.plos.org/plosone/article?id=10.1371/journal.pone.0213978",
             "https://journals.plos.org/plosone/article/file?id=10.1371/journal.pone.0213978"
             "&type=printable", _plos),
    Template("peerj_oa_article.html", ("peerj-a.example", "peerj-b.example"),
             "https://peerj.com/articles/4375",
             "https://peerj.com/articles/4375.pdf", _peerj),
    Template("elife_article.html", ("elifesciences.org",),
             "https://elifesciences.org/articles/44753",
             "https://elifesciences.org/download/aHR0cHM6Ly9jZG4uZWxpZmVzY2llbmNlcy5vcmcvYXJ0"
             "aWNsZXMvNDQ3NTMvZWxpZmUtNDQ3NTMtdjIucGRm/elife-44753-v2.pdf"
             "?_hash=CfyqOqVryCR4OjcMTfcdpeIWAGZznmh9jXksYKYChCw%3D", _elife),
)


@dataclass
class Article:
    doi: str
    base_url: str
    landing: str
    pdf: str


@dataclass
class Corpus:
    articles: list[Article]
    #: absolute URL -> (status, content type, body, extra headers)
    answers: dict[str, tuple[int, str, bytes, dict[str, str]]] = field(default_factory=dict)

    @property
    def origins(self) -> list[str]:
        hosts = {_host_path(u)[0] for u in self.answers}
        return sorted(f"https://{h}" for h in hosts)

    def html_bytes(self) -> int:
        return sum(len(a[2]) for a in self.answers.values() if a[1].startswith("text/html"))

    def pdf_bytes(self) -> int:
        return sum(len(a[2]) for a in self.answers.values() if a[1] == "application/pdf")


def _host_path(url: str) -> tuple[str, str]:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return parts.netloc.lower(), (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def build_corpus(n: int) -> Corpus:
    from sandcrawler_testkit.pdfs import make_pdf

    slots = [(t, h) for t in TEMPLATES for h in t.hosts]
    html = {t.file: (FIXTURES / t.file).read_text(encoding="utf-8") for t in TEMPLATES}
    corpus = Corpus([])
    for i in range(n):
        template, host = slots[i % len(slots)]
        number = 100_000 + i
        subs = template.subs(host, number)

        def sub(text: str, subs: list[tuple[str, str]] = subs) -> str:
            for old, new in subs:
                text = text.replace(old, new)
            return text

        doi = f"10.5555/bench.{i:06d}"
        article = Article(doi, f"https://{RESOLVER}/{doi}", sub(template.url), sub(template.pdf))
        corpus.articles.append(article)
        corpus.answers[article.base_url] = (302, "text/html", b"", {"Location": article.landing})
        corpus.answers[article.landing] = (200, "text/html; charset=utf-8",
                                           sub(html[template.file]).encode(), {})
        pdf = make_pdf([f"Bench article {i}: made up for the file ingest benchmark.",
                        f"Page two of article {doi}."], title=f"Bench article {i}")
        corpus.answers[article.pdf] = (200, "application/pdf", pdf, {})
    for origin in corpus.origins:
        corpus.answers[f"{origin}/robots.txt"] = (200, "text/plain", ROBOTS, {})
    return corpus


def check_corpus(corpus: Corpus) -> None:
    """Set-up check: the crawler's link finding picks each template's PDF URL."""
    from sandcrawler.web.html.landing import parse_html

    for article in corpus.articles[: len(TEMPLATES) * 2]:
        body = corpus.answers[article.landing][2]
        links = [link.url for link in parse_html(body, article.landing).fulltext_links("pdf")]
        if not links or links[0] != article.pdf:
            sys.exit(f"set-up: {article.landing} links {links[:1]}, not {article.pdf}")


# --- the loopback server, in its own process(es) ------------------------------------------------


REASONS = {200: "OK", 302: "Found", 404: "Not Found"}


def _prebuilt(corpus: Corpus) -> dict[tuple[str, str], bytes]:
    out = {}
    for url, (status, ctype, body, headers) in corpus.answers.items():
        head = [f"HTTP/1.1 {status} {REASONS[status]}", "Server: bench",
                f"Content-Type: {ctype}", f"Content-Length: {len(body)}"]
        head += [f"{k}: {v}" for k, v in headers.items()]
        out[_host_path(url)] = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body
    return out


class _Counter:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.requests = 0
        self.robots = 0

    def add(self, path: str) -> None:
        with self.lock:
            if path == "/robots.txt":
                self.robots += 1
            else:
                self.requests += 1


def _fast_handler(responses: dict[tuple[str, str], bytes], counter: _Counter,
                  latency: float = 0.0) -> type[BaseHTTPRequestHandler]:
    not_found = (b"HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\n"
                 b"Content-Length: 9\r\n\r\nNot Found")

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            counter.add(self.path)
            host = (self.headers.get("Host") or "").lower()
            if latency:  # a real site's time to first byte
                time.sleep(latency)
            self.wfile.write(responses.get((host, self.path), not_found))

    return Handler


def _testkit_handler(corpus: Corpus, counter: _Counter) -> type[BaseHTTPRequestHandler]:
    from sandcrawler_testkit.publishers import Answer, WebSite

    site = WebSite()
    for url, (status, ctype, body, headers) in corpus.answers.items():
        site.add(url, Answer(status, body, content_type=ctype, headers=headers))
    base = site._handler()

    class Handler(base):  # type: ignore[misc, valid-type]
        def do_GET(self) -> None:
            counter.add(self.path)
            super().do_GET()

    return Handler


def _serve(server: ThreadingHTTPServer, counter: _Counter, conn: Any) -> None:
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                     daemon=True).start()
    while True:
        try:
            msg = conn.recv()
        except EOFError:
            return
        if msg == "count":
            with counter.lock:
                conn.send((counter.requests, counter.robots))
        else:
            return


class Server:
    """The loopback server in ``procs`` forked processes sharing one listening socket."""

    def __init__(self, corpus: Corpus, kind: str, procs: int, latency: float = 0.0) -> None:
        counter = _Counter()
        handler = (_fast_handler(_prebuilt(corpus), counter, latency) if kind == "fast"
                   else _testkit_handler(corpus, counter))
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        server.daemon_threads = True
        server.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.url = f"http://127.0.0.1:{server.server_address[1]}"
        ctx = multiprocessing.get_context("fork")
        self.conns, self.procs = [], []
        for _ in range(procs):
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_serve, args=(server, counter, child), daemon=True)
            proc.start()
            self.conns.append(parent)
            self.procs.append(proc)
        server.socket.close()  # served by the children only
        self.origins = corpus.origins

    def routes(self) -> dict[str, str]:
        return dict.fromkeys(self.origins, self.url)

    def counts(self) -> tuple[int, int]:
        """Requests answered so far (robots.txt apart), and robots.txt requests."""
        total = [0, 0]
        for conn in self.conns:
            conn.send("count")
            r, b = conn.recv()
            total[0] += r
            total[1] += b
        return total[0], total[1]

    def cpu(self) -> float:
        tick = os.sysconf("SC_CLK_TCK")
        ticks = 0
        for proc in self.procs:
            fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
            ticks += int(fields[11]) + int(fields[12])
        return ticks / tick

    def close(self) -> None:
        for conn, proc in zip(self.conns, self.procs, strict=True):
            conn.send("stop")
            proc.join(5)
            if proc.is_alive():
                proc.terminate()


@dataclass
class Measure:
    """One timed piece: wall and CPU of this process, the server's CPU and requests."""

    wall: float
    cpu: float
    server_cpu: float
    requests: int
    robots: int
    statuses: Counter[str] = field(default_factory=Counter)


def measured(server: Server, run: Callable[[], Counter[str] | None]) -> Measure:
    r0, b0 = server.counts()
    s0 = server.cpu()
    c0 = time.process_time()
    t0 = time.perf_counter()
    statuses = run()
    wall = time.perf_counter() - t0
    cpu = time.process_time() - c0
    time.sleep(0.05)
    r1, b1 = server.counts()
    return Measure(wall, cpu, server.cpu() - s0, r1 - r0, b1 - b0, statuses or Counter())


# --- (a) plain fetch ---------------------------------------------------------------------------


def plain_urllib3(corpus: Corpus, routes: dict[str, str]) -> Counter[str]:
    import urllib3

    http = urllib3.PoolManager(maxsize=4)
    headers = {"User-Agent": "sandcrawler-bench (plain fetch)", "Accept": "*/*",
               "Accept-Encoding": "identity"}

    def get(url: str) -> urllib3.BaseHTTPResponse:
        while True:
            host, path = _host_path(url)
            target = routes[f"https://{host}"] + path
            resp = http.request("GET", target, headers={**headers, "Host": host},
                                redirect=False)
            if resp.status in (301, 302, 303, 307, 308):
                url = resp.headers["Location"]
                continue
            return resp

    out: Counter[str] = Counter()
    for article in corpus.articles:
        page = get(article.base_url)
        pdf = get(article.pdf)
        ok = page.status == 200 and len(page.data) > 0 and pdf.data.startswith(b"%PDF")
        out["ok" if ok else "failed"] += 1
    http.clear()
    return out


def plain_fetcher(corpus: Corpus, routes: dict[str, str]) -> Counter[str]:
    from sandcrawler.web.http.fetch import HttpFetcher

    fetcher = HttpFetcher(routes=routes, timeout=10)
    out: Counter[str] = Counter()
    for article in corpus.articles:
        sizes = []
        for url in (article.base_url, article.pdf):
            opened = fetcher.open(url)
            try:
                sizes.append(len(opened.response.read()))
            finally:
                opened.close()
        out["ok" if all(sizes) else "failed"] += 1
    fetcher.close()
    return out


# --- (b) the crawl ----------------------------------------------------------------------------


class CrawlRig:
    """The command's services on a data directory; the crawler and archive of its ingester."""

    def __init__(self, data_dir: Path, routes: dict[str, str]) -> None:
        from sandcrawler.app.services import Services
        from sandcrawler.app.settings import load_settings

        settings = load_settings(data_dir=str(data_dir), http_routes=routes,
                                 crawl_host_delay=0)
        self.services = Services(settings)
        self.ingester = self.services.file_ingester()
        self.crawler = self.ingester.crawler
        self.archive = self.ingester.archive
        self.services.check_schema()

    def crawl_all(self, urls: list[str]) -> Counter[str]:
        from sandcrawler.ingest.crawl import close_all

        out: Counter[str] = Counter()
        for start in range(0, len(urls), BATCH):
            with self.archive.session() as session:
                results = [self.crawler.crawl(session, url, "pdf")
                           for url in urls[start:start + BATCH]]
                session.commit()
            for r in results:
                out[r.status + (" (replayed)" if r.replayed else "")] += 1
            close_all(results)
        return out

    def close(self) -> None:
        self.ingester.close()
        self.services.close()


# --- (c), (d) the command ---------------------------------------------------------------------


def write_requests(corpus: Corpus, path: Path) -> None:
    with path.open("wb") as f:
        for a in corpus.articles:
            f.write(orjson.dumps({"ingest_type": "pdf", "base_url": a.base_url,
                                  "link_source": "doi", "link_source_id": a.doi,
                                  "ext_ids": {"doi": a.doi}}) + b"\n")


def statuses_of(stdout: str) -> Counter[str]:
    return Counter(orjson.loads(line)["status"] for line in stdout.splitlines() if line)


def run_command(server: Server, args: list[str], env: dict[str, str], cwd: Path,
                out: Path | None = None) -> tuple[Measure, float, str]:
    """A sandcrawler command: its measure (this process's CPU replaced by the command's)."""
    box: dict[str, Any] = {}

    def run() -> Counter[str]:
        box["t"] = sandcrawler(args, env=env, cwd=cwd)
        return statuses_of(box["t"].stdout) if args[0] == "ingest" else Counter()

    m = measured(server, run)
    m.cpu = box["t"].cpu
    if out is not None:
        out.write_text(box["t"].stdout)
    return m, m.wall, box["t"].stdout


# --- profiles -----------------------------------------------------------------------------------

CATEGORIES: list[tuple[str, str]] = [
    # (category, regex on "file:function"; the first that matches counts)
    ("link finding (rules, URL resolution)", r"web/landing\.py:(_find_links|_apply|_values|"
     r"_link|_finish|_text_matches|add)$|web/urls|urllib/parse|web/link_rules|re/__init__|"
     r"'search' of 're\.Pattern'|'sub' of 're\.Pattern'|'text' of|'attributes'|"
     r"lexbor\.LexborNode|node\.pxi|'css' of"),
    ("HTML parsing, metadata (lexbor, biblio)", r"selectolax|lexbor|web/landing\.py|"
     r"web/biblio|web/html\.py|_codecs|'decode'"),
    ("WARC writing, reading (warcio, gzip)", r"warcio|zlib|web/warc\.py|_GzipMember|"
     r"web/archive\.py:(_record|_write|_compressible)|compress"),
    ("DB (SQLAlchemy, sqlite3)", r"sqlalchemy|sqlite3|db/engine"),
    ("HTTP client (urllib3, http.client, socket)", r"urllib3|http/client|socket|"
     r"ssl\.py|email/|selectors|'recv_into'|'sendall'|'poll'"),
    ("robots.txt (Protego)", r"protego|web/robots"),
    ("host gate", r"web/hosts"),
    ("hashing, MIME sniffing", r"hashlib|filemeta|'digest'|_hashlib|magic|sandcrawler/mime"),
    ("spool and store files (tempfile, os, fsync)", r"tempfile|'posix\.|'_io\.|'open'|"
     r"unlink|fsync|storage/"),
    ("validation, JSON (pydantic, orjson)", r"pydantic|orjson"),
]


def categorise(stats: pstats.Stats) -> list[tuple[str, float]]:
    """Own time (tottime) of every function, summed by category; the rest as 'other'."""
    totals: Counter[str] = Counter()
    compiled = [(name, re.compile(rx)) for name, rx in CATEGORIES]
    raw: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    for (filename, _, func), (_, _, tottime, _, _) in raw.items():
        key = f"{filename}:{func}"
        for name, rx in compiled:
            if rx.search(key):
                totals[name] += tottime
                break
        else:
            totals["other (Python: crawl, models, loops, ...)"] += tottime
    return totals.most_common()


def report_profile(prof: Path, title: str, n: int, top: int = 15) -> None:
    stats = pstats.Stats(str(prof))
    total = stats.total_tt  # type: ignore[attr-defined]
    print(f"\n-- profile: {title} ({prof}), {total:.2f} s profiled, "
          f"{total / n * 1000:.2f} ms/request under cProfile")
    for name, seconds in categorise(stats):
        print(f"   {name:<45} {seconds:7.2f} s  {seconds / total:5.1%}  "
              f"{seconds / n * 1000:6.2f} ms/request")
    buf = io.StringIO()
    pstats.Stats(str(prof), stream=buf).sort_stats("tottime").print_stats(top)
    print("   top functions by own time:")
    keep = False
    for line in buf.getvalue().splitlines():
        if line.strip().startswith("ncalls"):
            keep = True
        if keep and line.strip():
            print("   " + line)
    buf = io.StringIO()
    pstats.Stats(str(prof), stream=buf).sort_stats("cumulative").print_stats(
        r"crawl\.py|archive\.py|landing\.py|policy\.py|file_ingest\.py|history\.py|fetch\.py")
    print("   cumulative, crawl and archive functions:")
    keep = False
    for line in buf.getvalue().splitlines()[:60]:
        if line.strip().startswith("ncalls"):
            keep = True
        if keep and line.strip():
            print("   " + line)


# --- main ---------------------------------------------------------------------------------------


def parse_args() -> argparse.Namespace:
    parser = arg_parser(__doc__, count="requests", default=1000)
    parser.add_argument("--rounds", type=int, default=3, help="rounds (default: 3); medians")
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 4], metavar="J",
                        help="-j values of the command (default: 1 4)")
    parser.add_argument("--server", choices=("fast", "testkit"), default="fast",
                        help="loopback server (default: fast)")
    parser.add_argument("--server-procs", type=int, default=1, metavar="P",
                        help="processes of the fast server (default: 1)")
    parser.add_argument("--latency-ms", type=float, default=0.0, metavar="MS",
                        help="the fast server waits this long before each answer, as a real "
                        "site's time to first byte does (default: 0, loopback's own)")
    parser.add_argument("--skip-commands", action="store_true",
                        help="only (a) and (b): no sandcrawler commands")
    parser.add_argument("--profile", type=Path, default=None, metavar="DIR",
                        help="also profile (b), (b2) and (d) with cProfile, stats in DIR")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    if not FIXTURES.is_dir():
        skip(f"fixtures directory {FIXTURES} not found (set SANDCRAWLER_SHARED_DATA)")
    if args.server == "testkit" and args.server_procs != 1:
        sys.exit("--server testkit runs in one process")
    n = args.requests
    print_header(f"file ingest: {n:,} requests, {args.rounds} round(s), server {args.server}"
                 f" x{args.server_procs}")
    t0 = time.perf_counter()
    corpus = build_corpus(n)
    check_corpus(corpus)
    print(f"   corpus: {n:,} articles over {len(corpus.origins)} origins "
          f"({', '.join(corpus.origins)}), "
          f"{corpus.html_bytes() / n / 1000:.0f} kB of HTML and "
          f"{corpus.pdf_bytes() / n / 1000:.1f} kB of PDF per request "
          f"(built in {time.perf_counter() - t0:.1f} s)")
    server = Server(corpus, args.server, args.server_procs, args.latency_ms / 1000)
    with work_dir(args.out) as wd:
        # the in-process services read no config file and no SANDCRAWLER_* but ours
        for k in [k for k in os.environ if k.startswith("SANDCRAWLER_")]:
            del os.environ[k]
        os.environ["XDG_CONFIG_HOME"] = str(wd / "home" / "config")
        os.environ["XDG_DATA_HOME"] = str(wd / "home" / "data")
        try:
            run_all(args, corpus, server, wd)
        finally:
            server.close()


def run_all(args: argparse.Namespace, corpus: Corpus, server: Server, wd: Path) -> None:
    n = len(corpus.articles)
    routes = server.routes()
    urls = [a.base_url for a in corpus.articles]
    requests = wd / "requests.json"
    write_requests(corpus, requests)
    empty = wd / "empty.json"
    empty.write_text("")
    rows: dict[str, list[Measure]] = {}

    def add(name: str, m: Measure) -> None:
        rows.setdefault(name, []).append(m)
        shown = ", ".join(f"{k} {v}" for k, v in sorted(m.statuses.items()))
        print(f"   {name:<44} {m.wall:7.2f} s  {rate(n, m.wall):8.1f} req/s  "
              f"cpu {m.cpu:6.2f} s  server cpu {m.server_cpu:5.2f} s  "
              f"server requests {m.requests:5d} (+{m.robots} robots.txt)  [{shown}]")

    for rnd in range(args.rounds):
        print(f"-- round {rnd + 1}, load average "
              f"{', '.join(f'{x:.2f}' for x in os.getloadavg())}")
        add("(a) plain fetch, urllib3", measured(server, lambda: plain_urllib3(corpus, routes)))
        add("(a') plain fetch, HttpFetcher.open + read",
            measured(server, lambda: plain_fetcher(corpus, routes)))
        data = wd / f"crawl-{rnd}"
        rig = CrawlRig(data, routes)
        try:
            add("(b) crawl (fetch + archive + links)",
                measured(server, lambda rig=rig: rig.crawl_all(urls)))  # type: ignore[misc]
            add("(b2) crawl again: replay from the archive",
                measured(server, lambda rig=rig: rig.crawl_all(urls)))  # type: ignore[misc]
        finally:
            rig.close()
        shutil.rmtree(data, ignore_errors=True)
        if args.skip_commands:
            continue
        home = wd / f"cmd-{rnd}"
        env0 = bench_env(home, data_dir=str(home / "startup"),
                         http_routes=orjson.dumps(routes).decode(), crawl_host_delay="0")
        m, _, _ = run_command(server, ["ingest", "requests", "--no-progress", str(empty)],
                              env0, wd)
        add("start-up: ingest requests on an empty file", m)
        first = None
        for jobs in args.jobs:
            env = {**env0, "SANDCRAWLER_DATA_DIR": str(home / f"j{jobs}")}
            results = home / f"results-j{jobs}.json"
            m, _, _ = run_command(server, ["ingest", "requests", "--no-progress", "-j",
                                           str(jobs), str(requests)], env, wd, results)
            add(f"(c) ingest requests -j {jobs}", m)
            if first is None:
                first = (jobs, env, results)
        assert first is not None
        jobs, env, results = first
        j = ["-j", str(jobs)]
        m, _, _ = run_command(server, ["ingest", "requests", "--no-progress", *j,
                                       str(requests)], env, wd)
        add(f"(d1) again -j {jobs}, not persisted (replay)", m)
        m, _, _ = run_command(server, ["persist", "ingest-file", "--no-progress",
                                       str(results)], env, wd)
        add("     persist ingest-file of (c)'s results", m)
        for jj in args.jobs:
            m, _, _ = run_command(server, ["ingest", "requests", "--no-progress", "-j",
                                           str(jj), str(requests)], env, wd)
            add(f"(d2) again -j {jj}, persisted (recorded hits)", m)
        warcs = sorted((Path(env["SANDCRAWLER_DATA_DIR"]) / "store").rglob("*.warc*"))
        print(f"   WARC files in the data directory after (c) and (d): {len(warcs)}")
        shutil.rmtree(home, ignore_errors=True)

    summarise(rows, n)
    if args.profile is not None:
        profile(args, corpus, server, wd)


def summarise(rows: dict[str, list[Measure]], n: int) -> None:
    print(f"\n== medians over {len(next(iter(rows.values())))} round(s), {n:,} requests")
    print(f"   {'':<46} {'wall s':>7} {'req/s':>8} {'ms/req':>7} {'CPU ms/req':>10} "
          f"{'server CPU ms/req':>17} {'server requests':>15}")
    for name, ms in rows.items():
        wall = median([m.wall for m in ms])
        print(f"   {name:<46} {wall:7.2f} {rate(n, wall):8.1f} {wall / n * 1000:7.2f} "
              f"{median([m.cpu for m in ms]) / n * 1000:10.2f} "
              f"{median([m.server_cpu for m in ms]) / n * 1000:17.2f} "
              f"{int(median([m.requests for m in ms])):>15}")

    def wall(name: str) -> float | None:
        ms = rows.get(name)
        return median([m.wall for m in ms]) if ms else None

    plain = wall("(a) plain fetch, urllib3")
    fetcher = wall("(a') plain fetch, HttpFetcher.open + read")
    crawl = wall("(b) crawl (fetch + archive + links)")
    if plain and crawl and fetcher:
        print(f"\n   crawl / plain fetch (urllib3): {crawl / plain:.2f}x (goal <= 1.5x); "
              f"crawl / HttpFetcher: {crawl / fetcher:.2f}x; "
              f"HttpFetcher / urllib3: {fetcher / plain:.2f}x")
    start = wall("start-up: ingest requests on an empty file")
    if start is not None:
        for name in rows:
            if name.startswith(("(c)", "(d")):
                w = wall(name)
                assert w is not None
                print(f"   {name:<46} net of start-up ({start:.2f} s): "
                      f"{rate(n, w - start):8.1f} req/s")


def profile(args: argparse.Namespace, corpus: Corpus, server: Server, wd: Path) -> None:
    out: Path = args.profile.resolve()
    out.mkdir(parents=True, exist_ok=True)
    n = len(corpus.articles)
    routes = server.routes()
    urls = [a.base_url for a in corpus.articles]
    rig = CrawlRig(wd / "profile-crawl", routes)
    try:
        for name, title in (("crawl.prof", "(b) crawl"), ("replay.prof", "(b2) replay")):
            prof = cProfile.Profile()
            prof.runcall(rig.crawl_all, urls)
            prof.dump_stats(out / name)
            report_profile(out / name, title, n)
    finally:
        rig.close()
    if args.skip_commands:
        return
    home = wd / "profile-cmd"
    env = bench_env(home, data_dir=str(home / "data"),
                    http_routes=orjson.dumps(routes).decode(), crawl_host_delay="0")
    requests, results = wd / "requests.json", home / "results.json"
    home.mkdir(parents=True, exist_ok=True)
    cmd = ["ingest", "requests", "--no-progress", str(requests)]
    run_command(server, cmd, env, wd, results)

    def profiled(name: str, argv: list[str]) -> Path:
        prof = out / name
        t = sandcrawler_profiled(prof, argv, env, wd)
        print(f"\n   {' '.join(argv[:2])} under cProfile: {t:.2f} s")
        return prof

    report_profile(profiled("second-replay.prof", cmd), "(d1) second run, replay", n)
    run_command(server, ["persist", "ingest-file", "--no-progress", str(results)], env, wd)
    report_profile(profiled("second-persisted.prof", cmd), "(d2) second run, recorded hits", n)


def sandcrawler_profiled(prof: Path, argv: list[str], env: dict[str, str], cwd: Path) -> float:
    from _common import run_timed

    t = run_timed([sys.executable, "-m", "cProfile", "-o", str(prof), "-m", "sandcrawler",
                   *argv], env=env, cwd=cwd)
    return t.wall


if __name__ == "__main__":
    main()
