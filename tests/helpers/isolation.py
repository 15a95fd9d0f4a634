"""No user configuration leaks into a test: the one definition of a test's isolated
environment, for the per-test ``isolated_env`` fixture and for fixtures broader than a
test (a module-scoped fixture is set up before the test's own environment, so what it
builds with the real commands or ``load_settings()`` must be isolated too)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

#: the suite's own settings (SANDCRAWLER_TEST_*) and where its tools are stay
KEPT = ("SANDCRAWLER_SHARED_DATA", "SANDCRAWLER_POSTGREST_BIN")


def isolate(mp: pytest.MonkeyPatch, root: Path) -> None:
    """Empty data directory (``root/data``), no configuration file, no SANDCRAWLER_*
    of the caller's; the working directory is ``root``."""
    for name in list(os.environ):
        if name.startswith("SANDCRAWLER_") and not name.startswith("SANDCRAWLER_TEST_") \
                and name not in KEPT:
            mp.delenv(name)
    home = root / "home"
    home.mkdir(parents=True, exist_ok=True)
    mp.setenv("XDG_CONFIG_HOME", str(home / "config"))
    mp.setenv("XDG_DATA_HOME", str(home / "data"))
    mp.setenv("SANDCRAWLER_DATA_DIR", str(root / "data"))
    # Loopback servers are ours: the politeness delay (crawl.host_delay) would only
    # slow the suite. Tests of the per-host gate set their own.
    mp.setenv("SANDCRAWLER_CRAWL_HOST_DELAY", "0")
    # The extraction cascade costs a child process and its models' loading per
    # processor, and a second or so per PDF: the hundreds of PDFs other tests
    # process would pay it for nothing. Its own tests (test_extract_cli, the demo's)
    # turn it on.
    mp.setenv("SANDCRAWLER_EXTRACT_ENABLED", "0")
    mp.chdir(root)


@contextmanager
def isolated(root: Path, **env: str) -> Iterator[pytest.MonkeyPatch]:
    """``isolate`` in ``root``, then ``env`` (``SANDCRAWLER_DATABASE_URL`` …), all undone
    on leaving. Settings are read when services are made: services made inside keep
    them afterwards."""
    with pytest.MonkeyPatch.context() as mp:
        root.mkdir(parents=True, exist_ok=True)
        isolate(mp, root)
        for name, value in env.items():
            mp.setenv(name, value)
        yield mp
