#!/usr/bin/env python3
"""Which tests cover each table on PostgreSQL: runs the PostgreSQL tests (``-m
postgres``) with the suite's statement recorder on, and prints a Markdown table of
each table's tests (docs/testing.md keeps its output).

    python3 scripts/pg_table_coverage.py            # after scripts/dev.py test set up .venv
    python3 scripts/pg_table_coverage.py tests/db   # only some tests

Only the SQL a test runs in its own process is seen (the commands it invokes
in-process, the library): a test that runs ``sandcrawler`` as a child process
counts for the tables its own fixtures and checks read."""

from __future__ import annotations

import collections
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def main(argv: list[str]) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        record = Path(tmp) / "tables.tsv"
        done = subprocess.run(
            [str(REPO / ".venv" / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider",
             "-m", "postgres", "-n", "4", "--dist", "loadgroup", *argv],
            cwd=REPO, env={**os.environ, "SANDCRAWLER_TEST_TABLES": str(record)},
            stdout=sys.stderr)
        tests: dict[str, set[str]] = collections.defaultdict(set)
        if record.exists():
            for line in record.read_text(encoding="utf-8").splitlines():
                nodeid, _, table = line.partition("\t")
                tests[table].add(nodeid)
    print("| table | PostgreSQL tests | in the files |")
    print("|---|---|---|")
    for table in sorted(tests):
        files = collections.Counter(t.partition("::")[0] for t in tests[table])
        shown = ", ".join(f"`{f.removeprefix('tests/')}` ({n})" for f, n in files.most_common())
        print(f"| `{table}` | {len(tests[table])} | {shown} |")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
