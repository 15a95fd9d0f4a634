"""A tally of the services the kit starts, for the test suite's closing summary.

Where ``SANDCRAWLER_TEST_SERVICE_STARTS`` names a file, each start of a service
process appends one line (its kind) to it; the suite's session, and each of its
parallel workers, share that file, so one count covers the whole run."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

ENV = "SANDCRAWLER_TEST_SERVICE_STARTS"


def record_start(kind: str) -> None:
    path = os.environ.get(ENV)
    if path:
        # one short line per append: O_APPEND keeps concurrent writers' lines whole
        with open(path, "a", encoding="utf-8") as tally:
            tally.write(kind + "\n")


def count_starts(path: Path) -> Counter[str]:
    if not path.exists():
        return Counter()
    return Counter(line for line in path.read_text(encoding="utf-8").split() if line)
