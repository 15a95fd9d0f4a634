"""A throwaway PostgreSQL cluster: ``initdb`` + ``pg_ctl`` on a free loopback port."""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

from sandcrawler_testkit.starts import record_start


def find_pg_bindir() -> Path | None:
    """Directory holding initdb/pg_ctl: Debian's versioned dir first, then PATH."""
    candidates = sorted(
        glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(Path(p).parent.name), reverse=True
    )
    for cand in candidates:
        if (Path(cand) / "initdb").exists() and (Path(cand) / "pg_ctl").exists():
            return Path(cand)
    initdb = shutil.which("initdb")
    if initdb and shutil.which("pg_ctl"):
        return Path(initdb).parent
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PostgresCluster:
    """Start with ``start()``; ``url`` is a SQLAlchemy URL to the ``postgres`` database.

    As root, PostgreSQL refuses to run, so the cluster belongs to the ``postgres``
    user and commands go through ``runuser``.
    """

    def __init__(self, *, durable: bool = False, bindir: Path | None = None) -> None:
        self.bindir = bindir or find_pg_bindir()
        if self.bindir is None:
            raise RuntimeError("PostgreSQL server binaries (initdb, pg_ctl) not found")
        self.durable = durable
        self.port = free_port()
        self.base = Path(tempfile.mkdtemp(prefix="sandcrawler-pg-"))
        self.datadir = self.base / "data"
        self.sockdir = self.base / "sock"
        self.user = "postgres" if os.geteuid() == 0 else pwd.getpwuid(os.geteuid()).pw_name
        self._started = False

    def _run(self, *args: str) -> subprocess.CompletedProcess:
        cmd = [str(self.bindir / args[0]), *args[1:]]
        if os.geteuid() == 0:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        return subprocess.run(cmd, check=True, capture_output=True, text=True)

    def start(self) -> str:
        record_start("postgres")
        self.datadir.mkdir()
        self.sockdir.mkdir()
        os.chmod(self.base, 0o755)
        if os.geteuid() == 0:
            shutil.chown(self.datadir, "postgres", "postgres")
            shutil.chown(self.sockdir, "postgres", "postgres")
        self._run("initdb", "-D", str(self.datadir), "-A", "trust", "-U", self.user, "-E", "UTF8",
                  "--locale=C")
        opts = f"-p {self.port} -k {self.sockdir} -c listen_addresses=127.0.0.1"
        if not self.durable:
            # A test cluster lives for minutes; crash safety buys nothing there.
            opts += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        self._run("pg_ctl", "-D", str(self.datadir), "-o", opts, "-w", "-l",
                  str(self.datadir / "server.log"), "start")
        self._started = True
        return self.url

    @property
    def url(self) -> str:
        return f"postgresql+psycopg://{self.user}@127.0.0.1:{self.port}/postgres"

    def url_for(self, database: str) -> str:
        return f"postgresql+psycopg://{self.user}@127.0.0.1:{self.port}/{database}"

    @property
    def psql_args(self) -> list[str]:
        return ["psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", self.user]

    def stop(self) -> None:
        if self._started:
            with contextlib.suppress(subprocess.CalledProcessError):
                self._run("pg_ctl", "-D", str(self.datadir), "-m", "immediate", "stop")
            self._started = False
        shutil.rmtree(self.base, ignore_errors=True)

    def __enter__(self) -> PostgresCluster:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
