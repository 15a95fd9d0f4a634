"""Loading grobid_refs JSON lines into PostgreSQL: the seed's jq | psql COPY recipe
against ``sandcrawler persist grobid-refs``.

Input: the real ``sandcrawler parse-crossref-refs`` output for the two real Crossref
works (against FakeGrobid answering with the real GROBID TEI), replicated to N rows
with distinct ``source_id`` (``<doi>.b<i>``) and ``source_ts``.

Measured, in one durable (fsync on) throwaway PostgreSQL cluster, each into a fresh
database initialised with ``sandcrawler db init``:

  (a) recipe   cat FILE | jq -rc '[...] | @tsv' | psql -c "COPY grobid_refs ... FROM STDIN"
  (b) persist  sandcrawler persist grobid-refs FILE            (empty table: all inserts)
  (c) rerun    (b) again on the same database                  (every row an upsert hit)

The sides alternate (--repeat rounds, recipe first in even rounds) and the median and
best of each are printed with the ratio persist/recipe. Row counts are checked, and in
the first round a checksum of the loaded content is compared between (a) and (b).
Wall time is the figure; client CPU (the command's process tree) and server CPU (all
PostgreSQL processes) are printed to show where the time goes.

Run:  python bench/perf/persist_grobid_refs.py [--rows 100000] [--repeat 3] [--jobs 1]
                                                [--out bench/out]
"""

from __future__ import annotations

import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for _common.py
import orjson
from _common import (
    Timing,
    arg_parser,
    bench_env,
    count_rows,
    drop_database,
    durable_cluster,
    fake_grobid,
    init_database,
    load_works,
    median,
    print_header,
    psql,
    rate,
    replicate_rows,
    require_fixtures,
    run_timed,
    sandcrawler,
    skip,
    with_server_cpu,
    work_dir,
    write_lines,
)

from sandcrawler_testkit.postgres import PostgresCluster

COPY_SQL = (
    "COPY grobid_refs (source, source_id, source_ts, refs_json) FROM STDIN (DELIMITER E'\\t');"
)
JQ_FILTER = "[.source, .source_id, .source_ts, (.refs_json | tostring)] | @tsv"
# Order-independent digest of the loaded content, equal for equal tables.
CHECKSUM_SQL = (
    "SELECT count(*) || ':' || sum(hashtext(source || '|' || source_id || '|' "
    "|| coalesce(source_ts::text, '') || '|' || refs_json::text)::bigint) FROM grobid_refs"
)


@dataclass
class Run:
    side: str
    wall: float
    client_cpu: float
    server_cpu: float | None


def real_rows(works: list[Path], tei: list[Path], workdir: Path) -> list[dict[str, Any]]:
    """``sandcrawler parse-crossref-refs`` on the real works against the real TEI."""
    works_file = workdir / "real_works.json"
    write_lines(works_file, (orjson.dumps(w) + b"\n" for w in load_works(works)))
    with fake_grobid(tei) as grobid:
        env = bench_env(workdir, grobid_url=grobid.url)
        out = sandcrawler(["parse-crossref-refs", str(works_file), "--silent"], env=env,
                          cwd=workdir)
    rows = [orjson.loads(line) for line in out.stdout.splitlines() if line.strip()]
    if len(rows) != len(works) or not all(r["refs_json"] for r in rows):
        sys.exit(f"expected {len(works)} rows with parsed refs, got: {out.stdout[:500]}")
    return rows


def recipe_command(cluster: PostgresCluster, database: str, input_file: Path) -> str:
    psql_cmd = [*cluster.psql_args, "-d", database, "-c", COPY_SQL]
    return (f"cat {shlex.quote(str(input_file))} | jq -rc {shlex.quote(JQ_FILTER)} | "
            f"{shlex.join(psql_cmd)}")


def timed_side(cluster: PostgresCluster, side: str, cmd: list[str] | str, env: dict[str, str],
               workdir: Path) -> tuple[Run, str]:
    def run() -> Timing:
        if isinstance(cmd, str):
            return run_timed(cmd, env=env, cwd=workdir, shell=True)
        return sandcrawler(cmd, env=env, cwd=workdir)

    t, used = with_server_cpu(cluster, run)
    return Run(side, t.wall, t.cpu, used), (t.stdout + t.stderr).strip()


def fixed_cost(cluster: PostgresCluster, workdir: Path, jobs: int) -> float:
    """Wall time of ``persist grobid-refs`` on an empty file: start-up, imports, schema check."""
    empty = workdir / "empty.json"
    empty.write_bytes(b"")
    env = bench_env(workdir, database_url=init_database(cluster, "bench_empty", workdir))
    wall = min(
        sandcrawler(["persist", "grobid-refs", str(empty), "-j", str(jobs)], env=env,
                    cwd=workdir).wall
        for _ in range(2)
    )
    drop_database(cluster, "bench_empty")
    return wall


