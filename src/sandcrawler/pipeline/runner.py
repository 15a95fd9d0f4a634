"""The runner: batches from a source, through a worker (inline or ``-j N`` processes), to a sink."""

from __future__ import annotations

import logging
import multiprocessing
import signal
import sys
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import IO, TYPE_CHECKING, Literal, Never, TypeVar

from tqdm import tqdm

from sandcrawler.core.errors import InfrastructureError
from sandcrawler.core.retry import Backoff, RetryPolicy
from sandcrawler.core.work import Item, Outcome, Worker
from sandcrawler.pipeline.opening import Expected, OpeningCheck, WrongInput
from sandcrawler.process.lifetime import die_with_parent
from sandcrawler.records.statuses import PipelineStatus

if TYPE_CHECKING:
    from sandcrawler.pipeline.observer import RunObserver
    from sandcrawler.pipeline.sinks import Rejection, Sink
    from sandcrawler.pipeline.sources import Source

log = logging.getLogger("sandcrawler.runner")

WorkerFactory = Callable[[], Worker]
T = TypeVar("T")


class Stopped(Exception):
    """Raised inside the runner when a stop was requested while waiting to retry."""


@dataclass
class RunSummary:
    counts: Counter[str] = field(default_factory=Counter)
    kinds: Counter[str] = field(default_factory=Counter)
    elapsed: float = 0.0
    interrupted: bool = False  # a stop was requested before the input ran out
    abandoned: bool = False  # ...while a batch in hand could not be stored (not acked)
    failure: str | None = None  # infrastructure failure that ended the run
    wrong_input: str | None = None  # the input is not what the command reads

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def errors(self) -> int:
        return self.kinds["error"]

    def format(self, name: str) -> str:
        rate = self.total / self.elapsed if self.elapsed > 0 else 0.0
        by_count = sorted(self.counts.items(), key=lambda x: -x[1])
        statuses = ", ".join(f"{s} {n}" for s, n in by_count)
        text = f"{name}: {self.total} records in {self.elapsed:.1f}s ({rate:,.0f}/s)"
        return f"{text}: {statuses}" if statuses else text


# --- in the worker process -------------------------------------------------------

_process_worker: Worker | None = None


def _init_process(factory: WorkerFactory) -> None:
    global _process_worker
    die_with_parent()
    # The parent owns Ctrl-C: it stops feeding and lets batches in hand finish.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _process_worker = factory()


def _process_in_child(batch: list[Item]) -> list[Outcome]:
    assert _process_worker is not None
    return process_isolated(_process_worker, batch)


def process_isolated(worker: Worker, batch: list[Item]) -> list[Outcome]:
    """Run a batch; if it blows up, run its records one by one so only the culprit fails.
    Items whose source decided their outcome already never reach the worker."""
    if any(item.outcome is not None for item in batch):
        todo = [item for item in batch if item.outcome is None]
        done = iter(process_isolated(worker, todo) if todo else [])
        return [item.outcome if item.outcome is not None else next(done) for item in batch]
    try:
        outcomes = worker.process_batch(batch)
        if len(outcomes) == len(batch):
            return outcomes
        log.error("worker returned %d outcomes for %d items", len(outcomes), len(batch))
    except InfrastructureError:
        raise
    except Exception as e:  # a bug, or a record the worker did not anticipate
        if len(batch) == 1:
            return [_internal_error(batch[0], e)]
    outcomes = []
    for item in batch:
        try:
            single = worker.process_batch([item])
            outcomes.append(single[0] if len(single) == 1 else _internal_error(item, None))
        except InfrastructureError:
            raise
        except Exception as e:
            outcomes.append(_internal_error(item, e))
    return outcomes


def _internal_error(item: Item, exc: BaseException | None) -> Outcome:
    detail = f"{type(exc).__name__}: {exc}" if exc is not None else "worker lost the record"
    log.debug("internal error on %s", item.where, exc_info=exc)
    return Outcome(where=item.where, status=PipelineStatus.INTERNAL_ERROR, kind="error",
                   error=detail)


# --- in the parent -----------------------------------------------------------------


