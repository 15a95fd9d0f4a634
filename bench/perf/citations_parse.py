"""``sandcrawler citations parse``: references per second, in-process per core and as
the whole command, and model loading (issue 40: GROBID's scale).

Input: every reference string of GROBID's annotated corpus (``corpus/`` and
``evaluation/``, about 8,600 distinct strings), repeated to ``--refs`` lines (default
10,000) in a file, one plain line each. Distinct strings matter: the featurizer caches
per-token work, so a file of one string repeated would flatter it.

Printed:
- model load time (``CrfModel.load()`` of the shipped model, best of 5, in-process;
  goal < 0.5 s) and the whole command on a single string;
- in-process, one process on one core: ``CrfCitationParser.parse_lists`` of the
  ``--refs`` strings by a freshly loaded parser (its caches empty), references per
  CPU second, best of ``--rounds`` (goal >= 5,000), then a second pass of the same
  parser (caches warm); the same with python-crfsuite tagging (``direct=False``,
  the path kept for builds without CRFsuite's C interface), and whether the two
  label every string alike; time per reference by stage;
- the whole command, ``sandcrawler citations parse --no-progress - < FILE``, for each
  of ``--jobs`` (default 1, the command's default, and 2): references per second of
  wall time, start-up included (goal >= 3,000 at -j 1), and per CPU second of the
  whole process tree.

Run:  python bench/perf/citations_parse.py [--refs 10000] [--jobs 1 2] [--out bench/out]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for _common.py
from _common import (
    arg_parser,
    become_subreaper,
    bench_env,
    corpus_reference_strings,
    print_header,
    rate,
    run_timed,
    sandcrawler,
    work_dir,
    write_lines,
)

from sandcrawler.citations.crf.biblio import biblio_of_spans, column_spans
from sandcrawler.citations.crf.labels import OUTSIDE
from sandcrawler.citations.crf.model import MAX_TOKENS, CrfModel
from sandcrawler.citations.crf.parser import CrfCitationParser
from sandcrawler.tagging.tokens import token_columns

GOAL_IN_PROCESS = 5000.0
GOAL_COMMAND = 3000.0
GOAL_LOAD = 0.5
GROBID_RATE = 875.0  # references/s of GROBID on 8 threads


def in_process(lines: list[str], rounds: int, direct: bool = True) -> tuple[float, float]:
    """(refs per CPU second of a fresh parser, best of ``rounds``; of its second pass)."""
    cold, warm = 0.0, 0.0
    for _ in range(rounds):
        parser = CrfCitationParser(CrfModel.load(direct=direct))
        assert (parser.model.direct is not None) == direct
        t0 = time.process_time()
        parser.parse_lists([lines])
        t1 = time.process_time()
        parser.parse_lists([lines])
        t2 = time.process_time()
        cold, warm = max(cold, rate(len(lines), t1 - t0)), max(warm, rate(len(lines), t2 - t1))
    return cold, warm


def stages(lines: list[str]) -> dict[str, float]:
    """Seconds per reference of each stage of ``CrfModel.parse`` (fresh model)."""
    model = CrfModel.load()
    direct, packed = model.direct, model.packed
    assert direct is not None and packed is not None
    spent = {"tokenize": 0.0, "features": 0.0, "CRF": 0.0, "biblio": 0.0}
    clock = time.process_time
    for text in lines:
        t0 = clock()
        texts, spaces, starts, ends = token_columns(text)
        t1 = clock()
        items = packed.sequence(texts[:MAX_TOKENS], spaces[:MAX_TOKENS])
        t2 = clock()
        labels = direct.tag(items)
        t3 = clock()
        labels.extend([OUTSIDE] * (len(texts) - len(labels)))
        biblio_of_spans(text, column_spans(text, starts, ends, labels))
        t4 = clock()
        spent["tokenize"] += t1 - t0
        spent["features"] += t2 - t1
        spent["CRF"] += t3 - t2
        spent["biblio"] += t4 - t3
    return {k: v / len(lines) for k, v in spent.items()}


def main() -> None:
    parser = arg_parser(__doc__, count="refs", default=10_000)
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2], metavar="J",
                        help="-j of the whole command, each measured (default: 1 2)")
    parser.add_argument("--rounds", type=int, default=3,
                        help="in-process runs, the best reported (default: 3)")
    args = parser.parse_args()
    strings = corpus_reference_strings()
    n: int = args.refs
    lines = [strings[i % len(strings)] for i in range(n)]
    print_header(f"sandcrawler citations parse: {n:,} references "
                 f"({min(n, len(strings)):,} distinct strings from the GROBID corpus)")

    loads = []
    for _ in range(5):
        t0 = time.perf_counter()
        model = CrfModel.load()
        loads.append(time.perf_counter() - t0)
    tagger = "direct (CRFsuite's C interface)" if model.direct else "python-crfsuite"
    print(f"   model load (in-process, best of 5): {min(loads) * 1e3:.1f} ms "
          f"(goal < {GOAL_LOAD * 1e3:.0f} ms); tagging through {tagger}")

    print(f"-- in-process, one core (CPU time, best of {args.rounds})")
    cold, warm = in_process(lines, args.rounds)
    print(f"   fresh parser: {cold:,.0f} refs/s per core "
          f"(goal >= {GOAL_IN_PROCESS:,.0f}: {'met' if cold >= GOAL_IN_PROCESS else 'NOT met'}; "
          f"{cold / (GROBID_RATE / 8):.0f}x GROBID per thread); second pass {warm:,.0f}")
    plain_cold, plain_warm = in_process(lines, 1, direct=False)
    print(f"   python-crfsuite tagging: {plain_cold:,.0f} refs/s per core; "
          f"second pass {plain_warm:,.0f}")
    fast, plain = CrfModel.load(), CrfModel.load(direct=False)
    same = sum(fast.label(s)[1] == plain.label(s)[1] for s in strings)
    print(f"   labels the same on both paths: {same:,} of {len(strings):,} distinct strings")
    per_ref = stages(lines)
    print("   per reference: " + ", ".join(f"{k} {v * 1e6:.0f} us" for k, v in per_ref.items()))

    become_subreaper()  # the CPU of -j N's workers counts
    with work_dir(args.out) as workdir:
        path = workdir / f"references_{n}.txt"
        size = write_lines(path, (s.encode() + b"\n" for s in lines))
        print(f"-- the whole command; input {path} ({size / 1e6:.1f} MB)")
        env = bench_env(workdir)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        sandcrawler(["citations", "parse", strings[0]], env=env, cwd=workdir)  # bytecode
        one = sandcrawler(["citations", "parse", strings[0]], env=env, cwd=workdir)
        print(f"   one string (start-up, model load, parse): wall {one.wall:.2f} s, "
              f"CPU {one.cpu:.2f} s")
        for jobs in args.jobs:
            t = run_timed(f"{sys.executable} -m sandcrawler citations parse --no-progress "
                          f"-j {jobs} - < {path} > /dev/null", env=env, cwd=workdir,
                          shell=True, reap=True)
            goal = (f" (goal >= {GOAL_COMMAND:,.0f}: "
                    f"{'met' if rate(n, t.wall) >= GOAL_COMMAND else 'NOT met'})"
                    if jobs == 1 else "")
            print(f"   -j {jobs}: wall {t.wall:.2f} s, {rate(n, t.wall):,.0f} refs/s{goal}; "
                  f"CPU {t.cpu:.2f} s, {rate(n, t.cpu):,.0f} refs/s per core")
            summary = t.stderr.strip().splitlines()[-1]
            print(f"      {summary}")
            if f"{n} records" not in summary:
                sys.exit("not every reference was parsed: see the summary above")


if __name__ == "__main__":
    main()
