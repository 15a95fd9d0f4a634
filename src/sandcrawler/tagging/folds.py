"""k-fold cross-validation shared by every model: a corpus dealt to folds (each
item tested once), and the folds run one after the other or each in a process
of a pool, their results in fold order."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

from sandcrawler.core.errors import ConfigError
from sandcrawler.process.lifetime import die_with_parent

T = TypeVar("T")
R = TypeVar("R")


def folds_of(items: Sequence[T], folds: int) -> list[tuple[list[T], list[T]]]:
    """(train, test) pairs: item i is tested in fold i mod k, so every fold mixes
    the corpus's sources (GROBID shuffles its sequences before cutting folds)."""
    if folds < 2:
        raise ConfigError(f"cross-validation needs at least 2 folds, not {folds}")
    return [([t for i, t in enumerate(items) if i % folds != k],
             [t for i, t in enumerate(items) if i % folds == k]) for k in range(folds)]


def fold_results(run: Callable[..., R], folds: Sequence[tuple[Any, ...]], jobs: int = 1
                 ) -> Iterator[R]:
    """``run(*arguments)`` of each fold, in fold order as each ends; ``jobs`` folds
    at once, each in its own process (``run`` and its arguments must pickle)."""
    if jobs <= 1:
        for arguments in folds:
            yield run(*arguments)
        return
    # the folds' processes die with this one (an evaluation killed midway)
    with ProcessPoolExecutor(jobs, initializer=die_with_parent) as pool:
        futures = [pool.submit(run, *arguments) for arguments in folds]
        for future in futures:
            yield future.result()
