"""Retries with back-off: one policy type, one pacer, used by every hand-written retry.

A ``RetryPolicy`` is the schedule: ``attempts``, a first wait of ``base`` seconds
growing by ``factor`` up to ``cap``, a server's ``Retry-After`` honoured up to
``max_retry_after``, and ``jitter``. A ``Backoff`` paces one operation's attempts
(``next_delay``, ``wait``, a deadline, a stop event); sleep, clock and randomness
are parameters, so tests need not wait. Who uses it, and which retries are
urllib3's or boto's: docs/architecture.md, "Retries".
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
