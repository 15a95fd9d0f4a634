"""A dataset's files archived several at once.

Most of the time of a dataset of many small files goes waiting on each round
trip in turn; the files are independent, so they are fetched side by side. The
host gate of the fetcher (``crawl.host_concurrency``, ``crawl.host_delay``, the
back-off of a busy host) still bounds what each host gets: more workers than a
host allows simply wait for its turn. Each file runs in a copy of the caller's
context, so the record's deadline holds in the worker threads too.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import TypeVar

from sandcrawler.core.errors import RecordError

T = TypeVar("T")
R = TypeVar("R")


def in_parallel(items: Sequence[T], workers: int, job: Callable[[T], R],
                ) -> tuple[dict[int, R], tuple[int, RecordError] | None]:
    """``job`` of every item, at most ``workers`` at once; once one fails with a
    RecordError no other is started (those running finish). The results by
    index, and the failure of the earliest item (in ``items``' order) that
    failed, so the verdict does not depend on which thread was faster. Any
    other exception is raised once the running jobs are done."""
    results: dict[int, R] = {}
    failures: dict[int, RecordError] = {}
    waiting = iter(enumerate(items))
    workers = max(1, min(workers, len(items)))
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="fileset-file") as pool:
        running: dict[Future[R], int] = {}

        def start() -> None:
            while not failures and len(running) < workers:
                following = next(waiting, None)
                if following is None:
                    return
                index, item = following
                context = contextvars.copy_context()
                running[pool.submit(context.run, job, item)] = index

        start()
        while running:
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                index = running.pop(future)
                try:
                    results[index] = future.result()
                except RecordError as e:
                    failures[index] = e
            start()
    first = min(failures, default=None)
    return results, None if first is None else (first, failures[first])
