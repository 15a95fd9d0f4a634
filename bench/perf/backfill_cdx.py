"""``sandcrawler pdftable backfill-cdx``: CDX lines into the PDF table, SQLite and PostgreSQL.

Input: the 20 real lines of ``sandcrawler-fixtures/example.cdx`` (11 columns, a
CiteSeerX crawl of 2017), cycled to N lines (``--lines``, default 100,000). Copy 0 is
the real file; in copy ``c`` >= 1 every line gets the sha1 ``base32(sha1("<sha1>.<c>"))``
(lines sharing a sha1 in the sample share it in each copy too), a timestamp ``61 * c``
seconds later and a WARC offset moved by ``7,919,993 * c`` (modulo 10^9). URLs, MIME
types, statuses and WARC names are the real ones, so the real mix is kept: 9 of the 20
lines are HTTP 200 captures (written), 11 are 301/302/404 or status-less (skipped).

Measured, ``sandcrawler pdftable backfill-cdx FILE -j J`` as a subprocess (wall clock,
CPU of its process tree, including -j 2's worker processes: this script makes itself
a child subreaper), for J in 1 and 2, each J on a fresh database, then again on the
same file and database (every upsert hits an existing row), in ``--repeat`` rounds:

  SQLite      a fresh data directory (SANDCRAWLER_DATA_DIR), ``sandcrawler db init`` first
  PostgreSQL  a fresh database in a durable (fsync on) throwaway cluster, ``db init`` first

Printed: lines/s (all input lines), rows/s (success count, from the command's summary),
client CPU and, for PostgreSQL, server CPU, per run and as the median and best of the
rounds; also the wall time of a run on an empty file (start-up, imports, schema check).
After every run the number of distinct row keys in the table must equal the number of
distinct sha1s among the HTTP 200 lines, with two cells (file:mime, file:cdx) per row,
and the command's success count the number of those lines; the script exits non-zero
otherwise.

Run:  python bench/perf/backfill_cdx.py [--lines 100000] [--repeat 3] [--out bench/out]
"""

from __future__ import annotations

import base64
import hashlib
import re
import shutil
import sqlite3
import sys
from collections.abc import Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for _common.py
from _common import (
    FIXTURES,
    Timing,
    arg_parser,
    become_subreaper,
    bench_env,
    drop_database,
    durable_cluster,
    init_database,
    median,
    print_header,
    psql,
    rate,
    sandcrawler,
    skip,
    with_server_cpu,
    work_dir,
    write_lines,
)
from warcio.timeutils import sec_to_timestamp, timestamp_to_sec

from sandcrawler_testkit.postgres import PostgresCluster

SAMPLE = FIXTURES / "example.cdx"
JOBS = (1, 2)
STEP_SECONDS = 61
STEP_OFFSET = 7_919_993
SUMMARY_SUCCESS = re.compile(r"\bsuccess ([\d,]+)")
#: distinct row keys and cells of the one PDF table in a fresh database
COUNT_SQL = "SELECT count(DISTINCT row_key), count(*) FROM pdftable_cells"


# --- input ---------------------------------------------------------------------------------


def derived_sha1(sha1: str, copy: int) -> str:
    return base64.b32encode(hashlib.sha1(f"{sha1}.{copy}".encode()).digest()).decode()


def cdx_variants(real: Sequence[str], n: int) -> Iterator[bytes]:
    """``n`` CDX lines cycling over the real ones (see the module docstring)."""
    for i in range(n):
        copy, j = divmod(i, len(real))
        fields = real[j].split(" ")
        if copy:
            surt, dt, url, mime, status, sha1, redirect, meta, c_size, offset, warc = fields
            ts = sec_to_timestamp(timestamp_to_sec(dt) + STEP_SECONDS * copy)
            fields = [surt, ts, url, mime, status,
                      derived_sha1(sha1, copy), redirect, meta, c_size,
                      str((int(offset) + STEP_OFFSET * copy) % 1_000_000_000), warc]
        yield " ".join(fields).encode() + b"\n"


