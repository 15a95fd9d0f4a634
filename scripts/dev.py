#!/usr/bin/env python3
"""Set-up in one command, on a machine with nothing but python3 (and its venv module).

    python3 scripts/dev.py quickstart   # .venv with sandcrawler, then the quickstart
    python3 scripts/dev.py test         # .venv with the test tools, then the whole suite

Both create (or reuse) the virtual environment ``.venv`` in the repository, so
nothing is installed into the system's Python (Debian refuses that, PEP 668).
``quickstart`` runs the README's offline quickstart on the embedded defaults
(SQLite and a store under ``~/.local/share/sandcrawler``), then the offline demo of
file ingest, which keeps to a data directory of its own beside that one
(``~/.local/share/sandcrawler-demo``); ``test`` also installs
the test kit and runs ``ruff``, ``lint-imports``, ``mypy`` (strict on ``src/``, its
settings in ``pyproject.toml``) and ``pytest`` in parallel workers (extra arguments go to pytest:
``python3 scripts/dev.py test -m "not slow"``, ``... test -n 0 tests/db``; see
docs/testing.md).

Standard library only: this runs before anything is installed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
VENV = REPO / ".venv"
BIN = VENV / "bin"
#: pytest-xdist workers for the test suite (docs/testing.md has the measured choice)
WORKERS = 4

#: the README's quickstart, offline, on the examples in the repository
QUICKSTART = [
    ["persist", "crossref", "--parse-refs", "--no-progress", "examples/crossref-works.jsonl"],
    ["db", "status"],
    ["citations", "parse",
     "Smith JA, Doe B. Effects of caffeine on sleep. N Engl J Med. 2001;345(12):1234-40."],
    ["store", "add", "examples/paper.pdf", "--metadata", "examples/paper.metadata.json"],
    ["catalogue", "get", "doi:10.5555/sandcrawler.example", "--no-metadata"],
    ["process", "--no-progress", "examples/paper.pdf"],
    ["process", "--no-progress", "--cdx", "examples/crawl.cdx", "--source", "examples"],
    ["pdftable", "backfill-cdx", "--no-progress", "examples/captures.cdx"],
    # matching (docs/matching.md): a small catalog, its index, six biblios against it
    ["persist", "crossref", "--no-progress", "examples/match-catalog.jsonl"],
    ["match", "index"],
    ["match", "biblio", "--no-progress", "examples/match-biblios.jsonl"],
    # file ingest end to end: five CC BY articles' pages and full texts, shipped in the
    # package, served on loopback at their publishers' URLs; into its own data
    # directory, <data_dir>-demo (docs/ingest.md, "The offline demo")
    ["ingest", "demo"],
]


def run(cmd: list[str], **kwargs: object) -> None:
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, cwd=REPO, **kwargs)  # type: ignore[call-overload]


def ensure_venv() -> None:
    if not (BIN / "python").exists():
        print(f"creating the virtual environment {VENV}", flush=True)
        venv.create(VENV, with_pip=True)


def pip_install(*requirements: str) -> None:
    run([str(BIN / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
         *requirements])


def quickstart() -> int:
    ensure_venv()
    pip_install("-e", ".")
    for args in QUICKSTART:
        if args[:2] == ["pdftable", "backfill-cdx"]:
            print("(examples/captures.cdx has one malformed line on purpose: bad-cdx)")
        run([str(BIN / "sandcrawler"), *args], **({"stdout": subprocess.DEVNULL}
                                                  if args[0] == "ingest" else {}))
    data = os.environ.get("SANDCRAWLER_DATA_DIR") or (
        f"{os.environ.get('XDG_DATA_HOME') or '~/.local/share'}/sandcrawler")
    print(f"\ndone: the quickstart's database and store are in {data}; the demo's are in "
          f"its own directory, named above with the command that shows it in a browser; "
          f"`{BIN / 'sandcrawler'} --help` for the rest", flush=True)
    return 0


def test(pytest_args: list[str]) -> int:
    ensure_venv()
    pip_install("-e", ".[test]", "-e", "./testkit")
    run([str(BIN / "ruff"), "check", "src", "tests", "bench", "scripts", "testkit"])
    run([str(BIN / "lint-imports")])
    # the files and the strictness are pyproject.toml's [tool.mypy]; its cache
    # (.mypy_cache) makes a second run take a second or two
    run([str(BIN / "mypy")])
    return subprocess.run([str(BIN / "python"), "-m", "pytest", *parallel(pytest_args),
                           *pytest_args], cwd=REPO).returncode


def parallel(pytest_args: list[str]) -> list[str]:
    """pytest-xdist's workers, unless the arguments choose (``-n 0`` runs in one
    process). Most slow tests wait on services, not on the CPU, so there are more
    workers than cores; ``loadgroup`` keeps the tests that share one heavy service
    process (the Solr cluster, a module's PostgREST) on one worker (docs/testing.md)."""
    if any(a in ("-n", "--numprocesses") or a.startswith(("-n", "--numprocesses="))
           for a in pytest_args):
        return []
    return ["-n", str(WORKERS), "--dist", "loadgroup"]


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("quickstart", "test") or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv[:1] in (["-h"], ["--help"]) else 2
    try:
        return quickstart() if argv[0] == "quickstart" else test(argv[1:])
    except subprocess.CalledProcessError as e:
        print(f"error: {' '.join(map(str, e.cmd))} exited {e.returncode}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
