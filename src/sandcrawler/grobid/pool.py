"""The bounded pool of ``grobid-serve``'s workers: one sandboxed child process
each (the cascade's ``Extractor``), taken by one request at a time. A request
that finds none free is told so at once (GROBID answers 503 and its clients
retry), never queued: a burst cannot pile up work the server cannot do."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from sandcrawler.process.sandbox import Sandbox
from sandcrawler.records.extraction import Extraction, ExtractRequest

T = TypeVar("T")


class Worker(Protocol):
    """A worker slot: the cascade in a sandbox with a time limit
    (``pdf.extractor.Extractor``)."""

    sandbox: Sandbox
    timeout: float

    def extract(self, path: str, request: ExtractRequest | None = None) -> Extraction: ...

    def close(self) -> None: ...


def run_task(worker: Worker, fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` in the worker's sandbox, under its time limit (a text service);
    a ``SandboxError`` (timeout, memory-limit, crashed) when it does not return."""
    return worker.sandbox.call(fn, *args, timeout=worker.timeout)


class WorkerPool:
    """Used from the event loop's thread only: taking and giving back a worker
    never waits."""

    def __init__(self, workers: list[Worker]) -> None:
        if not workers:
            raise ValueError("a pool needs at least one worker")
        self.workers = list(workers)
        self._free = list(reversed(self.workers))
        self.on_change: Callable[[int], None] = lambda busy: None

    @property
    def size(self) -> int:
        return len(self.workers)

    @property
    def busy(self) -> int:
        return len(self.workers) - len(self._free)

    def try_acquire(self) -> Worker | None:
        """A free worker, or None at once when all are busy."""
        if not self._free:
            return None
        worker = self._free.pop()
        self.on_change(self.busy)
        return worker

    def release(self, worker: Worker) -> None:
        if worker in self._free or worker not in self.workers:
            raise ValueError("a worker given back twice, or not of this pool")
        self._free.append(worker)
        self.on_change(self.busy)

    def close(self) -> None:
        """Stop every worker's process (each one, even when another fails)."""
        first: BaseException | None = None
        for worker in self.workers:
            try:
                worker.close()
            except Exception as e:
                first = first or e
        if first is not None:
            raise first
