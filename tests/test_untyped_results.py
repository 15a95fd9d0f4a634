"""At most ``LIMIT`` functions under src/sandcrawler return untyped JSON
(``dict[str, Any]``) outside serialisers, settings layers, client configs and JSON
kept as it came (issue 39): ``scripts/untyped_results.py`` lists them."""

from __future__ import annotations

import subprocess
import sys

from tests.helpers.paths import REPO


def test_untyped_results_are_within_the_limit() -> None:
    done = subprocess.run([sys.executable, str(REPO / "scripts" / "untyped_results.py")],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.rstrip().splitlines()[-1].startswith("total: ")
