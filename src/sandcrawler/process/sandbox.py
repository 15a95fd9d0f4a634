"""Run a function in a child process with a time limit and a memory limit.

For native code on untrusted input (PDFium on crawled PDFs). The child is
long-lived, has its address space capped (``RLIMIT_AS``), and is killed and
replaced when a call overruns or the child dies, so the caller only ever sees a
status: ``timeout``, ``memory-limit`` or ``crashed``. An exception raised by the
function itself is re-raised in the caller as it was (a ``RecordError`` keeps its
status). docs/pdf.md, "Isolation", says more.
"""

from __future__ import annotations

import importlib
import multiprocessing
import os
import resource
import signal
import tempfile
from collections.abc import Callable
from multiprocessing import forkserver
from multiprocessing.connection import Connection
from typing import Any, TypeVar

from sandcrawler.core.errors import RecordError
from sandcrawler.process.lifetime import die_with_parent
from sandcrawler.records.statuses import SandboxStatus

T = TypeVar("T")

_CONTEXT = multiprocessing.get_context("forkserver")
#: seconds a new child may take to import what its calls need (not a call's time)
START_TIMEOUT = 120.0
# the sandbox's fork server dies with the process that uses the sandbox
_CONTEXT.set_forkserver_preload(["sandcrawler.process.lifetime_preload"])


# The fork server listens on a Unix socket at <tmp>/pymp-XXXXXXXX/listener-XXXXXXXX,
# and a socket's path may hold at most 107 bytes (sun_path). Under a long TMPDIR
# (a deep data directory, a test's tmp_path) every start failed with "AF_UNIX
# path too long"; Python 3.13 falls back to a short system directory by itself,
# and this does the same on 3.11. Only that socket moves, nothing else.
_SOCKET_ROOM = 107 - len("/pymp-xxxxxxxx/listener-xxxxxxxx")
_SHORT_TEMP_DIRS = ("/tmp", "/var/tmp", "/dev/shm")


def _start_fork_server() -> None:
    base = tempfile.gettempdir()
    if len(os.fsencode(base)) <= _SOCKET_ROOM:
        forkserver.ensure_running()
        return
    short = next((d for d in _SHORT_TEMP_DIRS
                  if os.path.isdir(d) and os.access(d, os.W_OK | os.X_OK)), base)
    saved, tempfile.tempdir = tempfile.tempdir, short
    try:
        forkserver.ensure_running()
    finally:
        tempfile.tempdir = saved


class SandboxError(RecordError):
    pass


class TaskTimeout(SandboxError):
    status = SandboxStatus.TIMEOUT


class TaskMemoryLimit(SandboxError):
    status = SandboxStatus.MEMORY_LIMIT


class TaskCrashed(SandboxError):
    status = SandboxStatus.CRASHED


def _child(conn: Connection, memory_limit: int | None, modules: tuple[str, ...]) -> None:
    die_with_parent()
    if memory_limit:
        resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))
    try:
        # The modules of the calls are imported before the child says it is
        # ready, so a call's time limit measures the call, not the start-up.
        for module in modules:
            importlib.import_module(module)
        conn.send(("ready", None))
        _serve(conn)
    except (EOFError, OSError):
        # The caller is gone (killed, or closed the pipe): nothing to report to,
        # and no traceback for whoever reads our stderr.
        return


def _serve(conn: Connection) -> None:
    while True:
        fn, args, kwargs = conn.recv()
        try:
            conn.send(("ok", fn(*args, **kwargs)))
        except MemoryError:
            conn.send(("memory", None))
        except (BrokenPipeError, ConnectionResetError):
            raise
        except BaseException as e:  # handed to the caller, who re-raises it
            try:
                conn.send(("error", e))
            except (BrokenPipeError, ConnectionResetError):
                raise
            except Exception:  # an exception that does not pickle
                conn.send(("error", RuntimeError(f"{type(e).__name__}: {e}")))


class Sandbox:
    """One child process; ``call`` runs a picklable function in it."""

    def __init__(self, *, memory_limit: int | None = 2 * 1024**3) -> None:
        self.memory_limit = memory_limit
        self._proc: Any = None
        self._conn: Connection | None = None
        self.restarts = 0

    def _start(self, modules: tuple[str, ...]) -> None:
        _start_fork_server()
        parent, child = _CONTEXT.Pipe()
        proc = _CONTEXT.Process(
            target=_child, args=(child, self.memory_limit, modules), daemon=True,
            name="sandcrawler-sandbox",
        )
        try:
            proc.start()
        except OSError as e:  # no process, no file descriptors: a clean status, not a traceback
            parent.close()
            child.close()
            raise TaskCrashed(f"the child process could not be started: {e}") from None
        # only a started process is kept, so close() never joins one that never ran
        self._proc = proc
        child.close()
        self._conn = parent
        try:
            ready = parent.poll(START_TIMEOUT) and parent.recv()[0] == "ready"
        except (EOFError, OSError):
            ready = False
        if not ready:
            self._kill()
            raise TaskCrashed(f"the child process did not start within {START_TIMEOUT:g} s")

    def _kill(self) -> None:
        if self._proc is not None:
            if self._proc.is_alive():
                os.kill(self._proc.pid, signal.SIGKILL)
            self._proc.join()
            self._proc = None
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def call(self, fn: Callable[..., T], *args: Any, timeout: float, **kwargs: Any) -> T:
        if self._proc is None or not self._proc.is_alive():
            if self._proc is not None:
                self.restarts += 1
            self._kill()
            self._start((fn.__module__,))
        assert self._conn is not None
        self._conn.send((fn, args, kwargs))
        try:
            ready = self._conn.poll(timeout)
        except (EOFError, OSError):
            ready = True
        if not ready:
            self._kill()
            self.restarts += 1
            raise TaskTimeout(f"took longer than {timeout:g} s (child killed)")
        try:
            kind, value = self._conn.recv()
        except (EOFError, OSError):
            self._proc.join(timeout=5)
            code = self._proc.exitcode
            self._kill()
            self.restarts += 1
            if code is not None and code < 0:
                what = signal.Signals(-code).name
            else:
                what = f"exit status {code}"
            raise TaskCrashed(f"the child process died ({what})") from None
        if kind == "ok":
            result: T = value  # what fn returned, unpickled from the child
            return result
        if kind == "memory":
            limit = f"{self.memory_limit / 2**20:,.0f} MiB" if self.memory_limit else "?"
            raise TaskMemoryLimit(f"ran out of memory (limit {limit})")
        raise value

    def close(self) -> None:
        self._kill()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