def show(run: Run, rows: int, note: str = "") -> None:
    server = f"{run.server_cpu:6.1f}" if run.server_cpu is not None else "     ?"
    print(f"   {run.side:<8} {run.wall:8.2f} s {rate(rows, run.wall):10,.0f} rows/s   "
          f"client CPU {run.client_cpu:6.1f} s   server CPU {server} s   {note}")


def main() -> None:
    parser = arg_parser(__doc__, count="rows", default=100_000, jobs=True)
    parser.add_argument("--repeat", type=int, default=3, metavar="R",
                        help="rounds of (a), (b), (c), sides alternating (default: 3)")
    args = parser.parse_args()
    n: int = args.rows
    works, tei = require_fixtures()
    if shutil.which("jq") is None:
        skip("jq not installed")

    print_header(f"persist grobid-refs vs jq | psql COPY: {n:,} rows, {args.repeat} rounds")
    with work_dir(args.out) as workdir:
        base = real_rows(works, tei, workdir)
        input_file = workdir / f"grobid_refs_{n}.json"
        size = write_lines(input_file, replicate_rows(base, n))
        print(f"   input: {input_file} ({size / 1e6:,.1f} MB, {size / n / 1e3:.1f} kB/row; "
              f"from {len(base)} real rows with "
              f"{', '.join(str(len(r['refs_json'])) for r in base)} refs)")
        runs: dict[str, list[Run]] = {"recipe": [], "persist": [], "rerun": []}
        with durable_cluster() as cluster:
            print(f"   PostgreSQL: durable (fsync on), {cluster.bindir}")
            fixed = fixed_cost(cluster, workdir, args.jobs)
            print(f"   fixed cost of one sandcrawler persist run (empty input): {fixed:.2f} s wall"
                  " (included in (b) and (c))")
            for rnd in range(args.repeat):
                print(f"-- round {rnd + 1}")
                checksums: dict[str, str] = {}
                sides = ["recipe", "persist"] if rnd % 2 == 0 else ["persist", "recipe"]
                for side in sides:
                    db = f"bench_{side}_{rnd}"
                    url = init_database(cluster, db, workdir)
                    if side == "recipe":
                        cmd: list[str] | str = recipe_command(cluster, db, input_file)
                        run, out = timed_side(cluster, "recipe", cmd, bench_env(workdir), workdir)
                        runs["recipe"].append(run)
                        show(run, n, out.splitlines()[-1] if out else "")
                    else:
                        env = bench_env(workdir, database_url=url)
                        cmd = ["persist", "grobid-refs", str(input_file), "-j", str(args.jobs)]
                        run, out = timed_side(cluster, "persist", cmd, env, workdir)
                        runs["persist"].append(run)
                        show(run, n)
                        run, out = timed_side(cluster, "rerun", cmd, env, workdir)
                        runs["rerun"].append(run)
                        show(run, n)
                    got = count_rows(cluster, db, "grobid_refs")
                    if got != n:
                        sys.exit(f"{db}: {got:,} rows in grobid_refs, expected {n:,}")
                    if rnd == 0:
                        checksums[side] = psql(cluster, db, CHECKSUM_SQL)
                    drop_database(cluster, db)
                print(f"   row counts: {n:,} in both databases")
                if checksums:
                    same = checksums["recipe"] == checksums["persist"]
                    print(f"   content checksum recipe vs persist: "
                          f"{'equal' if same else 'DIFFERENT'} ({checksums})")

        print("-- summary (wall time; median and best of "
              f"{args.repeat} round{'s' if args.repeat > 1 else ''})")
        for side, label in (("recipe", "(a) jq | psql COPY"),
                            ("persist", "(b) sandcrawler persist grobid-refs, fresh db"),
                            ("rerun", "(c) (b) again, all upserts hit existing rows")):
            walls = [r.wall for r in runs[side]]
            print(f"   {label:<48} median {rate(n, median(walls)):10,.0f} rows/s   "
                  f"best {rate(n, min(walls)):10,.0f} rows/s")
        med = {s: median([r.wall for r in runs[s]]) for s in runs}
        best = {s: min(r.wall for r in runs[s]) for s in runs}
        for s in ("persist", "rerun"):
            print(f"   ratio ours/recipe (rows/s) {s:<8} median {med['recipe'] / med[s]:5.2f}   "
                  f"best {best['recipe'] / best[s]:5.2f}")


if __name__ == "__main__":
    main()