@dataclass
class Expected:
    lines: int
    success: int  # HTTP 200 captures, not revisits: the lines written
    keys: int  # distinct sha1s among them: the rows of the table


def expected(path: Path) -> Expected:
    """Counted independently of sandcrawler's parser: status 200 and not a revisit."""
    lines = success = 0
    keys: set[str] = set()
    with path.open() as f:
        for line in f:
            lines += 1
            fields = line.split(" ")
            if fields[4] == "200" and fields[3] != "warc/revisit":
                success += 1
                keys.add(fields[5])
    return Expected(lines, success, len(keys))


# --- runs ----------------------------------------------------------------------------------


@dataclass
class Run:
    label: str
    timing: Timing
    server_cpu: float | None
    success: int
    keys: int
    cells: int


def success_count(t: Timing) -> int:
    found = SUMMARY_SUCCESS.findall(t.stderr)
    if not found:
        sys.exit(f"no success count in the summary:\n{t.stderr[-2000:]}")
    return int(found[-1].replace(",", ""))


def check(run: Run, want: Expected) -> None:
    ok = run.success == want.success and run.keys == want.keys and run.cells == 2 * want.keys
    print(f"   {run.label:<34} {run.timing.wall:7.2f} s {rate(want.lines, run.timing.wall):9,.0f} "
          f"lines/s {rate(run.success, run.timing.wall):9,.0f} rows/s   client CPU "
          f"{run.timing.cpu:5.1f} s"
          + (f"   server CPU {run.server_cpu:5.1f} s" if run.server_cpu is not None else "")
          + f"   success {run.success:,}, distinct keys {run.keys:,} (expected {want.keys:,}), "
          f"cells {run.cells:,}" + ("" if ok else "   MISMATCH"), flush=True)
    if not ok:
        sys.exit(f"{run.label}: expected {want.success:,} successes, {want.keys:,} distinct "
                 f"keys and {2 * want.keys:,} cells")


def sqlite_counts(data_dir: Path) -> tuple[int, int]:
    with closing(sqlite3.connect(data_dir / "sandcrawler.sqlite3")) as conn:
        keys, cells = conn.execute(COUNT_SQL).fetchone()
    return int(keys), int(cells)


def pg_counts(cluster: PostgresCluster, database: str) -> tuple[int, int]:
    keys, cells = psql(cluster, database, COUNT_SQL).split("|")
    return int(keys), int(cells)


def command(input_file: Path, jobs: int) -> list[str]:
    return ["pdftable", "backfill-cdx", str(input_file), "-j", str(jobs)]


def bench_sqlite(workdir: Path, input_file: Path, empty: Path, want: Expected, reap: bool,
                 rnd: int) -> list[Run]:
    print("   SQLite (a fresh data directory per -j, `db init` first)")
    runs = []
    for jobs in JOBS:
        data_dir = workdir / f"sqlite_{rnd}_j{jobs}"
        env = bench_env(workdir, data_dir=str(data_dir))
        sandcrawler(["db", "init"], env=env, cwd=workdir)
        if rnd == 0:
            show_fixed(sandcrawler(command(empty, jobs), env=env, cwd=workdir, reap=reap), jobs)
        for label in (f"SQLite -j {jobs}, fresh", f"SQLite -j {jobs}, again (upserts)"):
            t = sandcrawler(command(input_file, jobs), env=env, cwd=workdir, reap=reap)
            run = Run(label, t, None, success_count(t), *sqlite_counts(data_dir))
            check(run, want)
            runs.append(run)
        shutil.rmtree(data_dir)
    return runs


