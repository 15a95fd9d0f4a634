"""The sandbox: time and memory limits that really hold, and crashes that stay contained."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sandcrawler.core.errors import RecordError
from sandcrawler.pdf.info import extract_pdf
from sandcrawler.process.sandbox import Sandbox, TaskCrashed, TaskMemoryLimit, TaskTimeout
from sandcrawler_testkit.pdfs import make_pdf

# seconds per test: real processes
pytestmark = pytest.mark.slow


def square(x: int) -> int:
    return x * x


def sleep_forever() -> None:
    while True:
        time.sleep(1)


def spin_forever() -> None:
    while True:  # a busy native-like loop: no sleeping, no signals handled
        pass


def segfault() -> None:
    ctypes.string_at(0)  # reads address 0: SIGSEGV in native code


def abort() -> None:
    os.abort()


def allocate(mib: int) -> int:
    blocks = [bytearray(1024 * 1024) for _ in range(mib)]
    return len(blocks)


def bad_record() -> None:
    raise RecordError("this record is bad", status="bad-thing")


def pid() -> int:
    return os.getpid()


@pytest.fixture
def sandbox():  # type: ignore[no-untyped-def]
    with Sandbox(memory_limit=512 * 1024**2) as box:
        yield box


def test_calls_return_and_reuse_the_child(sandbox: Sandbox) -> None:
    assert sandbox.call(square, 7, timeout=30) == 49
    first = sandbox.call(pid, timeout=30)
    assert first != os.getpid() and sandbox.call(pid, timeout=30) == first


@pytest.mark.parametrize("fn", [sleep_forever, spin_forever])
def test_timeout_kills_and_recovers(sandbox: Sandbox, fn) -> None:  # type: ignore[no-untyped-def]
    before = sandbox.call(pid, timeout=30)
    t0 = time.monotonic()
    with pytest.raises(TaskTimeout) as e:
        sandbox.call(fn, timeout=0.5)
    assert e.value.status == "timeout"
    assert time.monotonic() - t0 < 10  # the limit held (generous bound: not a benchmark)
    with pytest.raises(ProcessLookupError):
        os.kill(before, 0)  # the overrunning child is gone
    assert sandbox.call(square, 3, timeout=30) == 9  # and a fresh one serves the next call
    assert sandbox.restarts == 1


@pytest.mark.parametrize(("fn", "sig"), [(segfault, "SIGSEGV"), (abort, "SIGABRT")])
def test_crash_is_a_status(sandbox: Sandbox, fn, sig: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(TaskCrashed) as e:
        sandbox.call(fn, timeout=30)
    assert e.value.status == "crashed" and sig in str(e.value)
    assert sandbox.call(square, 4, timeout=30) == 16


def test_memory_limit(sandbox: Sandbox) -> None:
    assert sandbox.call(allocate, 64, timeout=30) == 64  # within the allowance
    with pytest.raises(TaskMemoryLimit) as e:
        sandbox.call(allocate, 4096, timeout=60)  # 4 GiB against 512 MiB
    assert e.value.status == "memory-limit" and "512 MiB" in str(e.value)
    assert sandbox.call(square, 5, timeout=30) == 25


def test_record_errors_keep_their_status(sandbox: Sandbox) -> None:
    with pytest.raises(RecordError) as e:
        sandbox.call(bad_record, timeout=30)
    assert e.value.status == "bad-thing" and str(e.value) == "this record is bad"


def test_pdf_extraction_in_the_sandbox(sandbox: Sandbox) -> None:
    out = sandbox.call(extract_pdf, make_pdf(["isolated words here"]), timeout=60)
    assert out.status == "success" and out.word_count == 3
    deep = sandbox.call(extract_pdf, make_pdf(["deep"], tree_depth=20_000), timeout=60)
    assert deep.status in {"parse-error", "bad-pdf", "success"}



def test_a_temporary_directory_too_long_for_a_unix_socket_still_starts(tmp_path: Path) -> None:
    # The fork server's socket lives under TMPDIR; sun_path holds 107 bytes. CI's
    # pytest tmp_path plus a test's own "tmp" was long enough to break every start.
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    script = ("from sandcrawler.process.sandbox import Sandbox\n"
              "import os\n"
              "with Sandbox() as box:\n"
              "    print(box.call(os.getpid, timeout=60) != os.getpid())\n")
    done = subprocess.run([sys.executable, "-c", script], env={**os.environ, "TMPDIR": str(deep)},
                          capture_output=True, timeout=180)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode().strip() == "True"
    assert list(deep.iterdir()) == []  # nothing of the socket's left under TMPDIR
