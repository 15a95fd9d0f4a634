"""Database connections opened by ``sandcrawler process -j N`` on PostgreSQL.

Every process builds its services once (the composition root): one engine, so one
connection pool, per process. This script counts what that means on a real
server: it runs ``process -j N`` over copies of the real papers in
``../shared/data/pdfs`` into a durable throwaway cluster and samples
``pg_stat_activity`` (client backends on the benchmark's database) every 20 ms,
printing the peak and the number of distinct backends (connections opened) that
the run used.

    python bench/perf/db_connections.py [--jobs 8] [--copies 4]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for _common.py
from _common import (
    SANDCRAWLER,
    SHARED_DATA,
    bench_env,
    durable_cluster,
    init_database,
    print_header,
    psql,
    skip,
    work_dir,
)

DATABASE = "bench_connections"


def make_inputs(workdir: Path, copies: int) -> Path:
    """``copies`` distinct variants of each real paper (a trailing comment changes
    the sha1, so each is a new document)."""
    pdfs = sorted((SHARED_DATA / "pdfs").glob("*.pdf"))
    if not pdfs:
        skip(f"no PDFs in {SHARED_DATA / 'pdfs'} (set SANDCRAWLER_SHARED_DATA)")
    inputs = workdir / "pdfs"
    inputs.mkdir()
    for pdf in pdfs:
        for i in range(copies):
            dest = inputs / f"{pdf.stem}.{i}.pdf"
            shutil.copyfile(pdf, dest)
            with dest.open("ab") as f:
                f.write(f"\n% copy {i}\n".encode())
    return inputs


def sample_backends(cluster, stop: threading.Event, seen: set[int], peak: list[int]) -> None:
    sql = (f"SELECT pid FROM pg_stat_activity WHERE datname = '{DATABASE}' "
           "AND backend_type = 'client backend' AND pid <> pg_backend_pid()")
    while not stop.is_set():
        pids = {int(p) for p in psql(cluster, DATABASE, sql).split() if p}
        seen.update(pids)
        peak[0] = max(peak[0], len(pids))
        time.sleep(0.02)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=8, help="-j of process (default: 8)")
    parser.add_argument("--copies", type=int, default=4,
                        help="variants of each real paper (default: 4)")
    parser.add_argument("--out", type=Path, default=None, help="keep the work files here")
    args = parser.parse_args()
    print_header(f"database connections of `process -j {args.jobs}` on PostgreSQL")
    with work_dir(args.out) as workdir, durable_cluster() as cluster:
        inputs = make_inputs(workdir, args.copies)
        url = init_database(cluster, DATABASE, workdir)
        env = bench_env(workdir, database_url=url, store_url=str(workdir / "store"))
        stop = threading.Event()
        seen: set[int] = set()
        peak = [0]
        sampler = threading.Thread(target=sample_backends, args=(cluster, stop, seen, peak))
        sampler.start()
        started = time.monotonic()
        try:
            proc = subprocess.run(
                [*SANDCRAWLER, "process", "-j", str(args.jobs), "--no-progress", str(inputs)],
                env=env, cwd=workdir, capture_output=True, text=True, check=False)
        finally:
            stop.set()
            sampler.join()
        elapsed = time.monotonic() - started
        if proc.returncode != 0:
            raise SystemExit(f"process failed ({proc.returncode}):\n{proc.stderr}")
        files = len(list(inputs.iterdir()))
        print(f"   {files} PDFs in {elapsed:.1f}s; "
              f"summary: {proc.stderr.strip().splitlines()[-1]}")
        print(f"   peak concurrent connections: {peak[0]}")
        print(f"   connections opened (distinct backends): {len(seen)}")


if __name__ == "__main__":
    main()
