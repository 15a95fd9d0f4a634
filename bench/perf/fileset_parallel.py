"""A fileset of many files archived side by side, against a plain parallel download.

Input: a loopback platform server (``sandcrawler_testkit.platforms.PlatformServer``)
in a child process, playing Zenodo with one record of ``--files`` files (default
100) of ``--file-kb`` KiB (default 1,024) of random bytes, answering every request
after ``--delay-ms`` milliseconds (default 20: a platform across a network). Every
file goes through the server's redirect hop, as Zenodo's downloads do, so a file
is two requests.

Measured in this process, each case in turn, best of ``--rounds``:

  plain serial     urllib3, one file after another: the record's API JSON for the
                   file URLs, redirects followed, each body streamed to a file in
                   the work directory and fsynced (as the store does); no hashing.
  plain parallel   the same with ``--workers`` threads, at most ``--host-concurrency``
                   requests in flight to the host (a semaphore: the gate's limit,
                   with no delay between starts).
  ours             the fileset ingester (``Services.fileset_ingester``; SQLite and
                   the local store in a fresh data directory, fsync on) with
                   ``fileset.parallel_downloads`` = ``--workers`` and
                   ``crawl.host_concurrency`` = ``--host-concurrency``,
                   ``crawl.host_delay`` = 0, its services opened and its
                   database made before the clock starts; strategies archiveorg-fileset (the item
                   store) and web-fileset (WARC and CDX), and each again with
                   ``parallel_downloads`` = 1 (serial). The landing page and the API
                   call are inside the time, as in a real ingest; every file is
                   verified (size, md5).

Figures: seconds (wall), CPU seconds of this process (every thread; the server is
another process), MB/s (1 MB = 10^6 bytes) and the ratio to the plain
parallel download of the same files at the same per-host concurrency (the goal of
issue 27: >= 0.8 for ours, parallel).

Run:  python bench/perf/fileset_parallel.py [--files 100] [--file-kb 1024] [--delay-ms 20]
                                       [--host-concurrency 4] [--workers 8] [--rounds 2]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import os
import random
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from multiprocessing.connection import Connection
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for _common.py
import urllib3
from _common import print_header, stream_to_file

ZENODO = "zenodo.org"
RECORD = 4242
MB = 1_000_000


def serve(conn: Connection, files: int, file_kb: int, delay: float) -> None:
    """The child: the platform server with the record; its URL sent back, then
    serving until the parent closes the pipe."""
    from sandcrawler_testkit.platforms import FakeFile, PlatformServer

    rng = random.Random(27)
    server = PlatformServer()
    server.add_zenodo(RECORD, [FakeFile(f"part-{i:03d}.bin", rng.randbytes(file_kb * 1024))
                               for i in range(files)], title="Parallel bench")
    server.answer_delay = delay
    server.start()
    conn.send((server.url, server.routes()))
    with contextlib.suppress(EOFError):
        conn.recv()
    server.stop()


def plain(server_url: str, dest: Path, workers: int, host_concurrency: int) -> int:
    """The plain download: every file of the record into ``dest``; bytes written."""
    http = urllib3.PoolManager(maxsize=max(workers, host_concurrency))
    origin = f"https://{ZENODO}"
    slots = threading.Semaphore(host_concurrency)
    headers = {"Host": ZENODO, "Accept-Encoding": "identity", "User-Agent": "bench"}

    def get(url: str, into: Callable[[urllib3.BaseHTTPResponse], int]) -> int:
        for _ in range(10):
            with slots:  # one request in flight per slot, redirects included
                resp = http.request("GET", server_url + url.removeprefix(origin),
                                    headers=headers, redirect=False, preload_content=False)
                location = resp.headers.get("Location")
                if resp.status in (301, 302, 303, 307, 308) and location:
                    resp.read()
                    resp.release_conn()
                    url = location
                    continue
                if resp.status != 200:
                    raise SystemExit(f"plain download: HTTP {resp.status} for {url}")
                return into(resp)
        raise SystemExit(f"plain download: too many redirects from {url}")

    answer: list[bytes] = []

    def keep(resp: urllib3.BaseHTTPResponse) -> int:
        answer.append(resp.read())
        resp.release_conn()
        return len(answer[-1])

    get(f"{origin}/api/records/{RECORD}", keep)
    links = [f["links"]["self"] for f in json.loads(answer[0])["files"]]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        sizes = pool.map(lambda ix: get(ix[1], lambda r: stream_to_file(r, dest / f"f{ix[0]}")),
                         enumerate(links))
        return sum(sizes)


def ours(routes: dict[str, str], data_dir: Path, strategy: str, workers: int,
         host_concurrency: int) -> Callable[[], int]:
    """The ingest, ready to run: services opened and the database made first (a
    worker has them already), so the time is the ingest's own."""
    from sandcrawler.app.services import Services
    from sandcrawler.app.settings import load_settings
    from sandcrawler.records.fileset import IngestRequest, IngestStrategy

    settings = load_settings(data_dir=data_dir, http_routes=routes,
                             crawl_host_concurrency=host_concurrency, crawl_host_delay=0,
                             crawl_robots=False, fileset_parallel_downloads=workers)
    services = Services(settings)
    ingester = services.fileset_ingester(IngestStrategy(strategy))
    services.check_schema()

    def run() -> int:
        try:
            out = ingester.ingest(IngestRequest(
                ingest_type="dataset", force_recrawl=True,
                base_url=f"https://{ZENODO}/records/{RECORD}"))
        finally:
            services.close()
        result = out.result.to_json()
        if out.status != "success" or result["ingest_strategy"] != strategy:
            raise SystemExit(f"ours ({strategy}): {out.status} {out.error}")
        return sum(f["size"] for f in result["manifest"])

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--file-kb", type=int, default=1024)
    parser.add_argument("--delay-ms", type=float, default=20.0)
    parser.add_argument("--host-concurrency", type=int, default=4)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    print_header(f"fileset_parallel: {args.files} files of {args.file_kb} KiB, every request "
                 f"answered after {args.delay_ms:g} ms, {args.host_concurrency} per host, "
                 f"{args.workers} workers")
    parent, child = multiprocessing.Pipe()
    server = multiprocessing.Process(target=serve, daemon=True,
                                     args=(child, args.files, args.file_kb,
                                           args.delay_ms / 1000))
    server.start()
    server_url, routes = parent.recv()
    def download(workers: int) -> Callable[[Path], Callable[[], int]]:
        return lambda d: lambda: plain(server_url, d, workers, args.host_concurrency)

    cases: dict[str, Callable[[Path], Callable[[], int]]] = {
        "plain serial": download(1),
        "plain parallel": download(args.workers),
        "archiveorg-fileset serial": lambda d: ours(routes, d, "archiveorg-fileset", 1,
                                                    args.host_concurrency),
        "archiveorg-fileset parallel": lambda d: ours(routes, d, "archiveorg-fileset",
                                                      args.workers, args.host_concurrency),
        "web-fileset serial": lambda d: ours(routes, d, "web-fileset", 1,
                                             args.host_concurrency),
        "web-fileset parallel": lambda d: ours(routes, d, "web-fileset", args.workers,
                                               args.host_concurrency),
    }
    best: dict[str, float] = {}
    cpus: dict[str, float] = {}
    size = 0
    try:
        for _ in range(args.rounds):
            for name, case in cases.items():
                with tempfile.TemporaryDirectory(prefix="sandcrawler-bench-") as tmp:
                    run = case(Path(tmp))
                    os.sync()
                    t0, c0 = time.perf_counter(), time.process_time()
                    size = run()
                    seconds = time.perf_counter() - t0
                    cpu = time.process_time() - c0
                if seconds < best.get(name, float("inf")):
                    best[name], cpus[name] = seconds, cpu
    finally:
        parent.send("stop")
        server.join(10)
    expected = args.files * args.file_kb * 1024
    if size != expected:
        raise SystemExit(f"moved {size} bytes, not {expected}")
    reference = best["plain parallel"]
    print(f"{'case':30} {'seconds':>8} {'CPU s':>6} {'MB/s':>8} {'vs plain parallel':>18}")
    for name, seconds in best.items():
        print(f"{name:30} {seconds:8.2f} {cpus[name]:6.2f} {expected / MB / seconds:8.1f} "
              f"{reference / seconds:17.2f}x")
    print(f"(best of {args.rounds} rounds)")


if __name__ == "__main__":
    main()
