"""Matching at catalog sizes 10^4, 10^5, 10^6, and verified identifier lookups.

Scale: the refs set's catalog (bench/data/match/refs/, 2,047 real works) padded with
synthetic works (bench/build/match_synth.py) to each size; the same queries (the first
``--queries`` raw reference strings of the refs set) matched with ``-j 1`` in each.
Time per match is the wall time less the command's start-up (``match biblio`` on no
input in the same data directory), over the queries. Goal (issue 25): from 10^4 to
10^6 records, time per match grows at most 2x. Also: index records/s and bytes/record
at each size, and precision/recall (more records, more lookalikes).

Lookups: in the largest data directory of at most 10^5 records, ``--lookups`` queries
each carrying the right DOI with the work's title, authors and year, as a document's
metadata would (goal: >= 5,000 verified lookups/s).

Run:  python bench/perf/match_scale.py [--sizes 10000,100000,1000000] [--queries 500]
                                  [--lookups 20000] [--out bench/out]
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for _common.py
import orjson
from _common import print_header, rate
from match_eval import GOLD, Run, fmt_rate, net_rate, read_lines, write_catalog, write_jsonl
from match_score import score
from match_synth import SynthWorks
from match_works import DATA_DIR, biblio_of

REPO = Path(__file__).resolve().parents[2]


def lookup_queries(catalog: list[dict[str, Any]], pad: int, n: int,
                   seed: int) -> list[dict[str, Any]]:
    """Queries with the right DOI and the work's title, authors and year."""
    rng = random.Random(seed)
    works = [w for w in catalog if w.get("title")]
    synth = SynthWorks(seed)
    works += [w for w in synth.works(min(pad, 4 * n)) if w.get("title") and w.get("issued")]
    out = []
    for i, w in enumerate(rng.choices(works, k=n)):
        b = biblio_of(w)
        out.append({"id": f"lookup-{i:06d}", "doi": w["DOI"], "title": b["title"],
                    "authors": b["authors"], "date": b["date"], "expected_doi": w["DOI"]})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--lookups", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "out")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    catalog = read_lines(DATA_DIR / "refs" / "catalog.jsonl.gz")
    queries = read_lines(DATA_DIR / "refs" / "queries.jsonl.gz")[: args.queries]
    print_header(f"sandcrawler match at {', '.join(f'{s:,}' for s in sizes)} catalog records; "
                 f"{len(queries)} raw references; {args.lookups:,} verified DOI lookups")
    report: dict[str, Any] = {"sizes": {}, "queries": len(queries)}
    lookup_size = max((s for s in sizes if s <= 100_000), default=min(sizes))
    for size in sizes:
        workdir = Path(tempfile.mkdtemp(prefix=f"match-scale-{size}-"))
        try:
            run = Run(workdir)
            pad = max(0, size - len(catalog))
            catalog_file = workdir / "catalog.jsonl"
            n = write_catalog(catalog_file, catalog, pad, args.seed)
            persist, index, again, index_bytes, _ = run.load(catalog_file)
            catalog_file.unlink()
            qfile = workdir / "queries.jsonl"
            write_jsonl(qfile, [{k: v for k, v in q.items() if k not in GOLD} for q in queries])
            empty = workdir / "empty.jsonl"
            empty.write_bytes(b"")
            # the fixed cost grows with the catalog: once is enough past 10^5 records
            startup = min(run.sc("match", "biblio", str(empty)).wall
                          for _ in range(3 if n <= 100_000 else 1))
            t, rows = run.match(qfile, 1)
            s = score(queries, rows)
            per_match = (t.wall - startup) / len(queries)
            row: dict[str, Any] = {
                "records": n, "persist_s": persist.wall, "index_s": index.wall,
                "index_noop_s": again.wall,
                "index_records_per_s_net": net_rate(n, index.wall - again.wall),
                "index_bytes_per_record": index_bytes / n, "startup_s": startup,
                "match_wall_s": t.wall, "ms_per_match": per_match * 1000,
                "precision": s.precision, "recall": s.recall,
            }
            print(f"   {n:>9,} records: persist {persist.wall:6.1f} s, index {index.wall:6.1f} s "
                  f"({fmt_rate(row['index_records_per_s_net'])} records/s net), "
                  f"{row['index_bytes_per_record']:,.0f} bytes/record; match "
                  f"{per_match * 1000:6.2f} ms/ref after {startup:.2f} s start-up; "
                  f"P {s.precision or 0:.4f} R {s.recall or 0:.4f}")
            if size == lookup_size and args.lookups:
                lq = lookup_queries(catalog, pad, args.lookups, args.seed)
                lfile = workdir / "lookups.jsonl"
                write_jsonl(lfile, [{k: v for k, v in q.items() if k not in GOLD} for q in lq])
                lt, lrows = run.match(lfile, 1)
                ls = score(lq, lrows)
                lrate = net_rate(len(lq), lt.wall - startup)
                statuses = Counter(str(r.get("status")) for r in lrows)
                report["lookups"] = {"records": n, "queries": len(lq), "wall_s": lt.wall,
                                     "statuses": dict(statuses),
                                     "per_s": rate(len(lq), lt.wall),
                                     "per_s_after_startup": lrate,
                                     "matched": ls.matched, "correct": ls.correct}
                print(f"   verified DOI lookups at {n:,} records: {len(lq):,} in {lt.wall:.2f} s "
                      f"= {rate(len(lq), lt.wall):,.0f}/s ({fmt_rate(lrate)}/s after start-up); "
                      f"{ls.correct:,} confirmed, {ls.matched - ls.correct} wrong, "
                      f"{len(lq) - ls.matched:,} not confirmed ({dict(statuses)})")
            report["sizes"][str(size)] = row
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
    rows_ = list(report["sizes"].values())
    if len(rows_) >= 2:
        growth = rows_[-1]["ms_per_match"] / rows_[0]["ms_per_match"]
        report["growth"] = growth
        print(f"   time per match, {rows_[-1]['records']:,} vs {rows_[0]['records']:,} records: "
              f"{growth:.2f}x (goal <= 2x)")
    args.out.mkdir(parents=True, exist_ok=True)
    out = args.out / "match_scale.json"
    out.write_bytes(orjson.dumps(report, option=orjson.OPT_INDENT_2))
    print(f"written {out}")


if __name__ == "__main__":
    main()