def bench_postgres(cluster: PostgresCluster, workdir: Path, input_file: Path, empty: Path,
                   want: Expected, reap: bool, rnd: int) -> list[Run]:
    print("   PostgreSQL (a fresh database per -j, `db init` first)")
    runs = []
    for jobs in JOBS:
        db = f"bench_cdx_{rnd}_j{jobs}"
        env = bench_env(workdir, database_url=init_database(cluster, db, workdir))
        if rnd == 0:
            show_fixed(sandcrawler(command(empty, jobs), env=env, cwd=workdir, reap=reap), jobs)
        cmd = command(input_file, jobs)
        for label in (f"PostgreSQL -j {jobs}, fresh", f"PostgreSQL -j {jobs}, again (upserts)"):
            t, used = with_server_cpu(cluster, partial(sandcrawler, cmd, env=env, cwd=workdir,
                                                       reap=reap))
            run = Run(label, t, used, success_count(t), *pg_counts(cluster, db))
            check(run, want)
            runs.append(run)
        drop_database(cluster, db)
    return runs


def show_fixed(t: Timing, jobs: int) -> None:
    print(f"   -j {jobs}, empty input: {t.wall:.2f} s wall, {t.cpu:.2f} s CPU "
          "(start-up, imports, schema check: included in every run)")


def summary(runs: list[Run], n: int, success: int, rounds: int) -> None:
    print(f"-- summary ({n:,} lines, {success:,} written; median and best of {rounds} "
          f"round{'s' if rounds > 1 else ''}; CPU: median)")
    print(f"   {'':<34} {'lines/s':>16} {'rows/s':>16} {'wall s':>6} "
          f"{'client CPU':>10} {'server CPU':>10}")
    print(f"   {'':<34} {'median':>8}{'best':>8} {'median':>8}{'best':>8} {'median':>6}")
    by_label: dict[str, list[Run]] = {}
    for run in runs:
        by_label.setdefault(run.label, []).append(run)
    for label, group in by_label.items():
        walls = [r.timing.wall for r in group]
        med, best = median(walls), min(walls)
        servers = [r.server_cpu for r in group if r.server_cpu is not None]
        server = f"{median(servers):8.1f} s" if servers else f"{'-':>10}"
        print(f"   {label:<34} {rate(n, med):8,.0f}{rate(n, best):8,.0f} "
              f"{rate(success, med):8,.0f}{rate(success, best):8,.0f} {med:6.2f} "
              f"{median([r.timing.cpu for r in group]):8.1f} s {server}")


def main() -> None:
    parser = arg_parser(__doc__, count="lines", default=100_000)
    parser.add_argument("--repeat", type=int, default=3, metavar="R",
                        help="rounds of the 8 runs (default: 3)")
    args = parser.parse_args()
    n: int = args.lines
    if not SAMPLE.is_file():
        skip(f"{SAMPLE} not found (set SANDCRAWLER_SHARED_DATA)")
    real = [line.rstrip("\n") for line in SAMPLE.read_text().splitlines() if line.strip()]

    print_header(f"sandcrawler pdftable backfill-cdx: {n:,} CDX lines from {len(real)} real, "
                 f"{args.repeat} rounds")
    runs: list[Run] = []
    with work_dir(args.out) as workdir:
        input_file = workdir / f"cdx_{n}.cdx"
        size = write_lines(input_file, cdx_variants(real, n))
        empty = workdir / "empty.cdx"
        empty.write_bytes(b"")
        want = expected(input_file)
        print(f"   input: {input_file} ({size / 1e6:,.1f} MB, {size / n:,.0f} bytes/line); "
              f"{want.success:,} HTTP 200 lines ({want.success / n:.0%}; the rest are skipped), "
              f"{want.keys:,} distinct sha1s among them")
        with durable_cluster() as cluster:
            print(f"   PostgreSQL: durable (fsync on), {cluster.bindir}")
            # After the cluster's start: the postmaster must not become our child.
            reap = become_subreaper()
            if not reap:
                print("   warning: cannot become a child subreaper: -j 2 CPU misses the workers")
            for rnd in range(args.repeat):
                print(f"-- round {rnd + 1}")
                runs += bench_sqlite(workdir, input_file, empty, want, reap, rnd)
                runs += bench_postgres(cluster, workdir, input_file, empty, want, reap, rnd)
    summary(runs, n, want.success, args.repeat)


if __name__ == "__main__":
    main()
