"""Start-up of the ``sandcrawler`` command: ``--version`` (the floor: Python, click),
``--help`` (the list of commands) and ``citations parse`` on one string (settings,
the CRF model, one parse), each the median of N runs as a real process.

Printed: for each, the median wall time and the median CPU time (user + sys) of the
process, and the goals of issue 23 (``--help`` <= 0.3 s, one-string parse <= 0.5 s).
CPU time says what the command costs when the machine is busy with other work.

Run:  python bench/perf/startup.py [--runs 21] [--out bench/out]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for _common.py
from _common import SANDCRAWLER, arg_parser, bench_env, median, print_header, run_timed, work_dir

#: the console script users run, when it is installed beside this interpreter
SCRIPT = Path(sys.executable).parent / "sandcrawler"
COMMAND = [str(SCRIPT)] if SCRIPT.exists() else SANDCRAWLER

CASES = (
    ("--version", ["--version"], None),
    ("--help", ["--help"], 0.3),
    ("citations parse STRING", ["citations", "parse", "Smith J. A title. Nature. 2001;1:2-3."],
     0.5),
)


def main() -> None:
    args = arg_parser(__doc__, count="runs", default=21).parse_args()
    print_header(f"sandcrawler start-up: median of {args.runs} runs ({' '.join(COMMAND)})")
    with work_dir(args.out) as workdir:
        env = bench_env(workdir, data_dir=str(workdir / "data"))
        # An installed command runs from bytecode: without it every run compiles our
        # modules again (0.1 s of CPU in the one-string parse when PYTHONDONTWRITEBYTECODE
        # was set in the caller's environment).
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        # once each, unmeasured: the embedded database created, bytecode compiled
        for _, argv, _ in CASES:
            run_timed([*COMMAND, *argv], env=env, cwd=workdir)
        for label, argv, goal in CASES:
            runs = [run_timed([*COMMAND, *argv], env=env, cwd=workdir)
                    for _ in range(args.runs)]
            wall, cpu = median([r.wall for r in runs]), median([r.cpu for r in runs])
            verdict = "" if goal is None else (
                f"  (goal <= {goal:.1f} s: {'met' if wall <= goal else 'NOT met'})")
            print(f"   {label:<24} wall {wall:.3f} s   cpu {cpu:.3f} s{verdict}")


if __name__ == "__main__":
    main()
