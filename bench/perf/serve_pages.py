"""``sandcrawler serve``: the document page's latency under load, SQLite and PostgreSQL.

The catalogue is filled with ``--rows`` rows by bulk inserts (1 million by default),
and ``--sample`` of those documents get a metadata file in the store (the page
reads it). ``sandcrawler serve`` runs as its own process; a load generator of
``--concurrency`` threads, each on one keep-alive connection, asks for random
sampled documents' pages for ``--seconds`` after a warm-up, and the latencies
(p50, p99, max) and throughput are printed. Goal (issue 16): p99 under 50 ms.

    python bench/perf/serve_pages.py [--rows 1000000] [--concurrency 8] [--seconds 10]
"""

from __future__ import annotations

import argparse
import http.client
import random
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for _common.py
import orjson
from _common import (
    SANDCRAWLER,
    bench_env,
    durable_cluster,
    init_database,
    print_header,
    sandcrawler,
    work_dir,
)
from sqlalchemy import insert

from sandcrawler.db.engine import make_engine
from sandcrawler.db.schema import catalogue
from sandcrawler.storage.local import LocalBlobStore
from sandcrawler.storage.resources import ResourceStore

BATCH = 20_000


def fill(url: str, store: Path, rows: int, sample: int) -> list[str]:
    """``rows`` catalogue rows; metadata files for ``sample`` of them (returned)."""
    engine = make_engine(url)
    rng = random.Random(16)
    chosen: list[str] = []
    resources = ResourceStore(LocalBlobStore(store, fsync=False))
    every = max(1, rows // sample)
    start = time.perf_counter()
    with engine.begin() as conn:
        batch = []
        for i in range(rows):
            doc = str(uuid.UUID(int=rng.getrandbits(128), version=4))
            batch.append({"uuid": doc, "sha1": f"{rng.getrandbits(160):040x}",
                          "doi": f"10.9999/bench.{i}", "pmid": None, "pmcid": None,
                          "arxiv": None, "resources": ["metadata", "pdf"]})
            if i % every == 0 and len(chosen) < sample:
                chosen.append(doc)
                resources.put(doc, "metadata", orjson.dumps({
                    "id": doc, "DOI": f"10.9999/bench.{i}",
                    "title": [f"Benchmark document {i} on the reading of pages"],
                    "author": [{"given": "A.", "family": f"Author{j}"} for j in range(6)],
                    "container-title": ["Journal of Benchmarks"], "volume": "16"}))
            if len(batch) >= BATCH:
                conn.execute(insert(catalogue), batch)
                batch = []
        if batch:
            conn.execute(insert(catalogue), batch)
    engine.dispose()
    print(f"  filled {rows:,} catalogue rows in {time.perf_counter() - start:.1f} s "
          f"({len(chosen):,} with metadata files)", file=sys.stderr)
    return chosen


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serving(env: dict[str, str], workdir: Path) -> Iterator[int]:
    port = free_port()
    proc = subprocess.Popen([*SANDCRAWLER, "serve", "--port", str(port)], env=env, cwd=workdir,
                            stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    err = proc.stderr.read().decode() if proc.stderr else ""
                    raise SystemExit(f"serve did not start: {err}") from None
                time.sleep(0.1)
        yield port
    finally:
        proc.terminate()
        proc.wait(10)


def load(port: int, docs: list[str], concurrency: int, seconds: float) -> list[float]:
    """Latencies (s) of document pages asked for by ``concurrency`` keep-alive clients."""
    latencies: list[float] = []
    lock = threading.Lock()
    stop = time.monotonic() + seconds
    errors = []

    def client(seed: int) -> None:
        rng = random.Random(seed)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        mine = []
        while time.monotonic() < stop:
            path = f"/document/{rng.choice(docs)}"
            t0 = time.perf_counter()
            conn.request("GET", path)
            answer = conn.getresponse()
            body = answer.read()
            mine.append(time.perf_counter() - t0)
            if answer.status != 200 or b"Benchmark document" not in body:
                errors.append(f"{path}: {answer.status}")
        conn.close()
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise SystemExit(f"{len(errors)} failed requests, e.g. {errors[0]}")
    return latencies


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))]


def run(backend: str, url: str, workdir: Path, args: argparse.Namespace) -> None:
    store = workdir / f"store-{backend}"
    docs = fill(url, store, args.rows, args.sample)
    env = bench_env(workdir, database_url=url, store_url=str(store))
    with serving(env, workdir) as port:
        load(port, docs, args.concurrency, 2.0)  # warm-up: pools, caches, imports
        for concurrency in (1, args.concurrency):
            lat = load(port, docs, concurrency, args.seconds)
            print(f"| {backend} | {args.rows:,} | {concurrency} | {len(lat) / args.seconds:,.0f} "
                  f"| {percentile(lat, 0.5) * 1000:.1f} | {percentile(lat, 0.99) * 1000:.1f} "
                  f"| {max(lat) * 1000:.1f} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--sample", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--backend", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument("--out", type=Path, default=None, help="keep the work directory here")
    args = parser.parse_args()
    print_header("sandcrawler serve: the document page under load")
    print("| database | catalogue rows | clients | pages/s | p50 ms | p99 ms | max ms |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    with work_dir(args.out) as workdir:
        if args.backend in ("sqlite", "both"):
            url = f"sqlite:///{workdir / 'serve.sqlite3'}"
            sandcrawler(["db", "init"], env=bench_env(workdir, database_url=url), cwd=workdir)
            run("sqlite", url, workdir, args)
        if args.backend in ("postgresql", "both"):
            with durable_cluster() as cluster:
                run("postgresql", init_database(cluster, "bench_serve", workdir), workdir, args)


if __name__ == "__main__":
    main()
