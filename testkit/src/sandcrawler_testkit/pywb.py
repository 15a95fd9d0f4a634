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
import time
import urllib.error
import urllib.request
from pathlib import Path

from sandcrawler_testkit._cache import tool_cache
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


class PywbServer:
    """``wayback`` serving one collection, ``collection``, from ``root`` (a
    directory of its own): its index is the CDXJ files put in
    ``index_dir`` (``add_index``), its WARC files are found under
    ``archive_dir`` by the index's ``filename``. ``url`` once ``start()``
    returned; a capture replays at ``{url}/{collection}/{timestamp}/{url}``
    (rewritten) or ``…/{timestamp}id_/{url}`` (as recorded)."""

    def __init__(self, venv: Path, root: Path, archive_dir: Path,
                 collection: str = "sandcrawler", port: int | None = None) -> None:
        self.venv = venv
        self.root = root
        self.archive_dir = archive_dir
        self.collection = collection
        self.port = port or free_port()
        self.index_dir = root / "collections" / collection / "indexes"
        self.log = root / "pywb.log"
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

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

    def start(self, timeout: float = 60.0) -> str:
        self._write_config()
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        with open(self.log, "wb") as log:
            self._proc = subprocess.Popen(
                [str(self.venv / "bin" / "wayback"), "-p", str(self.port), "-b", "127.0.0.1",
                 "-d", str(self.root)],
                cwd=self.root, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                env=env)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(f"pywb exited ({self._proc.returncode}): "
                                   f"{self.log.read_text(errors='replace')[-2000:]}")
            try:
                with urllib.request.urlopen(self.url + "/", timeout=2) as resp:
                    if resp.status == 200:
                        return self.url
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"pywb did not answer on {self.url} within {timeout} s")

    def stop(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        self._proc = None

    def __enter__(self) -> PywbServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


__all__ = [
    "PACKAGE",
    "PYWB_VERSION",
    "PywbServer",
    "PywbUnavailable",
    "find_pywb",
    "install_pywb",
    "pywb_version",
]
