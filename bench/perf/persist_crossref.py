"""``sandcrawler persist crossref``: Crossref works (JSON lines) into the crossref table.

Input: N synthetic works made from the two real Crossref API works (envelopes as the
API returns them), each with a distinct DOI (``<doi>.b<i>``) and ``indexed`` date-time
and the real reference lists.

Measured (wall time of the whole command, start-up included):

  PostgreSQL  a fresh database (``sandcrawler db init`` first, not timed) in a durable
              (fsync on) throwaway cluster
  SQLite      a fresh file in the work directory (schema created by the command itself)

Each is printed as rows/s beside the original backfill's 925 rows/s and the 10x goal
(9,250 rows/s); the row count of each database is checked. Client CPU is the command's
process tree; server CPU is all PostgreSQL processes.

Run:  python bench/perf/persist_crossref.py [--rows 100000] [--jobs 1] [--out bench/out]
"""

from __future__ import annotations

import sqlite3
import sys
from contextlib import closing
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for _common.py
from _common import (
    Timing,
    arg_parser,
    bench_env,
    count_rows,
    durable_cluster,
    init_database,
    load_works,
    print_header,
    rate,
    require_fixtures,
    sandcrawler,
    synthetic_work_lines,
    with_server_cpu,
    work_dir,
    write_lines,
)

ORIGINAL_RATE = 925.0
GOAL_RATE = 10 * ORIGINAL_RATE


def show(label: str, t: Timing, n: int, server: float | None = None) -> None:
    r = rate(n, t.wall)
    server_text = f"   server CPU {server:6.1f} s" if server is not None else ""
    print(f"   {label:<11} {t.wall:8.2f} s {r:10,.0f} rows/s   {r / ORIGINAL_RATE:5.1f}x original"
          f"   {r / GOAL_RATE:5.0%} of goal   client CPU {t.cpu:6.1f} s{server_text}")


def main() -> None:
    parser = arg_parser(__doc__, count="rows", default=100_000, jobs=True)
    args = parser.parse_args()
    n: int = args.rows
    works, _ = require_fixtures()

    print_header(f"sandcrawler persist crossref: {n:,} works, -j {args.jobs}")
    with work_dir(args.out) as workdir:
        input_file = workdir / f"crossref_works_{n}.json"
        size = write_lines(input_file, synthetic_work_lines(load_works(works), n))
        cmd = ["persist", "crossref", str(input_file), "-j", str(args.jobs)]
        print(f"   input: {input_file} ({size / 1e6:,.1f} MB, {size / n / 1e3:.1f} kB/work)")
        print(f"   original backfill {ORIGINAL_RATE:,.0f} rows/s; "
              f"goal 10x = {GOAL_RATE:,.0f} rows/s")

        with durable_cluster() as cluster:
            url = init_database(cluster, "bench_crossref", workdir)
            env = bench_env(workdir, database_url=url)
            t, used = with_server_cpu(cluster, lambda: sandcrawler(cmd, env=env, cwd=workdir))
            show("PostgreSQL", t, n, used)
            got = count_rows(cluster, "bench_crossref", "crossref")
            if got != n:
                sys.exit(f"PostgreSQL: {got:,} rows in crossref, expected {n:,}")

        db_file = workdir / "bench_crossref.sqlite3"
        for leftover in workdir.glob("bench_crossref.sqlite3*"):
            leftover.unlink()
        t = sandcrawler(cmd, env=bench_env(workdir, database_url=f"sqlite:///{db_file}"),
                        cwd=workdir)
        show("SQLite", t, n)
        got = sqlite_count(db_file)
        if got != n:
            sys.exit(f"SQLite: {got:,} rows in crossref, expected {n:,}")
        print(f"   row counts: {n:,} in both databases "
              f"(SQLite file {db_file.stat().st_size / 1e6:,.1f} MB)")


def sqlite_count(path: Path) -> int:
    with closing(sqlite3.connect(path)) as conn:
        return int(conn.execute("SELECT count(*) FROM crossref").fetchone()[0])


if __name__ == "__main__":
    main()
