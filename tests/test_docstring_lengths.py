"""No module docstring under src/sandcrawler is longer than 15 lines (issue 39):
design discussion lives in docs/, a module header says what the module holds
and why it exists."""

from __future__ import annotations

import subprocess
import sys

from tests.helpers.paths import REPO


def test_no_module_header_is_longer_than_the_limit() -> None:
    script = REPO / "scripts" / "docstring_lengths.py"
    done = subprocess.run([sys.executable, str(script), "--over", "15"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