class Runner:
    """Drives one source → worker → sink run and keeps the books.

    - ``name``: the run's name in progress lines and the summary.
    - ``jobs``, ``batch_size``, ``preload``: worker processes (``-j N``), items per
      batch, and the modules their fork server imports once.
    - ``progress``, ``report``, ``stderr``: the progress bar (default: when stderr is a
      terminal), where one-line reports go, and the stream for both.
    - ``fail_fast``: the first record error ends the run.
    - ``on_infrastructure_error``: ``"fail"`` ends the run with ``summary.failure``
      set (batch commands); ``"retry"`` backs off (at most ``max_backoff`` seconds)
      and retries the same batch until it succeeds or ``stop`` is set (long-running
      workers), so nothing is dropped.
    - ``observer``: told of batches and back-off as they happen (a worker's metrics).
    - ``expected``: what the input should be; a run whose first records are all
      undecodable then ends with ``summary.wrong_input`` (``pipeline/opening.py``).
    """

    def __init__(
        self,
        source: Source,
        worker_factory: WorkerFactory,
        sink: Sink,
        *,
        name: str = "run",
        jobs: int = 1,
        batch_size: int = 100,
        progress: bool | None = None,
        fail_fast: bool = False,
        on_infrastructure_error: Literal["fail", "retry"] = "fail",
        max_backoff: float = 60.0,
        stop: threading.Event | None = None,
        report: Callable[[str], None] | None = None,
        stderr: IO[str] | None = None,
        preload: tuple[str, ...] = (),
        observer: RunObserver | None = None,
        expected: Expected | None = None,
    ) -> None:
        self.source = source
        #: modules the ``-j N`` fork server imports once, so each worker process
        #: does not import them again (the workers' heavy dependencies)
        self.preload = preload
        self.worker_factory = worker_factory
        self.sink = sink
        self.name = name
        self.jobs = max(1, jobs)
        self.batch_size = batch_size
        self.stderr = stderr or sys.stderr
        self.progress = self.stderr.isatty() if progress is None else progress
        self.fail_fast = fail_fast
        self.on_infrastructure_error = on_infrastructure_error
        self.max_backoff = max_backoff
        self.stop = stop or threading.Event()
        self.report = report or (lambda msg: print(msg, file=self.stderr, flush=True))
        self.summary = RunSummary()
        self._bar: tqdm[Never] | None = None  # a bar over no iterable: never yields
        self.observer = observer
        self._opening = OpeningCheck(expected) if expected else None
        #: when each batch read and not yet booked was read (with an observer only);
        #: batches are booked strictly in the order they are read
        self._read_at: deque[float] = deque()
        #: retry loops waiting right now: the processing thread's and the sink writer's
        #: can both be waiting on an outage, and back-off is over when neither is
        self._waiting = 0
        self._waiting_lock = threading.Lock()

    # public ------------------------------------------------------------------------

    def run(self) -> RunSummary:
        started = time.monotonic()
        bar: tqdm[Never] = tqdm(
            total=self.source.progress_total,
            unit=self.source.progress_unit,
            unit_scale=self.source.progress_unit == "B",
            file=self.stderr,
            disable=not self.progress,
            desc=self.name,
            dynamic_ncols=True,
        )
        self._bar = bar
        try:
            if self.jobs == 1:
                self._run_inline()
            else:
                self._run_pool()
        except Stopped:
            self.summary.abandoned = True
        except InfrastructureError as e:
            self.summary.failure = str(e)
        except WrongInput as e:
            self.summary.wrong_input = str(e)
        finally:
            bar.close()
            if self._opening is not None and not self.summary.wrong_input:
                for line in self._opening.release():  # fewer records than it judges
                    self.report(line)
            self.summary.interrupted = self.stop.is_set()
            self.summary.elapsed = time.monotonic() - started
        return self.summary

    # modes -------------------------------------------------------------------------

    def _batches(self) -> Iterator[list[Item]]:
        for batch in self.source.batches(self.batch_size):
            if self.observer is not None and batch:
                self._read_at.append(time.monotonic())
                self.observer.records_in(len(batch))
            yield batch
            if self.stop.is_set():
                return

    def _run_inline(self) -> None:
        # A worker's services may be down when it starts: waited out like any outage.
        worker = self._with_retry(self.worker_factory)
        try:
            with self._sink_writer() as deliver:
                for batch in self._batches():
                    # An empty batch (source idle) only books what was written.
                    outcomes = (
                        self._with_retry(partial(process_isolated, worker, batch))
                        if batch else []
                    )
                    if deliver(batch, outcomes):
                        return
        finally:
            worker.close()

    def _run_pool(self) -> None:
        # Bounded in-flight work keeps memory flat however large the input; waiting
        # on the oldest future first keeps output in input order.
        ctx = multiprocessing.get_context("forkserver")
        # The fork server dies with this process, and each worker with the fork
        # server: a SIGKILL of the command leaves nothing behind.
        ctx.set_forkserver_preload(["sandcrawler.process.lifetime_preload", *self.preload])
        pending: deque[tuple[list[Item], Future[list[Outcome]]]] = deque()
        with ProcessPoolExecutor(
            self.jobs, mp_context=ctx, initializer=_init_process, initargs=(self.worker_factory,)
        ) as pool, self._sink_writer() as deliver:
            try:
                batches = self._batches()
                exhausted = False
                while True:
                    while not exhausted and len(pending) < self.jobs * 2:
                        batch = next(batches, None)
                        if batch is None:
                            exhausted = True
                            break
                        if not batch:  # source idle: book what was written
                            if not pending and deliver([], []):
                                return
                            break
                        pending.append((batch, pool.submit(_process_in_child, batch)))
                    if not pending:
                        if exhausted:
                            return
                        continue
                    batch, fut = pending.popleft()
                    outcomes = self._pool_result(pool, batch, fut)
                    if deliver(batch, outcomes):
                        return
            finally:
                for _, fut in pending:
                    fut.cancel()

    def _pool_result(
        self, pool: ProcessPoolExecutor, batch: list[Item], fut: Future[list[Outcome]]
    ) -> list[Outcome]:
        try:
            return fut.result()
        except BrokenProcessPool as e:
            raise InfrastructureError(f"a worker process died: {e}") from e
        except InfrastructureError:
            if self.on_infrastructure_error == "fail":
                raise
        return self._with_retry(lambda: pool.submit(_process_in_child, batch).result())

    # books -------------------------------------------------------------------------

    @contextmanager
    def _sink_writer(self) -> Iterator[Callable[[list[Item], list[Outcome]], bool]]:
        """``deliver(batch, outcomes)``: the sink writes in one background thread while
        the next batch is processed (database and broker round trips release the GIL);
        batches are booked and acked strictly in order, each only once it is durable.
        ``deliver`` returns True when the run should end (fail-fast)."""
        writer = ThreadPoolExecutor(1, thread_name_prefix="sink")
        in_flight: tuple[list[Item], list[Outcome], Future[list[Rejection]]] | None = None

        def finish() -> bool:
            nonlocal in_flight
            if in_flight is None:
                return False
            batch, outcomes, fut = in_flight
            in_flight = None
            return self._book(batch, outcomes, fut.result())

        def deliver(batch: list[Item], outcomes: list[Outcome]) -> bool:
            nonlocal in_flight
            if finish():
                return True
            if self.fail_fast:
                # nothing after the first failed record is written or acked
                failed = next((i for i, o in enumerate(outcomes) if o.kind == "error"), None)
                if failed is not None:
                    batch, outcomes = batch[: failed + 1], outcomes[: failed + 1]
            if batch:
                write = partial(self.sink.write, outcomes)
                in_flight = (batch, outcomes, writer.submit(self._with_retry, write))
            return False

        try:
            yield deliver
        finally:
            # Also on the way out of a failure: what was handed over gets written and acked.
            try:
                finish()
            finally:
                writer.shutdown(wait=True)

    def _book(self, batch: list[Item], outcomes: list[Outcome],
              rejected: list[Rejection]) -> bool:
        """Count, report, ack a written batch. True when the run should end (fail-fast)."""
        for index, status, message in rejected:
            o = outcomes[index]
            o.status, o.kind, o.error, o.output = status, "error", message, None
        lines = [f"{o.where}: {o.status}: {o.error}" for o in outcomes if o.kind == "error"]
        if self._opening is not None:
            lines = self._opening.screen(batch, outcomes, lines)
        first_error = None
        statuses: Counter[str] = Counter()
        for o in outcomes:
            statuses[str(o.status)] += 1  # plain strings: JSON-ready keys
            self.summary.kinds[o.kind] += 1
            if o.kind == "error":
                first_error = first_error or o
        for line in lines:
            self.report(line)
        self.summary.counts.update(statuses)
        self.source.ack(batch)
        if self.observer is not None:
            self.observer.batch_done(statuses, time.monotonic() - self._read_at.popleft())
        if self._bar is not None:
            self._bar.update(self.source.progress_position() - self._bar.n)
        return bool(self.fail_fast and first_error)

    def _with_retry(self, fn: Callable[[], T]) -> T:
        """``fn()``; under the retry policy, InfrastructureError is waited out with
        back-off 1, 2, 4 ... s (at most ``max_backoff``) until a stop is requested.

        An outage is said in one line when it starts and in one when it ends; the
        retries between go to debug level (-vv): a service down for an hour must not
        bury the log in retry lines, nor hide when it came back."""
        if self.on_infrastructure_error == "fail":
            return fn()
        backoff = Backoff(RetryPolicy(attempts=None, base=1.0, cap=self.max_backoff),
                          stop=self.stop)
        began: float | None = None  # when the first attempt failed
        service = ""
        try:
            while True:
                try:
                    result = fn()
                    break
                except InfrastructureError as e:
                    delay = backoff.next_delay()
                    assert delay is not None  # no limit on attempts, no deadline
                    service = e.service
                    if began is None:
                        began = time.monotonic()
                        self._wait_begins()
                        self.report(f"{self.name}: {e}; retrying in {delay:g}s, then quietly "
                                    f"with back-off (at most {self.max_backoff:g}s apart) "
                                    "until it answers")
                    else:
                        log.debug("%s: %s; retrying in %gs", self.name, e, delay)
                    if self.observer is not None:
                        self.observer.retrying(service, delay)
                    if not backoff.wait(delay):
                        raise Stopped() from e
            if began is not None:
                retries = backoff.failures
                self.report(f"{self.name}: {service} reachable again after "
                            f"{time.monotonic() - began:.0f}s ({retries} "
                            f"{'retry' if retries == 1 else 'retries'})")
            return result
        finally:
            if began is not None:
                self._wait_ends()

    def _wait_begins(self) -> None:
        with self._waiting_lock:
            self._waiting += 1

    def _wait_ends(self) -> None:
        with self._waiting_lock:
            self._waiting -= 1
            if self._waiting == 0 and self.observer is not None:
                self.observer.recovered()
