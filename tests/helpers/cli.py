"""The command line, in-process (click's runner) or as a real process."""

from __future__ import annotations

import os
import subprocess
import sys

from click.testing import CliRunner, Result

from sandcrawler.cli import main


def invoke(args: list[str], input: bytes | str | None = None) -> Result:
    """Run the CLI in-process; stdout and stderr kept apart."""
    return CliRunner().invoke(main, args, input=input, catch_exceptions=False)


def run_cli(args: list[str], *, input: bytes | None = None, env: dict[str, str] | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess[bytes]:
    """Run ``python -m sandcrawler`` as a real process (signals, exit codes, -j N)."""
    return subprocess.run(
        [sys.executable, "-m", "sandcrawler", *args],
        input=input, capture_output=True, timeout=timeout, env={**os.environ, **(env or {})},
    )
