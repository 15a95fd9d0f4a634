"""The offline demo's data directory as ``sandcrawler ingest demo --dir`` leaves it,
made once per process (seconds of crawling and processing) and copied for each test
that reads or writes it."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

from tests.helpers.cli import invoke

_template: Path | None = None


def demo_copy(dest: Path) -> Path:
    """A copy of the demo's data directory at ``dest`` (its own SQLite database, store
    and match index: nothing in them names the directory). The first call ingests the
    demo, in the calling test's isolated environment."""
    global _template
    if _template is None:
        parent = Path(tempfile.mkdtemp(prefix="sandcrawler-demo-"))
        atexit.register(shutil.rmtree, parent, ignore_errors=True)
        done = invoke(["ingest", "demo", "--dir", str(parent / "demo")])
        assert done.exit_code == 0, done.stderr
        _template = parent / "demo"
    shutil.copytree(_template, dest)
    return dest
