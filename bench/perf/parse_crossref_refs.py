"""``sandcrawler parse-crossref-refs``: works per second and CPU per work, either parser.

``--parser crf`` (the embedded CRF parser, the default): N Crossref-shaped works made
from the two real works (distinct DOI and ``indexed``, the same number of references),
whose unstructured reference strings are replaced by the ~8,700 distinct strings of
GROBID's annotated corpus, in rotation, so the parser sees varied real references
rather than the same 27 again and again. No GROBID. Printed: wall time and works/s
beside the seed's 368 works/s (10.0k works in 27 s with five parallel GROBID workers),
references/s, CPU per work.

``--parser grobid``: the pipeline's own CPU cost per work, GROBID excluded, as follows.

Input: N synthetic works made from the two real Crossref API works (distinct DOI
``<doi>.b<i>`` and ``indexed``, the real reference lists). GROBID is FakeGrobid, loaded
with the real TEI that GROBID returned for those references, serving from a thread of
this benchmark process (with TCP_NODELAY: see ``_common.fake_grobid``).

For each -j (default 1 and 4), ``sandcrawler parse-crossref-refs FILE -j J`` runs as a
subprocess with SANDCRAWLER_GROBID_URL set and stdout to /dev/null. Printed:

- wall time and works/s (bounded here by the fake server sharing the machine: compare
  with the seed's 368 works/s, 10.0k works in 27 s with five parallel GROBID workers,
  only loosely: that figure includes a real GROBID's parsing);
- CPU ms per work of the sandcrawler process and its worker processes: the
  RUSAGE_CHILDREN delta around the subprocess. This benchmark makes itself a child
  subreaper, so the multiprocessing forkserver (which sandcrawler never waits for) and
  its workers are adopted and reaped here and their CPU is counted. The fake server's
  CPU is in this process's RUSAGE_SELF and is excluded (shown separately). Also shown
  net of start-up: the CPU of a run on 2 x J works in batches of 1 (which starts every
  worker process) is subtracted, leaving the marginal cost per work. Goal: < 0.5 ms.

Run:  python bench/perf/parse_crossref_refs.py [--parser crf|grobid] [--works 10000] [--jobs 1 2]
                                          [--out bench/out]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for _common.py
import orjson
from _common import (
    Timing,
    arg_parser,
    become_subreaper,
    bench_env,
    corpus_reference_strings,
    fake_grobid,
    load_works,
    print_header,
    rate,
    require_fixtures,
    sandcrawler,
    synthetic_work,
    synthetic_work_lines,
    work_dir,
    write_lines,
)

from sandcrawler.refs.crossref_works import select_references

SEED_RATE = 368.0
GOAL_MS = 0.5
_SUMMARY = re.compile(r"parse-crossref-refs: (\d+) records in [\d.]+s \([^)]*\): (.*)")


def self_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def check_summary(t: Timing, n: int) -> str:
    """The run's summary line; every work must have succeeded (or been empty)."""
    match = _SUMMARY.search(t.stderr)
    if match is None or int(match.group(1)) != n:
        sys.exit(f"unexpected parse-crossref-refs summary (expected {n} records):\n{t.stderr}")
    statuses = dict(
        (status, int(count)) for status, count in
        (part.rsplit(" ", 1) for part in match.group(2).split(", "))
    )
    if set(statuses) - {"success", "empty"}:
        sys.exit(f"some works failed: {match.group(0)}\n{t.stderr}")
    return match.group(2)


def corpus_work_lines(envelopes: list[dict], n: int) -> tuple[list[bytes], int]:
    """Works whose unstructured references are the GROBID corpus's strings, rotating."""
    strings = corpus_reference_strings()
    lines, refs, k = [], 0, 0
    for i in range(n):
        env = synthetic_work(envelopes[i % len(envelopes)], i)
        work = env["message"]
        count = len(select_references(work))
        work["reference"] = [
            {"key": f"{work['DOI']}-ref{j}", "unstructured": strings[(k + j) % len(strings)]}
            for j in range(count)
        ]
        k += count
        refs += len(select_references(work))
        lines.append(orjson.dumps(env) + b"\n")
    return lines, refs


