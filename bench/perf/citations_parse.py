"""``sandcrawler citations parse``: references per second per core, and model loading.

Input: every reference string of GROBID's annotated corpus (``corpus/`` and
``evaluation/``, about 8,700 distinct strings), repeated to ``--refs`` lines (default
50,000) in a file, one plain line each. Distinct strings matter: the featurizer caches
per-token work, so a file of one string repeated would flatter it.

Printed:
- model load time (``CrfModel.load()`` of the shipped model, best of 5, in-process;
  goal < 0.5 s) and the process start-up of ``citations parse`` on a single string;
- ``sandcrawler citations parse FILE`` (stdin) with -j 1: wall time, CPU time of the
  whole process tree, references per second per core = references / CPU seconds
  (goal >= 3,000; GROBID: about 875 references/s on 8 threads);
- the same in-process, without reading and writing JSON lines: tokenize + features +
  CRF + biblio, per reference, split by stage.

Run:  python bench/perf/citations_parse.py [--refs 50000] [--out bench/out]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for _common.py
from _common import (
    arg_parser,
    bench_env,
    corpus_reference_strings,
    print_header,
    rate,
    run_timed,
    sandcrawler,
    work_dir,
    write_lines,
)

from sandcrawler.citations.crf.biblio import build_biblio
from sandcrawler.citations.crf.labels import OUTSIDE
from sandcrawler.citations.crf.model import MAX_TOKENS, CrfModel
from sandcrawler.tagging.tokens import tokenize

GOAL_RATE = 3000.0
GOAL_LOAD = 0.5
GROBID_RATE = 875.0


def main() -> None:
    args = arg_parser(__doc__, count="refs", default=50_000).parse_args()
    strings = corpus_reference_strings()
    n: int = args.refs
    lines = [strings[i % len(strings)] for i in range(n)]
    print_header(f"sandcrawler citations parse: {n:,} references "
                 f"({len(strings):,} distinct strings from the GROBID corpus)")

    loads = []
    for _ in range(5):
        t0 = time.perf_counter()
        model = CrfModel.load()
        loads.append(time.perf_counter() - t0)
    print(f"   model load (in-process, best of 5): {min(loads) * 1e3:.1f} ms "
          f"(goal < {GOAL_LOAD * 1e3:.0f} ms)")

    with work_dir(args.out) as workdir:
        path = workdir / f"references_{n}.txt"
        size = write_lines(path, (s.encode() + b"\n" for s in lines))
        print(f"   input: {path} ({size / 1e6:.1f} MB)")
        env = bench_env(workdir)
        one = sandcrawler(["citations", "parse", strings[0]], env=env, cwd=workdir)
        print(f"   one string, whole command (start-up, model load, parse): "
              f"wall {one.wall:.2f} s, CPU {one.cpu:.2f} s")
        t = run_timed(f"{sys.executable} -m sandcrawler citations parse - "
                      f"< {path} > /dev/null", env=env, cwd=workdir, shell=True)
        print("-- citations parse - < FILE, -j 1")
        print(f"   wall {t.wall:.2f} s   CPU {t.cpu:.2f} s   {rate(n, t.wall):,.0f} refs/s wall   "
              f"{rate(n, t.cpu):,.0f} refs/s per core "
              f"(goal >= {GOAL_RATE:,.0f}: {'met' if rate(n, t.cpu) >= GOAL_RATE else 'NOT met'}; "
              f"{rate(n, t.cpu) / (GROBID_RATE / 8):.0f}x GROBID per thread)")
        summary = t.stderr.strip().splitlines()[-1]
        print(f"   {summary}")
        if f"{n} records" not in summary:
            sys.exit("not every reference was parsed: see the summary above")

    # in-process, stage by stage
    model = CrfModel.load()
    stages = {"tokenize": 0.0, "features": 0.0, "crf": 0.0, "biblio": 0.0}
    t_all = time.process_time()
    for text in lines:
        t0 = time.process_time()
        tokens = tokenize(text)
        t1 = time.process_time()
        # CrfModel.label, stage by stage
        feats = model.featurizer.sequence(tokens[:MAX_TOKENS])
        t2 = time.process_time()
        labels = model.tagger.tag(feats) if tokens else []
        t3 = time.process_time()
        build_biblio(text, tokens, labels + [OUTSIDE] * (len(tokens) - len(labels)))
        t4 = time.process_time()
        stages["tokenize"] += t1 - t0
        stages["features"] += t2 - t1
        stages["crf"] += t3 - t2
        stages["biblio"] += t4 - t3
    total = time.process_time() - t_all
    print(f"-- in-process (no I/O): {rate(n, total):,.0f} refs/s per core; per reference: "
          + ", ".join(f"{k} {v / n * 1e6:.0f} us" for k, v in stages.items()))


if __name__ == "__main__":
    main()
