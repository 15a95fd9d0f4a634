"""Matching accuracy and speed on the evaluation sets (docs/matching-evaluation.md).

For each set (bench/data/match/<set>/, built by bench/build/match_data.py), in a fresh data
directory (SQLite, nothing to start):

  1. ``sandcrawler persist crossref`` the set's catalog, plus ``--pad N`` synthetic
     works (bench/build/match_synth.py) so the right answer hides among more records;
  2. ``sandcrawler match index --rebuild``, timed: records/s (also net of a second
     ``match index`` with nothing to do), and the index's size per record (the files
     under the data directory's ``match/``);
  3. ``sandcrawler match biblio`` on the queries (gold fields stripped) with ``-j 1``
     and ``-j 2``, timed: queries/s with and without start-up (an empty run's wall time);
  4. scoring (bench/eval/match_score.py): precision, recall, per-status, per-case, misses.

Prints a table per set and writes bench/out/match_eval.json (figures) and
bench/out/match_misses_<set>.jsonl (every query the matcher got wrong).

``--engine solr`` does the same with the index on Apache Solr (issue 28): a SolrCloud
cluster of the test kit (2 nodes, ZooKeeper; sandcrawler_testkit.solr_cluster) started
in a temporary directory, each set's catalog persisted without feeding the engine, then
loaded by ``match index --engine --rebuild`` into a collection of 2 shards of 2 replicas
behind the alias ``eval-<set>``; the size is the index bytes of every replica. Its
figures go to match_eval_solr.json and match_misses_solr_<set>.jsonl.

Run:  python bench/eval/match_eval.py [--sets refs,headers,hard,pairs] [--pad 20000]
                                 [--jobs 1,2] [--out bench/out] [--keep DIR]
                                 [--engine embedded|solr]
"""

from __future__ import annotations

import argparse
import gzip
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for _common.py
import orjson
from _common import Timing, bench_env, print_header, rate, sandcrawler, skip
from match_score import score, table
from match_synth import SynthWorks
from match_works import DATA_DIR

from sandcrawler.match.solr import SolrAdmin, SolrClient
from sandcrawler_testkit.solr_cluster import SolrCluster, SolrUnavailable, find_solr_libs

SETS = ("refs", "headers", "hard", "pairs")
GOLD = ("expected_doi", "case", "noise")
REPO = Path(__file__).resolve().parents[2]