def main_crf(args: argparse.Namespace) -> None:
    n: int = args.works
    works, _ = require_fixtures()
    cpus = os.cpu_count() or 1
    print_header(f"sandcrawler parse-crossref-refs --parser crf: {n:,} works, -j {args.jobs}")
    subreaper = become_subreaper()
    with work_dir(args.out) as workdir:
        lines, refs = corpus_work_lines(load_works(works), n)
        input_file = workdir / f"crossref_works_corpus_refs_{n}.json"
        size = write_lines(input_file, lines)
        print(f"   input: {input_file} ({size / 1e6:,.1f} MB); {refs:,} references to parse "
              f"({refs / n:.1f} per work), strings from the GROBID corpus")
        env = bench_env(workdir)
        print(f"   seed: {SEED_RATE:,.0f} works/s (real GROBID, 5 parallel workers)")
        for jobs in args.jobs:
            note = f"  (-j {jobs} on {cpus} cores over-subscribes)" if jobs > cpus else ""
            t = sandcrawler(["parse-crossref-refs", str(input_file), "-j", str(jobs)],
                            env=env, cwd=workdir, stdout=subprocess.DEVNULL, reap=subreaper)
            statuses = check_summary(t, n)
            print(f"-- -j {jobs}{note}")
            print(f"   wall {t.wall:7.2f} s   {rate(n, t.wall):8,.0f} works/s   "
                  f"({rate(n, t.wall) / SEED_RATE:.1f}x seed)   {rate(refs, t.wall):,.0f} refs/s")
            print(f"   CPU  {t.cpu:7.2f} s   {t.cpu / n * 1e3:.2f} ms/work   "
                  f"{rate(refs, t.cpu):,.0f} refs/s per core; {statuses}")


def main() -> None:
    parser = arg_parser(__doc__, count="works", default=10_000)
    parser.add_argument("--parser", choices=["crf", "grobid"], default="crf",
                        help="citation parser (default: crf, the embedded one)")
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2], metavar="J",
                        help="-j values to run (default: 1 2)")
    args = parser.parse_args()
    if args.parser == "crf":
        main_crf(args)
        return
    n: int = args.works
    works, tei = require_fixtures()
    cpus = os.cpu_count() or 1

    print_header(f"sandcrawler parse-crossref-refs: {n:,} works, -j {args.jobs}")
    subreaper = become_subreaper()
    if not subreaper:
        print("   warning: cannot become a child subreaper: -j > 1 CPU misses the workers")
    with work_dir(args.out) as workdir, fake_grobid(tei) as grobid:
        envelopes = load_works(works)
        input_file = workdir / f"crossref_works_{n}.json"
        size = write_lines(input_file, synthetic_work_lines(envelopes, n))
        per_base = [len(select_references(e["message"])) for e in envelopes]
        refs = sum(per_base[i % len(per_base)] for i in range(n))
        print(f"   input: {input_file} ({size / 1e6:,.1f} MB); FakeGrobid at {grobid.url} "
              f"({len(grobid.known)} known citations)")
        print(f"   {refs:,} references to parse ({refs / n:.1f} per work; "
              f"{' and '.join(map(str, per_base))} in the real works)")
        env = bench_env(workdir, grobid_url=grobid.url)

        def run(jobs: int, *extra: str) -> tuple[Timing, float, int]:
            grobid.requests.clear()
            before = self_cpu()
            t = sandcrawler(["parse-crossref-refs", str(input_file), "-j", str(jobs), *extra],
                            env=env, cwd=workdir, stdout=subprocess.DEVNULL, reap=subreaper)
            return t, self_cpu() - before, len(grobid.requests)

        print(f"   seed: {SEED_RATE:,.0f} works/s (real GROBID, 5 parallel workers); "
              f"goal: < {GOAL_MS} ms CPU per work")
        for jobs in args.jobs:
            note = f"  (-j {jobs} on {cpus} cores over-subscribes)" if jobs > cpus else ""
            print(f"-- -j {jobs}{note}")
            # Start-up: 2 x jobs works in batches of 1, so that every worker process starts.
            small = min(2 * jobs, n)
            fixed = min((run(jobs, "--limit", str(small), "--batch-size", "1")[0]
                         for _ in range(2)), key=lambda t: t.cpu)
            t, server, requests = run(jobs)
            statuses = check_summary(t, n)
            per_work = t.cpu / n * 1e3
            net = max(t.cpu - fixed.cpu, 0.0) / max(n - small, 1) * 1e3
            net_ref = net * n / refs if refs else float("nan")
            print(f"   wall {t.wall:7.2f} s   {rate(n, t.wall):8,.0f} works/s   "
                  f"({rate(n, t.wall) / SEED_RATE:.1f}x seed)")
            print(f"   CPU  {t.cpu:7.2f} s   (user {t.user:.2f}, sys {t.sys:.2f})   "
                  f"{per_work:.3f} ms/work all in")
            print(f"   start-up ({small} works, every worker started): {fixed.cpu:.2f} s CPU; "
                  f"net of it {net:.3f} ms/work ({net_ref:.3f} ms/reference): "
                  f"goal < {GOAL_MS} ms/work {'met' if net < GOAL_MS else 'NOT met'}")
            print(f"   fake GROBID + benchmark CPU (excluded): {server:.2f} s, "
                  f"{requests:,} processCitationList requests; {statuses}")

if __name__ == "__main__":
    main()
