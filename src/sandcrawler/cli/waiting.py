"""Saying what a one-record command is waiting for.

``ingest file`` on a slow host is silent for up to its deadlines (30 s a
request, 120 s a record by default); a user at a terminal cannot tell a slow
server from a hung program. ``reporting_waits`` watches the requests under way
(the fetcher's request clocks, ``web.deadlines.WATCHDOG``) and, for one that
has taken ``after`` seconds, prints on stderr what it is, how long it has
waited, what came so far and when it gives up; again every ``every`` seconds.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator

import click

from sandcrawler.web.http.deadlines import WATCHDOG, RequestClock

#: a request is said after this long, then again this often (seconds)
AFTER = 3.0
EVERY = 10.0


def waiting_line(clock: RequestClock, now: float) -> str:
    waited = now - clock.started
    received = clock.received
    came = "no answer yet" if received is None else f"{received:,} bytes of the body so far"
    left = max(clock.deadline - now, 0.0)
    return (f"waiting for {clock.url}: {waited:.0f} s, {came} "
            f"(gives up in {left:.0f} s: {clock.label})")


@contextlib.contextmanager
def reporting_waits(after: float = AFTER, every: float = EVERY,
                    say: Callable[[str], None] | None = None) -> Iterator[None]:
    """Say, for the block, what a request that takes ``after`` seconds waits for."""
    echo = say or (lambda line: click.echo(line, err=True))
    stop = threading.Event()
    said: dict[int, float] = {}

    def watch() -> None:
        while not stop.wait(0.5):
            now = time.monotonic()
            for clock in WATCHDOG.active():
                last = said.get(id(clock))
                due = clock.started + after if last is None else last + every
                if clock.url and now >= due and not clock.finished:
                    said[id(clock)] = now
                    echo(waiting_line(clock, now))

    thread = threading.Thread(target=watch, name="sandcrawler-waiting", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