def read_lines(path: Path) -> list[dict[str, Any]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as f:
        return [orjson.loads(line) for line in f if line.strip()]


def write_jsonl(path: Path, rows: Iterator[dict[str, Any]] | list[dict[str, Any]]) -> int:
    n = 0
    with open(path, "wb") as f:
        for row in rows:
            f.write(orjson.dumps(row) + b"\n")
            n += 1
    return n


def dir_sizes(root: Path) -> dict[str, int]:
    out = {}
    for dirpath, _, files in os.walk(root):
        for name in files:
            p = Path(dirpath) / name
            try:
                out[str(p.relative_to(root))] = p.stat().st_size
            except FileNotFoundError:
                continue
    return out


def write_catalog(path: Path, catalog: list[dict[str, Any]], pad: int, seed: int) -> int:
    n = 0
    with open(path, "wb") as f:
        for work in catalog:
            f.write(orjson.dumps(work) + b"\n")
            n += 1
        if pad:
            for line in SynthWorks(seed).lines(pad):
                f.write(line)
                n += 1
    return n


def parse_output(text: str) -> list[dict[str, Any]]:
    rows = []
    for line in text.splitlines():
        if line.strip():
            try:
                rows.append(orjson.loads(line))
            except orjson.JSONDecodeError:
                rows.append({"id": None, "status": "(unparsable output)", "raw": line[:200]})
    return rows


def net_rate(n: int, seconds: float) -> float | None:
    """n / seconds once a fixed cost is taken off; None when too little is left to time."""
    return n / seconds if seconds > 0.05 else None


def fmt_rate(r: float | None) -> str:
    return f"{r:,.0f}" if r is not None else "n/a"


class Run:
    """One data directory: persist, index, match; on the embedded index, or on the
    Solr cluster ``solr`` (the collection behind the alias ``alias``)."""

    def __init__(self, workdir: Path, solr: SolrCluster | None = None,
                 alias: str = "") -> None:
        self.workdir = workdir
        self.data = workdir / "data"
        self.solr = solr
        self.alias = alias
        settings = {"data_dir": str(self.data)}
        if solr is not None:
            # feed off: the catalog is loaded once, by match index --engine --rebuild
            settings.update(match_engine="solr", match_engine_urls=orjson.dumps(solr.urls)
                            .decode(), match_engine_collection=alias, match_feed="false",
                            match_engine_shards="2", match_engine_replicas="2")
        self.env = bench_env(workdir, **settings)
        self.index_args = ("--engine",) if solr is not None else ()

    def sc(self, *args: str) -> Timing:
        return sandcrawler(list(args), env=self.env, cwd=self.workdir)

    def load(self, catalog_file: Path) -> tuple[Timing, Timing, Timing, int, list[str]]:
        """persist + index; the index's bytes and the files (or collection) it wrote."""
        persist = self.sc("persist", "crossref", str(catalog_file))
        # persist crossref keeps the index current as it writes; --rebuild times a build
        # of the whole index from the table, as after a bulk load
        index = self.sc("match", "index", *self.index_args, "--rebuild")
        if self.solr is not None:
            with SolrClient(self.solr.urls) as client:
                admin = SolrAdmin(client, self.alias, shards=2, replicas=2)
                collection = admin.target() or self.alias
                size, files = admin.index_bytes(collection), [f"solr:{collection}"]
        else:
            found = {k: v for k, v in dir_sizes(self.data).items() if k.startswith("match")}
            size, files = sum(found.values()), sorted(found)
        # a second run has nothing new to index: its wall time is the command's fixed cost
        again = self.sc("match", "index", *self.index_args)
        return persist, index, again, size, files

    def match(self, queries_file: Path, jobs: int) -> tuple[Timing, list[dict[str, Any]]]:
        t = self.sc("match", "biblio", str(queries_file), "-j", str(jobs))
        return t, parse_output(t.stdout)


def startup_seconds(run: Run) -> float:
    """Wall time of ``match biblio`` on no input: start-up and index opening."""
    empty = run.workdir / "empty.jsonl"
    empty.write_bytes(b"")
    return min(run.sc("match", "biblio", str(empty)).wall for _ in range(3))


def evaluate(name: str, args: argparse.Namespace, out_dir: Path,
             solr: SolrCluster | None = None) -> dict[str, Any]:
    set_dir = DATA_DIR / name
    catalog = read_lines(set_dir / "catalog.jsonl.gz")
    queries = read_lines(set_dir / "queries.jsonl.gz")
    keep = args.keep / name if args.keep else None
    workdir = Path(tempfile.mkdtemp(prefix=f"match-eval-{name}-")) if keep is None else keep
    if keep is not None:
        shutil.rmtree(keep, ignore_errors=True)
        keep.mkdir(parents=True)
    try:
        run = Run(workdir, solr, f"eval-{name}")
        catalog_file = workdir / "catalog.jsonl"
        n_catalog = write_catalog(catalog_file, catalog, args.pad, args.seed)
        queries_file = workdir / "queries.jsonl"
        write_jsonl(queries_file, [{k: v for k, v in q.items() if k not in GOLD}
                                   for q in queries])
        persist, index, index_again, index_bytes, index_files = run.load(catalog_file)
        index_net = index.wall - index_again.wall
        startup = startup_seconds(run)
        timings: dict[str, Any] = {}
        results: list[dict[str, Any]] = []
        for jobs in args.jobs:
            t, rows = run.match(queries_file, jobs)
            net = t.wall - startup
            timings[f"j{jobs}"] = {"wall": t.wall, "cpu": t.cpu,
                                   "per_s": rate(len(queries), t.wall),
                                   "per_s_after_startup": net_rate(len(queries), net)}
            if not results:
                results = rows
            elif [(r.get("id"), r.get("status"), r.get("doi")) for r in rows] != \
                    [(r.get("id"), r.get("status"), r.get("doi")) for r in results]:
                timings[f"j{jobs}"]["differs_from_j1"] = True
        order_ok = [str(r.get("id")) for r in results] == [str(q["id"]) for q in queries]
        s = score(queries, results)
        print(table(name, s))
        print(f"   catalog {n_catalog:,} works ({len(catalog):,} + {args.pad:,} synthetic); "
              f"persist {persist.wall:.1f} s; index {index.wall:.2f} s = "
              f"{rate(n_catalog, index.wall):,.0f} records/s "
              f"({fmt_rate(net_rate(n_catalog, index_net))}/s without the "
              f"{index_again.wall:.2f} s of a run with nothing to do), "
              f"{index_bytes / max(n_catalog, 1):,.0f} bytes/record ({', '.join(index_files)})")
        for key, t in timings.items():
            print(f"   match biblio -{key}: {t['wall']:.2f} s wall, {t['per_s']:,.0f} queries/s "
                  f"({fmt_rate(t['per_s_after_startup'])}/s after {startup:.2f} s start-up)"
                  + ("  OUTPUT DIFFERS FROM -j 1" if t.get("differs_from_j1") else ""))
        if not order_ok:
            print("   OUTPUT NOT IN INPUT ORDER (or lines missing)")
        misses_file = out_dir / f"match_misses{'_solr' if solr else ''}_{name}.jsonl"
        write_jsonl(misses_file, [m.__dict__ for m in s.misses])
        return {
            "engine": args.engine, "catalog": n_catalog, "catalog_real": len(catalog),
            "pad": args.pad,
            "queries": len(queries), "persist_s": persist.wall, "index_s": index.wall,
            "index_records_per_s": rate(n_catalog, index.wall),
            "index_noop_s": index_again.wall,
            "index_records_per_s_net": net_rate(n_catalog, index_net), "index_bytes": index_bytes,
            "index_bytes_per_record": index_bytes / max(n_catalog, 1),
            "index_files": index_files, "startup_s": startup, "match": timings,
            "output_in_order": order_ok, "score": s.to_json(max_misses=0),
            "misses_file": str(misses_file.relative_to(REPO))
            if misses_file.is_relative_to(REPO) else str(misses_file),
        }
    finally:
        if keep is None:
            shutil.rmtree(workdir, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--pad", type=int, default=20_000,
                        help="synthetic works added to each catalog (default 20,000)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the synthetic works")
    parser.add_argument("--jobs", default="1,2", help="the -j values to time (first scored)")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "out")
    parser.add_argument("--keep", type=Path, help="keep each set's data directory here")
    parser.add_argument("--engine", choices=("embedded", "solr"), default="embedded",
                        help="the match index: embedded (SQLite), or a Solr cluster of the "
                             "test kit started for the run")
    args = parser.parse_args()
    args.jobs = [int(j) for j in args.jobs.split(",")]
    args.out.mkdir(parents=True, exist_ok=True)
    names = [s for s in args.sets.split(",") if s]
    for s in names:
        if s not in SETS:
            sys.exit(f"unknown set {s!r}; sets: {', '.join(SETS)}")
    print_header(f"sandcrawler match on the {args.engine} index: {', '.join(names)} "
                 f"(+{args.pad:,} synthetic works each)")
    with ExitStack() as stack:
        solr = None
        if args.engine == "solr":
            try:
                libs = find_solr_libs()
            except SolrUnavailable as e:
                skip(str(e))
            solr_dir = Path(stack.enter_context(
                tempfile.TemporaryDirectory(prefix="match-eval-solr-")))
            solr = stack.enter_context(SolrCluster(libs, solr_dir, nodes=2))
        report = {name: evaluate(name, args, args.out, solr) for name in names}
    out = args.out / ("match_eval.json" if args.engine == "embedded" else "match_eval_solr.json")
    out.write_bytes(orjson.dumps(report, option=orjson.OPT_INDENT_2))
    print(f"written {out}")


if __name__ == "__main__":
    main()
