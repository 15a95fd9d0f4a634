"""Every benchmark of docs/benchmarks.md, old commit against new, in one session.

Each side is a git worktree of its commit (or, with ``--new .``, this working tree
as it is); each benchmark runs from its own side's tree (its own bench script
against its own ``src``), old then new, so both meet the same machine load. A
script is found at ``bench/<dir>/<name>.py`` or, on a commit before the split into
``perf``, ``eval`` and ``build``, at ``bench/<name>.py``. The sizes are smaller
than the figures in docs/benchmarks.md (the whole run takes about an hour on 2
cores): this is a regression check, not a new record. Every run's output is kept
in ``--out/<bench>.<side>[.<round>].txt``; the last lines of each are printed.

    python bench/ab.py --base 339ec1e                 # against HEAD
    python bench/ab.py --base f25f201 --new . --only warc_write startup --rounds 2
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: the shared data (real papers, fixtures, GROBID's citation corpus) for both sides:
#: a worktree in /tmp has no ../shared beside it
SHARED = Path(os.environ.get("SANDCRAWLER_SHARED_DATA", ROOT.parent / "shared" / "data"))

#: name -> arguments: each a smaller run of the command docs/benchmarks.md gives.
#: ``{shared}`` is the shared data directory.
BENCHES: dict[str, list[str]] = {
    "persist_grobid_refs": ["--rows", "20000", "--repeat", "1"],
    "persist_crossref": ["--rows", "20000"],
    "parse_crossref_refs": ["--works", "2000", "--jobs", "1"],
    "refs_cost_breakdown": ["--works", "1000"],
    "citations_parse": ["--refs", "10000"],
    "blob_store": ["--small", "2000", "--large", "3", "--large-mb", "20"],
    "backfill_cdx": ["--lines", "20000", "--repeat", "1"],
    "hash_file": ["--mb", "200", "--repeat", "1"],
    "process_pdf": ["--repeat", "1"],
    "pdf_memory": ["--mb", "50"],
    "fileset_ingest": ["--files", "30", "--big-mb", "64", "--small-big-mb", "16"],
    "db_connections": ["--jobs", "4", "--copies", "4"],
    "file_ingest": ["--requests", "200", "--rounds", "1", "--jobs", "1"],
    "warc_write": ["--rounds", "1", "--big-mb", "64", "--files", "30", "--text-mb", "16"],
    "postgrest_lookups": ["--rows", "100000", "--seconds", "5", "--concurrency", "4"],
    "serve_pages": ["--rows", "100000", "--seconds", "5", "--concurrency", "4",
                    "--backend", "sqlite"],
    "kafka_workers": ["--records", "20000", "--workers", "1", "--rounds", "1",
                      "--measure", "throughput"],
    "html_parse": ["--repeat", "5"],
    "startup": ["--runs", "5"],
    "extract_speed": ["--pdfs", "{shared}/pdfs", "--copies", "2", "-j", "1"],
    "extract_e2e": ["--pdfs", "{shared}/pdfs"],
    "match_eval": ["--sets", "refs,headers", "--pad", "2000", "--jobs", "1"],
    "layout_compare": ["--repeat", "1"],
    "platform_sizes": [],
    # on the small corpus of tests/data (each side's own): GROBID's is not needed
    "docparse_eval": ["header", "--corpus", "tests/data/grobid-layout/header", "--folds", "3",
                      "--iterations", "30"],
    # these need GROBID's repository (../grobid) and skip without it
    "docparse_names_eval": ["--folds", "2"],
    "layout_parity": [],
}

#: name -> a command of the package itself, run the same way on each side
COMMANDS: dict[str, list[str]] = {
    # the shipped citation model on the held-out split: the figures must be equal
    "citations_evaluate": ["-m", "sandcrawler", "citations", "evaluate",
                           "--corpus", "{shared}/grobid-citation-corpus/evaluation"],
    # training and tagging end to end: 2 folds of 10 iterations, deterministic
    "citations_cv": ["-m", "sandcrawler", "citations", "evaluate",
                     "--corpus", "{shared}/grobid-citation-corpus/corpus",
                     "--folds", "2", "--iterations", "10"],
}


def worktree(rev: str, where: Path) -> Path:
    """A detached worktree of ``rev`` at ``where`` (made again if it is another commit)."""
    sha = subprocess.run(["git", "rev-parse", rev], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout.strip()
    if where.exists():
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=where,
                              capture_output=True, text=True).stdout.strip()
        if head == sha:
            return where
        subprocess.run(["git", "worktree", "remove", "--force", str(where)], cwd=ROOT,
                       check=True)
    subprocess.run(["git", "worktree", "add", "--detach", str(where), sha], cwd=ROOT,
                   check=True, capture_output=True)
    return where


def script(side: Path, name: str) -> Path:
    """The side's own script: split into perf/eval/build, or flat (older commits)."""
    for found in sorted(side.glob(f"bench/*/{name}.py")):
        if found.parent.name != "data":
            return found.relative_to(side)
    return Path("bench") / f"{name}.py"


def argv(side: Path, name: str) -> list[str]:
    args = COMMANDS[name] if name in COMMANDS else [str(script(side, name)), *BENCHES[name]]
    return [sys.executable, *(a.format(shared=SHARED) for a in args)]


def run(side: Path, name: str, out: Path, timeout: float) -> tuple[int, float]:
    env = dict(os.environ, PYTHONPATH=f"{side / 'src'}:{side / 'testkit' / 'src'}",
               SANDCRAWLER_SHARED_DATA=str(SHARED))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # start-up is measured from bytecode
    start = time.monotonic()
    with out.open("wb") as f:
        try:
            rc = subprocess.run(argv(side, name), cwd=side, env=env, stdout=f,
                                stderr=subprocess.STDOUT, timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            rc = -1
    return rc, time.monotonic() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", required=True, help="the old commit")
    ap.add_argument("--new", default="HEAD",
                    help="the new commit (default: HEAD), or . for this working tree as it is")
    ap.add_argument("--only", nargs="*", choices=sorted({*BENCHES, *COMMANDS}),
                    help="these benchmarks only")
    ap.add_argument("--rounds", type=int, default=1,
                    help="old/new pairs per benchmark; the order swaps each round")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "ab")
    ap.add_argument("--timeout", type=float, default=900, help="seconds per run")
    ap.add_argument("--tail", type=int, default=25, help="lines of each output to print")
    opts = ap.parse_args()
    opts.out.mkdir(parents=True, exist_ok=True)

    def tree(rev: str, label: str) -> Path:
        if rev == ".":
            return ROOT
        sha = subprocess.run(["git", "rev-parse", "--short", rev], cwd=ROOT, check=True,
                             capture_output=True, text=True).stdout.strip()
        return worktree(rev, Path(f"/tmp/sandcrawler-ab-{label}-{sha}"))

    sides = {"old": tree(opts.base, "old"), "new": tree(opts.new, "new")}
    for name in opts.only or [*BENCHES, *COMMANDS]:
        for rnd in range(opts.rounds):
            order = list(sides.items()) if rnd % 2 == 0 else list(sides.items())[::-1]
            for label, side in order:
                suffix = f".{rnd + 1}" if opts.rounds > 1 else ""
                out = opts.out / f"{name}.{label}{suffix}.txt"
                rc, took = run(side, name, out, opts.timeout)
                lines = out.read_text(errors="replace").splitlines()
                print(f"=== {name} [{label}{suffix}] exit {rc}, {took:.0f} s ({out})",
                      flush=True)
                print("\n".join(lines[-opts.tail:]), flush=True)


if __name__ == "__main__":
    main()
