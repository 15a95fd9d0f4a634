"""Helpers of the worker tests: a test's own part of a real Kafka broker
(``KafkaSpace``, what the ``kafka`` and ``kafka_private`` fixtures of
``tests/conftest.py`` give), and real ``sandcrawler worker`` processes on it."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from sandcrawler.kafka.topics import topic_name
from sandcrawler_testkit.kafka_broker import KafkaBroker
from sandcrawler_testkit.kafka_clients import Bootstrap, committed, create_topics
from tests.helpers.waiting import wait_until

__all__ = ["KafkaSpace", "WorkerProcess", "Workers", "committed", "create_topic", "wait_until"]

T = TypeVar("T")


@dataclass(frozen=True)
class KafkaSpace:
    """A test's own part of a broker: its ``env`` names every topic and consumer group
    (``sandcrawler-<env>.<name>``, ``sandcrawler-<env>-<worker>``), so tests sharing
    the broker never see each other's records."""

    broker: KafkaBroker
    env: str

    @property
    def bootstrap(self) -> str:
        return self.broker.bootstrap

    def topic(self, name: str, prefix: str = "sandcrawler") -> str:
        return topic_name(self.env, name, prefix)

    def group(self, worker: str) -> str:
        return f"sandcrawler-{self.env}-{worker}"

    @property
    def client_config(self) -> dict[str, str]:
        return self.broker.client_config

    @property
    def settings_env(self) -> dict[str, str]:
        """What a worker process needs to use this space."""
        return {"SANDCRAWLER_KAFKA_BROKERS": self.bootstrap, "SANDCRAWLER_ENV": self.env}


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

    def wait_until(self, cond: Callable[[], T], timeout: float, what: str,
                   interval: float = 0.05) -> T:
        """Like wait_until, but fails at once (with stderr) if the worker exits meanwhile."""

        def check() -> T:
            value = cond()
            if not value and self.proc.poll() is not None:
                raise AssertionError(
                    f"worker exited ({self.proc.returncode}) while waiting for {what}:\n"
                    f"{self.stderr}")
            return value

        try:
            return wait_until(check, timeout, what, interval)
        except AssertionError as e:
            self.dump_stacks()
            raise AssertionError(f"{e}; worker stderr:\n{self.stderr}") from None

    def dump_stacks(self) -> None:
        """Where a worker that did not get somewhere is: it prints its threads'
        stacks on SIGUSR1 (into the stderr a failure shows)."""
        if self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGUSR1)
        with contextlib.suppress(AssertionError):
            wait_until(lambda: "most recent call first" in self.stderr, 5, "the stacks")

    def stop(self, sig: int, timeout: float = 15.0) -> int:
        self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.dump_stacks()
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

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.kill_all()


def create_topic(bootstrap: Bootstrap, topic: str, partitions: int = 4) -> None:
    """Create ``topic`` now, so that a consumer started before anything is written
    joins its group with the topic's partitions at once."""
    create_topics(bootstrap, {topic: partitions})
