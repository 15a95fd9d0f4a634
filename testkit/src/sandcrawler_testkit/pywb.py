"""pywb, the replay tool of web archives, on a free loopback port, over our WARC
files and our CDXJ index.

pywb is GPL-3.0 and pins old versions of its dependencies, so it is never
imported: it runs as a separate program from a virtual environment of its own.
``find_pywb()`` looks for that environment in ``$SANDCRAWLER_PYWB_VENV``, then
in the cache (``~/.cache/sandcrawler-testkit/pywb/<version>/venv``), and
otherwise makes it there (``python -m venv``, then pip installs the pinned
version) when pip can reach its package index.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from sandcrawler_testkit._cache import tool_cache
from sandcrawler_testkit.http_process import HttpProcess
from sandcrawler_testkit.postgres import free_port

PYWB_VERSION = "2.10.0"
PACKAGE = f"pywb=={PYWB_VERSION}"
VENV_ENV = "SANDCRAWLER_PYWB_VENV"
#: written last into an environment whose install finished
_DONE = ".sandcrawler-complete"


def cache_dir() -> Path:
    return tool_cache("pywb", PYWB_VERSION)


class PywbUnavailable(RuntimeError):
    """pywb cannot be had; the message says why."""


def _usable(venv: Path) -> bool:
    return all(os.access(venv / "bin" / name, os.X_OK) for name in ("wayback", "wb-manager"))


def find_pywb(*, fetch: bool = True) -> Path:
    """The virtual environment holding pywb (its ``bin/wayback``); PywbUnavailable
    (with the reason) when there is none."""
    given = os.environ.get(VENV_ENV)
    if given:
        if not _usable(Path(given)):
            raise PywbUnavailable(f"{VENV_ENV}={given} has no bin/wayback and bin/wb-manager")
        return Path(given)
    venv = cache_dir() / "venv"
    if (venv / _DONE).exists() and _usable(venv):
        return venv
    if not fetch:
        raise PywbUnavailable(f"pywb not found in {venv} (and {VENV_ENV} not set)")
    return install_pywb()


def install_pywb(python: str = sys.executable) -> Path:
    """Make the cached environment and pip install the pinned pywb into it; one
    process at a time (a lock file), a half-made environment is made again."""
    target = cache_dir()
    target.mkdir(parents=True, exist_ok=True)
    venv = target / "venv"
    with open(target / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (venv / _DONE).exists() and _usable(venv):
            return venv  # another process made it meanwhile
        shutil.rmtree(venv, ignore_errors=True)
        steps = [[python, "-m", "venv", str(venv)],
                 [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet",
                  "--disable-pip-version-check", PACKAGE]]
        for step in steps:
            try:
                done = subprocess.run(step, capture_output=True, text=True, timeout=900)
            except (OSError, subprocess.TimeoutExpired) as e:
                raise PywbUnavailable(f"installing {PACKAGE} failed: {e}") from None
            if done.returncode != 0:
                reason = (done.stderr.strip().splitlines() or ["no message"])[-1]
                raise PywbUnavailable(f"installing {PACKAGE} failed: {reason}")
        (venv / _DONE).write_text(PACKAGE + "\n")
    return venv


def pywb_version(venv: Path) -> str:
    out = subprocess.run([str(venv / "bin" / "wayback"), "--version"], capture_output=True,
                         text=True, timeout=60)
    return (out.stdout.strip() or out.stderr.strip()).splitlines()[-1]


class PywbServer(HttpProcess):
    """``wayback`` serving one collection, ``collection``, from ``root`` (a
    directory of its own): its index is the CDXJ files put in
    ``index_dir`` (``add_index``), its WARC files are found under
    ``archive_dir`` by the index's ``filename``. ``url`` once ``start()``
    returned; a capture replays at ``{url}/{collection}/{timestamp}/{url}``
    (rewritten) or ``…/{timestamp}id_/{url}`` (as recorded)."""

    name = "pywb"
    poll = 0.1

    def __init__(self, venv: Path, root: Path, archive_dir: Path,
                 collection: str = "sandcrawler", port: int | None = None) -> None:
        super().__init__(port or free_port(), root / "pywb.log")
        self.venv = venv
        self.root = root
        self.archive_dir = archive_dir
        self.collection = collection
        self.index_dir = root / "collections" / collection / "indexes"

    def replay_url(self, timestamp: str, url: str, *, as_recorded: bool = False) -> str:
        return f"{self.url}/{self.collection}/{timestamp}{'id_' if as_recorded else ''}/{url}"

    def add_index(self, cdxj: Path) -> None:
        """Give the collection a CDXJ index (pywb reads every file in its index
        directory at each lookup)."""
        self.index_dir.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(cdxj, self.index_dir / cdxj.name)

    def _write_config(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        self.index_dir.mkdir(parents=True, exist_ok=True)
        archive = str(self.archive_dir.resolve()).rstrip("/") + "/"
        (self.root / "config.yaml").write_text(
            "collections:\n"
            f"  {self.collection}:\n"
            f"    index_paths: {self.index_dir.resolve()}/\n"
            f"    archive_paths: {archive}\n"
            "framed_replay: false\n")

    def prepare(self) -> tuple[Path | None, Mapping[str, str] | None]:
        self._write_config()
        return self.root, {**os.environ, "PYTHONUNBUFFERED": "1"}

    def command(self) -> list[str]:
        return [str(self.venv / "bin" / "wayback"), "-p", str(self.port), "-b", "127.0.0.1",
                "-d", str(self.root)]

    def start(self, timeout: float = 60.0) -> str:
        return super().start(timeout)

    def __enter__(self) -> PywbServer:
        self.start()
        return self


__all__ = [
    "PACKAGE",
    "PYWB_VERSION",
    "PywbServer",
    "PywbUnavailable",
    "find_pywb",
    "install_pywb",
    "pywb_version",
]
