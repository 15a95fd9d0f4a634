"""``sandcrawler extract``: PDFs per second per core for the whole command, net of start-up.

Input: the PDFs under ``--pdfs DIR`` (default ``../shared/data/pdfs``: 8 real papers,
1 to 46 pages), copied ``--copies N`` times into a scratch directory (default: enough
copies for about ``--seconds`` of work at -j 1, from one timed pass over the set).
The command walks that directory, so the run is one process tree from start to end.

For each ``-j`` (default 1 and 2):
- start-up: the whole command on one copy of the smallest PDF (median of 3: process
  start, imports, model loading, one small PDF);
- the run: ``sandcrawler extract -j J DIR`` on the copies; wall and CPU seconds of
  the whole process tree (its per-PDF child processes included);
- net of start-up: (wall(N copies) - wall(start-up)) per PDF; PDFs/s per core =
  PDFs / net wall / J; also PDFs per net CPU second, which other users of the
  machine disturb less than wall time; pages/s from the lines' ``pages``.
  Goal: >= 4 PDFs/s per core (GROBID's full text: about 1 PDF/s per core);
- where the time goes: the sum of the lines' ``seconds`` (the extraction of each
  PDF as the command measures it) against the wall time, split by any per-stage
  timing the lines carry (a JSON object of numbers, e.g. layout vs models).

Skips (exit 0) without the PDFs. Prints figures; asserts nothing.

Run:  python bench/perf/extract_speed.py [--pdfs DIR ...] [--copies N] [-j 1,2]
                                    [--seconds 60] [--options OPTS] [--command CMD]
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for _common.py
import orjson
from _common import (
    SHARED_DATA,
    Timing,
    add_extract_options,
    become_subreaper,
    bench_env,
    busy_cores,
    cpu_ticks,
    median,
    print_header,
    resolve_command,
    run_timed,
    skip,
)

DEFAULT_DIR = SHARED_DATA / "pdfs"
GOAL_PER_CORE = 4.0
GROBID_PER_CORE = 1.0


@dataclass(slots=True)
class Run:
    """One timed ``extract`` run and what its lines say."""

    timing: Timing
    busy: float | None
    pdfs: int = 0
    pages: int = 0
    seconds: float = 0.0
    statuses: Counter[str] = field(default_factory=Counter)
    #: per-stage seconds summed over the lines: (object name, stage) -> seconds
    stages: dict[tuple[str, str], float] = field(default_factory=dict)


def read_lines(stdout: str) -> list[dict[str, Any]]:
    return [orjson.loads(x) for x in stdout.splitlines() if x.strip()]


def is_timing_object(value: object) -> bool:
    return (isinstance(value, dict) and bool(value)
            and all(isinstance(v, int | float) and not isinstance(v, bool)
                    for v in value.values()))


def summarise(timing: Timing, busy: float | None) -> Run:
    run = Run(timing, busy)
    for line in read_lines(timing.stdout):
        run.pdfs += 1
        run.statuses[str(line.get("status"))] += 1
        run.pages += int(line.get("pages") or 0)
        run.seconds += float(line.get("seconds") or 0.0)
        for key, value in line.items():
            if is_timing_object(value):
                for stage, secs in value.items():
                    run.stages[(key, stage)] = run.stages.get((key, stage), 0.0) + float(secs)
    return run


def extract(command: Sequence[str], options: Sequence[str], jobs: int, paths: Sequence[Path],
            workdir: Path) -> Run:
    before = cpu_ticks()
    timing = run_timed([*command, "extract", "-j", str(jobs), "--silent", *options,
                        *map(str, paths)],
                       env=bench_env(workdir), cwd=workdir, reap=True)
    return summarise(timing, busy_cores(before, cpu_ticks()))


def make_copies(pdfs: Sequence[Path], copies: int, root: Path) -> Path:
    """``copies`` copies of every PDF under ``root``/set-<copies> (c000/, c001/, ...)."""
    out = root / f"set-{copies}"
    if out.exists():
        return out
    for i in range(copies):
        d = out / f"c{i:03d}"
        d.mkdir(parents=True)
        for n, pdf in enumerate(pdfs):
            shutil.copyfile(pdf, d / f"{n:02d}-{pdf.name}")
    return out



def print_run(label: str, run: Run, start: Run, jobs: int) -> dict[str, Any]:
    t, n = run.timing, run.pdfs
    net_wall = t.wall - start.timing.wall
    net_cpu = t.cpu - start.timing.cpu
    per_core = n / net_wall / jobs if net_wall > 0 else float("inf")
    per_cpu = n / net_cpu if net_cpu > 0 else float("inf")
    ok = per_core >= GOAL_PER_CORE
    print(f"-- {label}: {n} PDFs, {run.pages} pages; statuses: "
          + ", ".join(f"{k} {v}" for k, v in sorted(run.statuses.items())))
    print(f"   wall {t.wall:.1f} s, CPU {t.cpu:.1f} s (user {t.user:.1f}, sys {t.sys:.1f}); "
          f"machine busy {run.busy:.2f} of 2 cores on average" if run.busy is not None else
          f"   wall {t.wall:.1f} s, CPU {t.cpu:.1f} s")
    print(f"   net of start-up: {net_wall:.1f} s wall, {net_cpu:.1f} s CPU; "
          f"{net_wall / n * 1e3:.0f} ms wall per PDF; {n / net_wall:.2f} PDFs/s; "
          f"{run.pages / net_wall:.1f} pages/s")
    print(f"   per core: {per_core:.2f} PDFs/s (wall, / -j {jobs}); {per_cpu:.2f} PDFs per CPU "
          f"second; goal >= {GOAL_PER_CORE:g}: {'met' if ok else 'NOT met'} "
          f"({per_core / GROBID_PER_CORE:.1f}x GROBID full text per core)")
    if run.seconds:
        print(f"   the lines' seconds: {run.seconds:.1f} s in all, {run.seconds / n * 1e3:.0f} ms "
              f"per PDF = {run.seconds / (net_wall * jobs):.0%} of the net wall x {jobs} "
              f"(the rest: start-up, walking, sandboxing, writing)")
    if run.stages:
        total = sum(run.stages.values())
        print("   by stage (summed over the lines): " + ", ".join(
            f"{obj}.{stage} {secs:.1f} s ({secs / total:.0%})"
            for (obj, stage), secs in sorted(run.stages.items(), key=lambda kv: -kv[1])))
    return {"label": label, "jobs": jobs, "pdfs": n, "pages": run.pages,
            "wall": round(t.wall, 3), "cpu": round(t.cpu, 3),
            "net_wall": round(net_wall, 3), "net_cpu": round(net_cpu, 3),
            "pdfs_per_s_per_core": round(per_core, 3), "pdfs_per_cpu_s": round(per_cpu, 3),
            "pages_per_s": round(run.pages / net_wall, 2), "busy_cores": run.busy,
            "statuses": dict(run.statuses),
            "stages": {f"{o}.{s}": round(v, 3) for (o, s), v in run.stages.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pdfs", type=Path, nargs="+", default=[DEFAULT_DIR], metavar="DIR",
                        help=f"directories of PDFs (default: {DEFAULT_DIR})")
    parser.add_argument("--copies", type=int, default=None, metavar="N",
                        help="copies of the set (default: enough for --seconds at -j 1)")
    parser.add_argument("--seconds", type=float, default=60.0,
                        help="work to aim for when choosing --copies (default: 60)")
    parser.add_argument("-j", "--jobs", default="1,2", metavar="J[,J...]",
                        help="-j values for sandcrawler extract (default: 1,2)")
    add_extract_options(parser)
    parser.add_argument("--json", type=Path, default=None, metavar="FILE",
                        help="write the figures to FILE as JSON")
    args = parser.parse_args()
    jobs = [int(x) for x in args.jobs.split(",") if x]

    pdfs = sorted({p.resolve() for d in args.pdfs if d.is_dir() for p in d.rglob("*.pdf")
                   if p.stat().st_size > 0})
    if not pdfs:
        skip(f"no PDF under {', '.join(map(str, args.pdfs))} (set SANDCRAWLER_SHARED_DATA "
             "or pass --pdfs)")
    command = resolve_command(args.command)
    options = shlex.split(args.options)
    become_subreaper()
    smallest = min(pdfs, key=lambda p: p.stat().st_size)
    size = sum(p.stat().st_size for p in pdfs)
    print_header(f"sandcrawler extract {args.options} speed: {len(pdfs)} PDFs "
                 f"({size / 1e6:.1f} MB) under {', '.join(map(str, args.pdfs))}")
    figures: dict[str, Any] = {"pdfs": len(pdfs), "runs": []}

    with tempfile.TemporaryDirectory(prefix="sandcrawler-bench-") as tmp:
        workdir = Path(tmp)
        starts: dict[int, Run] = {}
        for j in jobs:
            runs = [extract(command, options, j, [smallest], workdir) for _ in range(3)]
            starts[j] = sorted(runs, key=lambda r: r.timing.wall)[1]
            print(f"   start-up, -j {j} (one copy of {smallest.name}, median of 3): "
                  f"wall {median([r.timing.wall for r in runs]):.2f} s, "
                  f"CPU {starts[j].timing.cpu:.2f} s")
        copies = args.copies
        if copies is None:
            one = extract(command, options, 1, [make_copies(pdfs, 1, workdir)], workdir)
            per_set = max(one.timing.wall - starts[jobs[0]].timing.wall, 0.05)
            copies = max(1, round(args.seconds / per_set))
            print(f"   one pass over the set at -j 1: wall {one.timing.wall:.1f} s "
                  f"({per_set:.1f} s net): {copies} copies for about {args.seconds:g} s")
        directory = make_copies(pdfs, copies, workdir)
        for j in jobs:
            run = extract(command, options, j, [directory], workdir)
            if run.pdfs != copies * len(pdfs):
                sys.exit(f"expected {copies * len(pdfs)} lines, got {run.pdfs}")
            figures["runs"].append(print_run(f"-j {j}, {copies} copies", run, starts[j], j))
    if args.json is not None:
        args.json.write_bytes(orjson.dumps(figures, option=orjson.OPT_INDENT_2))


if __name__ == "__main__":
    main()
