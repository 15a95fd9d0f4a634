"""The test kit's runnable modules (``python -m sandcrawler_testkit.<module>``):
usage on ``--help``, one-line errors (never a traceback) for a port in use or a
bad argument, and the platform server's demo run."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator

import pytest

# seconds per test: real processes
pytestmark = pytest.mark.slow

RUNNABLE = ["platforms", "grobid_server", "s3_server", "kafka_broker"]
LISTENING = ["platforms", "grobid_server", "s3_server", "kafka_broker"]  # the ones with --port


def run(module: str, *args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", f"sandcrawler_testkit.{module}", *args],
                          capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("module", RUNNABLE)
def test_help(module: str) -> None:
    done = run(module, "--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"usage: python -m sandcrawler_testkit.{module} ")
    assert "options:" in done.stdout
    assert done.stderr == ""


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A port something else is listening on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        yield s.getsockname()[1]


@pytest.mark.parametrize("module", LISTENING)
def test_port_in_use_is_one_line(module: str, busy_port: int) -> None:
    done = run(module, "--port", str(busy_port))
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr == (f"python -m sandcrawler_testkit.{module}: error: port {busy_port} on "
                           "127.0.0.1 is already in use; choose another with --port "
                           "(0: any free port)\n")


@pytest.mark.parametrize(("module", "args"), [
    ("platforms", ["--port", "70000"]),
    ("grobid_server", ["--port", "http"]),
    ("s3_server", ["--port", "-1"]),
    ("kafka_broker", ["--partitions", "0"]),
])
def test_bad_argument_is_a_usage_error(module: str, args: list[str]) -> None:
    done = run(module, *args)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith(f"usage: python -m sandcrawler_testkit.{module} ")
    assert done.stderr.splitlines()[-1].startswith(
        f"python -m sandcrawler_testkit.{module}: error: argument ")


def test_grobid_server_unreadable_tei_is_one_line() -> None:
    # ten times: its stdin watcher, started before the error, once made 1 exit in 5
    # abort at shutdown (SIGABRT, a daemon thread holding stdin's buffer lock)
    for _ in range(10):
        done = run("grobid_server", "/nonexistent/refs.tei.xml")
        assert done.returncode == 1, done.stderr
        assert done.stderr.startswith("python -m sandcrawler_testkit.grobid_server: error: "
                                      "cannot read TEI: ")
        assert len(done.stderr.splitlines()) == 1


def test_platforms_demo_serves_until_sigterm() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "sandcrawler_testkit.platforms", "--port", "0"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        routes = json.loads(proc.stdout.readline())
        base = routes["https://zenodo.org"]
        assert set(routes.values()) == {base}
        assert "https://dataverse.harvard.edu" in routes
        request = urllib.request.Request(f"{base}/api/records/5703112",
                                         headers={"Host": "zenodo.org"})
        with urllib.request.urlopen(request, timeout=10) as answer:
            record = json.load(answer)
        assert record["files"][0]["key"] == "observations.csv"
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=10)
        assert proc.returncode == 0
        assert err == ""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


@pytest.mark.parametrize("module", ["platforms", "grobid_server"])
def test_sigterm_right_after_the_line_is_a_clean_stop(module: str) -> None:
    """A parent may signal the moment it has read where the server listens: the
    handler is in place before that line (a CI run once caught the window between
    them, and the process died by the signal without its clean-up)."""
    for _ in range(3):
        proc = subprocess.Popen(
            [sys.executable, "-m", f"sandcrawler_testkit.{module}", "--port", "0"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert proc.stdout is not None
            assert proc.stdout.readline().strip()
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=10)
            assert proc.returncode == 0, err
            assert err == ""
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()


def test_grobid_server_stops_when_stdin_closes() -> None:
    """How the benchmarks run it: a pipe to its stdin, closed to stop it."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "sandcrawler_testkit.grobid_server"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdin is not None
        url = proc.stdout.readline().strip()
        with urllib.request.urlopen(f"{url}/api/isalive", timeout=10) as answer:
            assert answer.read() == b"true"
        proc.stdin.close()
        assert proc.wait(timeout=10) == 0
        assert proc.stderr is not None and proc.stderr.read() == ""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
