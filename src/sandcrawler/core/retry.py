"""Retries with back-off: one policy type, one pacer, used by every hand-written retry.

Users: the GROBID client (busy 503s and unreachable servers), the runner's
back-off on ``InfrastructureError``, the Kafka sink waiting out a full local
queue, the local blob store's rename race, the S3 test server's start-up.
``HttpFetcher`` retries connection failures with urllib3's own ``Retry``, and
busy answers (429/502/503/504) itself, through its per-host gate, with
``retry_after_seconds`` below; S3's retries are boto's.

The schedule of a ``RetryPolicy``:

* ``attempts`` tries in all (``None``: until stopped or past the deadline);
* the first wait is ``base`` seconds; each later one is the previous wait times
  ``factor``; no wait is longer than ``cap``;
* a server's ``Retry-After`` raises the current wait to what it asks, at most
  ``max_retry_after`` (even over ``cap``: the server knows best); later waits
  grow from there;
* ``jitter`` (0 to 1) takes up to that fraction off each wait at random, so
  clients that failed together do not all come back together.

A ``Backoff`` paces the attempts of one operation: after each failure
``next_delay`` gives the wait before the next attempt, or None when the policy
allows no more (attempts used up, or the deadline passed: no wait runs past
it); ``wait`` waits, and returns False at once when the stop event is set.
Sleep, clock and randomness are parameters, so tests need not wait.
"""

from __future__ import annotations

import math
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    attempts: int | None = 4
    base: float = 0.5
    factor: float = 2.0
    cap: float = 30.0
    jitter: float = 0.0
    max_retry_after: float = 120.0

    def __post_init__(self) -> None:
        if self.attempts is not None and self.attempts < 1:
            raise ValueError(f"attempts must be at least 1, not {self.attempts}")
        if self.base < 0 or self.cap < 0 or self.max_retry_after < 0:
            raise ValueError("base, cap and max_retry_after must not be negative")
        if self.factor < 1:
            raise ValueError(f"factor must be at least 1, not {self.factor}")
        if not 0 <= self.jitter <= 1:
            raise ValueError(f"jitter must be between 0 and 1, not {self.jitter}")


class Backoff:
    """The attempts of one operation under ``policy``; ``failures`` counts the
    failed attempts reported to ``next_delay``."""

    def __init__(
        self,
        policy: RetryPolicy,
        *,
        stop: threading.Event | None = None,
        deadline: float | None = None,  # on ``clock``'s scale
        sleep: Callable[[float], object] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        rng: Callable[[], float] = random.random,
    ) -> None:
        self.policy = policy
        self.failures = 0
        self._stop = stop
        self._deadline = deadline
        self._sleep = sleep
        self._clock = clock
        self._rng = rng
        self._delay = min(policy.base, policy.cap)

    def next_delay(self, retry_after: float | None = None) -> float | None:
        """After a failed attempt: seconds to wait before the next, or None to give up."""
        self.failures += 1
        policy = self.policy
        if policy.attempts is not None and self.failures >= policy.attempts:
            return None
        delay = self._delay
        if retry_after is not None:
            delay = max(delay, min(max(retry_after, 0.0), policy.max_retry_after))
        self._delay = min(delay * policy.factor, policy.cap)
        if policy.jitter:
            delay *= 1.0 - policy.jitter * self._rng()
        if self._deadline is not None:
            left = self._deadline - self._clock()
            if left <= 0:
                return None
            delay = min(delay, left)
        return delay

    def wait(self, delay: float) -> bool:
        """Wait ``delay`` seconds; False (at once) when a stop is requested."""
        if self._stop is not None:
            return not self._stop.wait(delay)
        if delay > 0:
            self._sleep(delay)
        return True

    def retry(self, retry_after: float | None = None) -> bool:
        """``next_delay`` and ``wait`` in one: True when the next attempt may start."""
        delay = self.next_delay(retry_after)
        return delay is not None and self.wait(delay)


def retry_after_seconds(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds a ``Retry-After`` header asks for (delay-seconds or an HTTP date),
    or None when there is none or it does not parse."""
    if value is None:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:  # an HTTP date is GMT; "-0000" parses as naive
            when = when.replace(tzinfo=UTC)
        seconds = (when - (now or datetime.now(UTC))).total_seconds()
    return max(seconds, 0.0) if math.isfinite(seconds) else None
