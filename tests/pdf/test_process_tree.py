"""Issue 14 B3 and B7: a SIGKILL of a `-j N` command takes its whole process tree
with it (fork server, workers, sandbox fork servers and children), and the
dying children print no traceback."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sandcrawler_testkit.pdfs import make_pdf
from tests.helpers.processes import alive, descendants

pytestmark = pytest.mark.slow


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_sigkill_of_a_parallel_run_leaves_no_process(tmp_path: Path) -> None:
    inputs = tmp_path / "in"
    inputs.mkdir()
    for i in range(24):  # slow enough to be killed in the middle
        (inputs / f"{i}.pdf").write_bytes(make_pdf([f"paper {i} page {p}" for p in range(3000)]))
    proc = subprocess.Popen([sys.executable, "-m", "sandcrawler", "process", "-j", "2",
                             "--no-progress", str(inputs)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    tree: set[int] = set()
    deadline = time.monotonic() + 60
    # wait until the workers have sandbox children of their own (4 levels)
    while time.monotonic() < deadline and len(tree) < 6:
        time.sleep(0.2)
        tree = descendants(proc.pid)
    assert len(tree) >= 6, f"the tree never grew: {tree}"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(alive(p) for p in tree):
        time.sleep(0.2)
    left = sorted(p for p in tree if alive(p))
    for p in left:  # do not leave them to the rest of the suite
        os.kill(p, signal.SIGKILL)
    assert left == [], "processes outlived their killed parent"
    assert b"Traceback" not in proc.stderr.read()  # type: ignore[union-attr]
