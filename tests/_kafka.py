"""Helpers of the worker tests: real ``sandcrawler worker`` processes on a real Kafka
broker (the ``kafka`` fixture of ``tests/conftest.py``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from sandcrawler_testkit.kafka_clients import Bootstrap, committed, create_topics

__all__ = ["WorkerProcess", "Workers", "committed", "create_topic", "wait_until"]

T = TypeVar("T")


def wait_until(cond: Callable[[], T], timeout: float, what: str, interval: float = 0.05) -> T:
    deadline = time.monotonic() + timeout
    while True:
        value = cond()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


class WorkerProcess:
    """``python -m sandcrawler worker WORKER ARGS`` with stderr in a file we can watch."""

    def __init__(self, tmp_path: Path, name: str, env: dict[str, str], worker: str,
                 *args: str) -> None:
        self.stderr_path = tmp_path / f"{name}.stderr"
        with self.stderr_path.open("wb") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "sandcrawler", "worker", worker, *args],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                env={**os.environ, **env},
            )

    @property
    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def wait_until(self, cond: Callable[[], T], timeout: float, what: str) -> T:
        """Like wait_until, but fails at once (with stderr) if the worker exits meanwhile."""

        def check() -> T:
            value = cond()
            if not value and self.proc.poll() is not None:
                raise AssertionError(
                    f"worker exited ({self.proc.returncode}) while waiting for {what}:\n"
                    f"{self.stderr}")
            return value

        try:
            return wait_until(check, timeout, what)
        except AssertionError as e:
            raise AssertionError(f"{e}; worker stderr:\n{self.stderr}") from None

    def stop(self, sig: int, timeout: float = 15.0) -> int:
        self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            # where it is stuck: a worker prints its threads' stacks on SIGUSR1
            self.proc.send_signal(signal.SIGUSR1)
            time.sleep(1)
            raise AssertionError(
                f"worker still running {timeout}s after {sig}:\n{self.stderr}") from None

    def wait(self, timeout: float) -> int:
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"worker did not exit within {timeout}s:\n{self.stderr}") from None

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)


class Workers:
    """Starts workers (``worker`` unless told another) and kills whatever is still
    running at the end of the test."""

    def __init__(self, tmp_path: Path, env: dict[str, str], worker: str) -> None:
        self.tmp_path, self.env, self.worker = tmp_path, env, worker
        self.started: list[WorkerProcess] = []

    def start(self, *args: str, env: dict[str, str] | None = None,
              worker: str | None = None) -> WorkerProcess:
        w = WorkerProcess(self.tmp_path, f"worker{len(self.started)}", {**self.env, **(env or {})},
                          worker or self.worker, *args)
        self.started.append(w)
        return w

    def kill_all(self) -> None:
        for w in self.started:
            w.kill()


def create_topic(bootstrap: Bootstrap, topic: str, partitions: int = 4) -> None:
    """Create ``topic`` now, so that a consumer started before anything is written
    joins its group with the topic's partitions at once."""
    create_topics(bootstrap, {topic: partitions})
