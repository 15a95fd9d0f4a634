"""Per-host politeness: how many requests to one host are in flight, how often
they start, and how long a host that said "too busy" is left alone.

A ``HostGate`` is shared by every thread of one process. A request takes a
``Slot`` for its host before it is sent (so waiting holds no connection) and
gives it back once its answer is read; taking one waits for ``concurrency``,
``delay`` (or the host's ``Crawl-delay``) and any ``back_off`` after a 429 or 503.
Hosts are lower-case names without the port (docs/operations.md, "The host gate").
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from sandcrawler.web.http.urls import host_of

#: hosts kept with nothing to remember (idle, no back-off, no Crawl-delay) are
#: forgotten when the table grows past this
_PRUNE_AT = 4096

__all__ = ["HostGate", "Slot", "host_of"]


@dataclass(slots=True)
class _Host:
    in_flight: int = 0
    waiting: int = 0
    next_start: float = 0.0  # no request starts before this (the delay)
    until: float = 0.0  # nor before this (a back-off)
    delay: float | None = None  # the host's Crawl-delay, when larger than the gate's


class Slot:
    """One request's place in its host's quota; ``release()`` gives it back
    (idempotent)."""

    __slots__ = ("__weakref__", "_gate", "host")

    def __init__(self, gate: HostGate | None, host: str) -> None:
        self._gate = gate
        self.host = host

    def release(self) -> None:
        gate, self._gate = self._gate, None
        if gate is not None:
            gate._release(self.host)


class HostGate:
    def __init__(
        self,
        *,
        concurrency: int = 2,
        delay: float = 0.25,
        max_delay: float = 30.0,
    ) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, not {concurrency}")
        if delay < 0 or max_delay < 0:
            raise ValueError("delay and max_delay must not be negative")
        self.concurrency = concurrency
        self.delay = delay
        self.max_delay = max(max_delay, delay)
        # reentrant: a slot dropped without release() is released by its finalizer,
        # which may run while this thread is inside the gate
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)
        self._hosts: dict[str, _Host] = {}

    def acquire(self, host: str) -> Slot:
        """Wait until a request to ``host`` may start, and count it as started."""
        host = host.lower()
        with self._lock:
            h = self._hosts.get(host)
            if h is None:
                h = self._hosts[host] = _Host()
            h.waiting += 1
            try:
                while True:
                    now = time.monotonic()
                    start_at = max(h.next_start, h.until)
                    if h.in_flight < self.concurrency and now >= start_at:
                        break
                    # a full host waits for a release; a paced one for its time
                    self._changed.wait(None if h.in_flight >= self.concurrency
                                       else start_at - now)
            finally:
                h.waiting -= 1
            h.in_flight += 1
            h.next_start = now + self._delay(h)
            if len(self._hosts) > _PRUNE_AT:
                self._prune(now)
        return Slot(self, host)

    def _release(self, host: str) -> None:
        with self._lock:
            h = self._hosts.get(host)
            if h is not None and h.in_flight > 0:
                h.in_flight -= 1
            self._changed.notify_all()

    def back_off(self, host: str, seconds: float) -> None:
        """No request to ``host`` starts in the next ``seconds`` (a 429 or 503
        answer's Retry-After); a longer back-off already set stands."""
        host = host.lower()
        with self._lock:
            h = self._hosts.setdefault(host, _Host())
            h.until = max(h.until, time.monotonic() + max(seconds, 0.0))
            self._changed.notify_all()

    def set_delay(self, host: str, seconds: float | None) -> None:
        """The host's own delay between starts (robots.txt ``Crawl-delay``): used
        when larger than the gate's, at most ``max_delay``; None forgets it."""
        host = host.lower()
        with self._lock:
            h = self._hosts.setdefault(host, _Host())
            if seconds is None or seconds <= self.delay:
                h.delay = None
            else:
                h.delay = min(seconds, self.max_delay)

    def delay_for(self, host: str) -> float:
        """Seconds between the starts of two requests to ``host``."""
        with self._lock:
            h = self._hosts.get(host.lower())
            return self.delay if h is None else self._delay(h)

    def backed_off_for(self, host: str) -> float:
        """Seconds left of ``host``'s back-off (0 when none)."""
        with self._lock:
            h = self._hosts.get(host.lower())
            return 0.0 if h is None else max(h.until - time.monotonic(), 0.0)

    def _delay(self, h: _Host) -> float:
        return self.delay if h.delay is None else h.delay

    def _prune(self, now: float) -> None:
        for name, h in list(self._hosts.items()):
            if (not h.in_flight and not h.waiting and h.delay is None
                    and h.until <= now and h.next_start <= now):
                del self._hosts[name]
