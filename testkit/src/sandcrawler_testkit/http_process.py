"""A real HTTP server program run as a child process on a loopback port: started,
waited for until its root answers 200, stopped. The programs the tests start
this way (PostgREST, pywb) differ only in their command line and set-up."""

from __future__ import annotations

import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path

from sandcrawler_testkit.starts import record_start


class HttpProcess:
    """``command()`` in a child process, its output in ``log``; ``url`` answers
    once ``start()`` returned."""

    #: what the errors call it
    name = "server"
    #: how often a starting server is asked whether it answers (seconds)
    poll = 0.05

    def __init__(self, port: int, log: Path) -> None:
        self.port = port
        self.log = log
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        raise NotImplementedError

    def prepare(self) -> tuple[Path | None, Mapping[str, str] | None]:
        """Set-up before the start: (working directory, environment) of the child."""
        return None, None

    def start(self, timeout: float = 30.0) -> str:
        record_start(self.name)
        cwd, env = self.prepare()
        with open(self.log, "wb") as log:
            self._proc = subprocess.Popen(self.command(), cwd=cwd, env=env, stdout=log,
                                          stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited ({self._proc.returncode}): "
                                   f"{self.log.read_text(errors='replace')[-2000:]}")
            try:
                with urllib.request.urlopen(self.url + "/", timeout=2) as resp:
                    if resp.status == 200:
                        return self.url
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(self.poll)
        self.stop()
        raise RuntimeError(f"{self.name} did not answer on {self.url} within {timeout} s")

    def stop(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        self._proc = None

    def __enter__(self) -> HttpProcess:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
