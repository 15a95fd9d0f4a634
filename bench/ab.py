"""Every benchmark of docs/benchmarks.md, old commit against new, in one session.

Each side is a git worktree of its commit; each benchmark runs from its own
side's tree (its own bench script against its own ``src``), old then new, so
both meet the same machine load. The sizes are smaller than the figures in
docs/benchmarks.md (the whole run takes about an hour on 2 cores): this is a
regression check, not a new record. Every run's output is kept in
``--out/<bench>.<side>.txt``; the last lines of each are printed.

    python bench/ab.py --base 339ec1e                 # against HEAD
    python bench/ab.py --base 339ec1e --only warc_write startup
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: name -> arguments: each a smaller run of the command docs/benchmarks.md gives
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


def run(side: Path, name: str, args: list[str], out: Path, timeout: float) -> tuple[int, float]:
    env = dict(os.environ, PYTHONPATH=f"{side / 'src'}:{side / 'testkit' / 'src'}")
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # start-up is measured from bytecode
    start = time.monotonic()
    with out.open("wb") as f:
        try:
            rc = subprocess.run([sys.executable, f"bench/{name}.py", *args], cwd=side,
                                env=env, stdout=f, stderr=subprocess.STDOUT,
                                timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            rc = -1
    return rc, time.monotonic() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", required=True, help="the old commit")
    ap.add_argument("--new", default="HEAD", help="the new commit (default: HEAD)")
    ap.add_argument("--only", nargs="*", choices=sorted(BENCHES), help="these benchmarks only")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "ab")
    ap.add_argument("--timeout", type=float, default=900, help="seconds per run")
    ap.add_argument("--tail", type=int, default=25, help="lines of each output to print")
    opts = ap.parse_args()
    opts.out.mkdir(parents=True, exist_ok=True)
    sides = {"old": worktree(opts.base, Path("/tmp/sandcrawler-ab-old")),
             "new": worktree(opts.new, Path("/tmp/sandcrawler-ab-new"))}
    for name in opts.only or list(BENCHES):
        for label, side in sides.items():
            out = opts.out / f"{name}.{label}.txt"
            rc, took = run(side, name, BENCHES[name], out, opts.timeout)
            lines = out.read_text(errors="replace").splitlines()
            print(f"=== {name} [{label}] exit {rc}, {took:.0f} s ({out})", flush=True)
            print("\n".join(lines[-opts.tail:]), flush=True)


if __name__ == "__main__":
    main()
