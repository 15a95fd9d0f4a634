"""Deadlines for HTTP requests and for the records that make them.

A socket timeout bounds each read, not a request, so every request has a
``RequestClock``: at its deadline a watchdog thread shuts the socket down
(``fetch-timeout``), unless the body is still arriving at ``min_rate`` bytes a
second. ``record_deadline(seconds)`` sets a record's own deadline for the code
run inside; ``check_record_deadline`` raises once it has passed
(docs/ingest.md, "Deadlines").
"""

from __future__ import annotations

import contextlib
import contextvars
import heapq
import itertools
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Protocol

from sandcrawler.core.errors import RecordError
from sandcrawler.records.statuses import FetchStatus

#: a slow but steady body is measured over windows this long, past its deadline
RATE_WINDOW = 10.0


class Abortable(Protocol):
    def abort(self) -> None: ...


class RequestClock:
    """The deadline of one request. ``attach`` names the connection to cut when
    it passes; ``body_started`` says the headers are in and where to read how
    many bytes of the body came so far; ``done`` stops the clock."""

    __slots__ = ("_bytes_at_check", "_checked", "_conn", "_lock", "_received", "deadline",
                 "expired", "finished", "label", "min_rate", "seconds", "started", "url",
                 "window")

    def __init__(self, seconds: float, *, label: str = "http.request_timeout",
                 min_rate: float = 0.0, window: float = RATE_WINDOW,
                 deadline: float | None = None, url: str = "") -> None:
        """``seconds`` and ``label`` (the setting) say what the deadline is;
        ``deadline``: when, on the monotonic clock (default: ``seconds`` from now);
        ``url``: what is requested (said while it is waited for)."""
        self.url = url
        self.started = time.monotonic()
        self.seconds = seconds
        self.label = label
        self.deadline = self.started + seconds if deadline is None else deadline
        self.min_rate = min_rate
        self.window = window
        self.expired = False
        self.finished = False
        self._conn: Abortable | None = None
        self._received: Callable[[], int] | None = None
        self._checked = 0.0
        self._bytes_at_check = 0
        self._lock = threading.Lock()

    def attach(self, conn: Abortable) -> None:
        with self._lock:
            self._conn = conn
            if self.expired:  # passed while the connection was being made
                conn.abort()

    def body_started(self, received: Callable[[], int]) -> None:
        """The headers are in; ``received()`` says how many body bytes came."""
        with self._lock:
            self._received = received
            self._checked = time.monotonic()
            self._bytes_at_check = 0

    def done(self) -> None:
        with self._lock:
            self.finished = True
            self._conn = None

    def fire(self, now: float) -> float | None:
        """Called by the watchdog at the deadline: the time of the next check (a
        body still arriving fast enough), or None (cut, or already done). The
        connection is cut under the lock, so a request that ends meanwhile never
        has its connection, back in the pool, cut under another request."""
        with self._lock:
            if self.finished:
                return None
            if self._received is not None and self.min_rate > 0:
                received = self._received()
                came = received - self._bytes_at_check
                if came >= self.min_rate * max(now - self._checked, 1e-3):
                    self._checked, self._bytes_at_check = now, received
                    return now + self.window
            self.expired = True
            if self._conn is not None:
                self._conn.abort()
        return None

    @property
    def received(self) -> int | None:
        """The bytes of the body so far; None before the headers are in."""
        return self._received() if self._received is not None else None

    def describe(self) -> str:
        """Why the request was cut, in words."""
        if self._received is not None and self.min_rate > 0:
            received = self._received()
            return (f"the body came slower than {self.min_rate:,.0f} bytes/s "
                    f"(http.min_bytes_per_second) after the {self.seconds:g} s deadline "
                    f"({self.label}); {received:,} bytes in "
                    f"{time.monotonic() - self.started:.0f} s")
        return f"no complete answer within {self.seconds:g} s ({self.label})"

    def timed_out(self, url: str) -> RecordError:
        """The record's error for a request to ``url`` this clock cut."""
        return RecordError(f"fetching {url}: {self.describe()}",
                           status=FetchStatus.FETCH_TIMEOUT)


class Watchdog:
    """One thread per process firing the clocks whose time has come; started on
    first use, a daemon, idle when there is nothing to watch."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, RequestClock]] = []
        self._seq = itertools.count()
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None

    def reset(self) -> None:
        """Nothing watched, no thread (in a forked child)."""
        self._heap = []
        self._cond = threading.Condition()
        self._thread = None

    def watch(self, clock: RequestClock) -> None:
        with self._cond:
            first = not self._heap or clock.deadline < self._heap[0][0]
            heapq.heappush(self._heap, (clock.deadline, next(self._seq), clock))
            self._ensure_thread()
            if first:  # else the thread wakes for an earlier deadline anyway: no switch
                self._cond.notify()

    def active(self) -> list[RequestClock]:
        """The clocks of the requests under way (oldest first)."""
        with self._cond:
            clocks = [clock for _, _, clock in self._heap if not clock.finished]
        return sorted(clocks, key=lambda c: c.started)

    def _ensure_thread(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._run, name="sandcrawler-deadlines",
                                            daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._heap:
                    self._cond.wait()
                when, _, clock = self._heap[0]
                now = time.monotonic()
                if clock.finished:
                    heapq.heappop(self._heap)
                    continue
                if when > now:
                    self._cond.wait(when - now)
                    continue
                heapq.heappop(self._heap)
            again = clock.fire(now)
            if again is not None:
                with self._cond:
                    heapq.heappush(self._heap, (again, next(self._seq), clock))


WATCHDOG = Watchdog()
# a forked child has none of the parent's threads, and may have its lock held by
# one of them at the fork: it starts afresh, with nothing to watch
os.register_at_fork(after_in_child=WATCHDOG.reset)

_current_clock = threading.local()
_record_deadline: contextvars.ContextVar[tuple[float, float] | None] = contextvars.ContextVar(
    "sandcrawler_record_deadline", default=None)


def current_clock() -> RequestClock | None:
    """The clock of the request this thread is making (set by the fetcher)."""
    return getattr(_current_clock, "clock", None)


@contextlib.contextmanager
def timing(clock: RequestClock) -> Iterator[RequestClock]:
    """Make ``clock`` this thread's current one, watched, for the block."""
    WATCHDOG.watch(clock)
    previous = current_clock()
    _current_clock.clock = clock
    try:
        yield clock
    finally:
        _current_clock.clock = previous


@contextlib.contextmanager
def record_deadline(seconds: float | None) -> Iterator[None]:
    """Work inside the block (this thread) must end within ``seconds``; None:
    no deadline of the record's own."""
    if seconds is None:
        yield
        return
    token = _record_deadline.set((time.monotonic() + seconds, seconds))
    try:
        yield
    finally:
        _record_deadline.reset(token)


def record_deadline_left() -> tuple[float, float] | None:
    """(when, of how many seconds) of this thread's record deadline, or None."""
    return _record_deadline.get()


def check_record_deadline(what: str) -> None:
    """RecordError ``fetch-timeout`` when the record's deadline has passed."""
    limit = _record_deadline.get()
    if limit is not None and time.monotonic() >= limit[0]:
        raise RecordError(f"{what}: the record's deadline of {limit[1]:g} s has passed "
                          "(crawl.record_timeout)", status=FetchStatus.FETCH_TIMEOUT)


def shutdown_socket(sock: socket.socket | None) -> None:
    """End every read and write on ``sock`` now, from another thread."""
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
