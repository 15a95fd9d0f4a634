"""The one retry/back-off helper (sandcrawler.core.retry): schedules computed, nothing slept."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime

import pytest

from sandcrawler.core.retry import Backoff, RetryPolicy, retry_after_seconds


class FakeTime:
    """A clock that only moves when slept on."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.slept: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds

    def clock(self) -> float:
        return self.now


def delays(backoff: Backoff, retry_after: list[float | None] | None = None) -> list[float]:
    """Every wait until the backoff gives up (or 20), with Retry-After values in turn."""
    out: list[float] = []
    asks = iter(retry_after or [])
    while len(out) < 20:
        delay = backoff.next_delay(next(asks, None))
        if delay is None:
            break
        out.append(delay)
    return out


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        (RetryPolicy(attempts=1), []),
        (RetryPolicy(attempts=4, base=0.5), [0.5, 1.0, 2.0]),
        (RetryPolicy(attempts=7, base=0.5, cap=3.0), [0.5, 1.0, 2.0, 3.0, 3.0, 3.0]),
        (RetryPolicy(attempts=5, base=1.0, factor=3.0, cap=100.0), [1.0, 3.0, 9.0, 27.0]),
        (RetryPolicy(attempts=4, base=0.5, factor=1.0), [0.5, 0.5, 0.5]),
        (RetryPolicy(attempts=3, base=0.0), [0.0, 0.0]),
        # the cap holds for the first wait too
        (RetryPolicy(attempts=4, base=1.0, cap=0.05), [0.05, 0.05, 0.05]),
        (RetryPolicy(attempts=None, base=1.0, cap=8.0), [1, 2, 4, 8] + [8] * 16),
    ],
)
def test_schedule(policy: RetryPolicy, expected: list[float]) -> None:
    backoff = Backoff(policy)
    assert delays(backoff) == expected
    assert backoff.failures == min(len(expected) + 1, 20)


@pytest.mark.parametrize(
    ("asked", "expected"),
    [
        ([None, 5.0, None, None], [0.5, 5.0, 10.0, 16.0]),  # later waits grow from it, capped
        ([0.0, 0.0, 0.0], [0.5, 1.0, 2.0]),  # asking less never shortens a wait
        ([1000.0], [120.0, 16.0, 16.0]),  # at most max_retry_after, even over the cap
        ([-3.0], [0.5, 1.0, 2.0]),
    ],
)
def test_retry_after_is_honoured(asked: list[float | None], expected: list[float]) -> None:
    policy = RetryPolicy(attempts=len(expected) + 1, base=0.5, cap=16.0, max_retry_after=120.0)
    assert delays(Backoff(policy), asked) == expected


def test_jitter_takes_off_up_to_its_fraction() -> None:
    draws = iter([0.0, 1.0, 0.5])
    backoff = Backoff(RetryPolicy(attempts=4, base=2.0, jitter=0.5), rng=lambda: next(draws))
    assert delays(backoff) == [2.0, 2.0, 6.0]  # 2, 4 * (1 - 0.5), 8 * (1 - 0.25)


def test_deadline_ends_the_attempts_and_no_wait_runs_past_it() -> None:
    t = FakeTime()
    backoff = Backoff(RetryPolicy(attempts=None, base=0.5, factor=1.0), deadline=t.now + 1.2,
                      sleep=t.sleep, clock=t.clock)
    tries = 1
    while backoff.retry():
        tries += 1
    assert t.slept == [0.5, 0.5, pytest.approx(0.2)]
    assert tries == 4 and t.now == pytest.approx(1001.2)


def test_wait_sleeps_and_retry_gives_up() -> None:
    t = FakeTime()
    backoff = Backoff(RetryPolicy(attempts=3, base=0.25), sleep=t.sleep, clock=t.clock)
    assert backoff.retry() and backoff.retry(retry_after=2.0)
    assert not backoff.retry()
    assert t.slept == [0.25, 2.0]
    assert backoff.failures == 3
    Backoff(RetryPolicy(base=0.0), sleep=t.sleep).wait(0.0)
    assert t.slept == [0.25, 2.0]  # a zero wait does not sleep


def test_a_stop_event_ends_the_wait_at_once() -> None:
    stop = threading.Event()
    backoff = Backoff(RetryPolicy(attempts=None, base=60.0, cap=60.0), stop=stop)
    delay = backoff.next_delay()
    assert delay == 60.0
    stop.set()
    started = time.monotonic()
    assert backoff.wait(delay) is False
    assert not backoff.retry()
    assert time.monotonic() - started < 1.0


def test_a_stop_during_the_wait() -> None:
    stop = threading.Event()
    backoff = Backoff(RetryPolicy(attempts=None, base=60.0, cap=60.0), stop=stop)
    timer = threading.Timer(0.005, stop.set)
    timer.start()
    started = time.monotonic()
    assert backoff.retry() is False
    assert time.monotonic() - started < 1.0
    timer.join()


def test_without_a_stop_the_wait_returns_true() -> None:
    t = FakeTime()
    assert Backoff(RetryPolicy(), sleep=t.sleep).wait(0.003) is True
    assert t.slept == [0.003]


@pytest.mark.parametrize(
    "kwargs",
    [{"attempts": 0}, {"base": -1.0}, {"cap": -1.0}, {"factor": 0.5}, {"jitter": 1.5},
     {"max_retry_after": -1.0}],
)
def test_bad_policies(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        RetryPolicy(**kwargs)  # type: ignore[arg-type]


NOW = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("header", "seconds"),
    [
        (None, None),
        ("", None),
        ("soon", None),
        ("120", 120.0),
        (" 3 ", 3.0),
        ("1.5", 1.5),
        ("0", 0.0),
        ("-4", 0.0),
        ("nan", None),
        ("inf", None),
        ("Wed, 01 May 2024 12:00:30 GMT", 30.0),
        ("Wed, 01 May 2024 11:59:00 GMT", 0.0),  # in the past: go ahead now
        ("Wed, 01 May 2024 12:01:00 -0000", 60.0),
    ],
)
def test_retry_after_header(header: str | None, seconds: float | None) -> None:
    assert retry_after_seconds(header, now=NOW) == seconds
