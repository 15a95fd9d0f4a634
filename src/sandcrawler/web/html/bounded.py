"""HTML work with a time limit and a memory limit: ``HtmlWork.run`` calls a function
in a child process (``sandcrawler.process.sandbox``) and turns whatever stops it into a
``RecordError`` with one status (``html-too-complex``) that names the page.

Building an HTML tree is not linear in the page (deep nesting, re-opened
formatting elements), and a parser's C code cannot be interrupted from Python,
so the work runs in a long-lived child that is killed when a call overruns.
Every user of the same limits in a process shares one ``HtmlWork``
(``shared_work``) (docs/ingest.md, "HTML work in a child process").
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from selectolax.lexbor import SelectolaxError

from sandcrawler.core.errors import RecordError
from sandcrawler.process.sandbox import Sandbox, TaskCrashed, TaskMemoryLimit, TaskTimeout
from sandcrawler.records.statuses import Status

T = TypeVar("T")


class HtmlWork:
    """A sandbox for HTML work, started on first use. ``status``: what a page gets
    when its work is stopped; ``memory_limit``: the child's address space."""

    def __init__(self, status: Status, *, memory_limit: int) -> None:
        self.status = status
        self.memory_limit = memory_limit
        self._sandbox: Sandbox | None = None
        self._pid = 0
        # one call at a time on the child's pipe
        self._lock = threading.Lock()

    def run(self, fn: Callable[..., T], *args: Any, timeout: float, page: str) -> T:
        """``fn(*args)`` in the child (``fn`` is a module-level function, sent by
        name); ``page`` names the page in the error of a call that was stopped."""
        with self._lock:
            sandbox = self._sandbox_here()
            memory = f"{self.memory_limit / 2**20:,.0f} MiB"
            try:
                return sandbox.call(fn, *args, timeout=timeout)
            except TaskTimeout:
                why = f"parsing the page's HTML took longer than {timeout:g} s (stopped)"
            except TaskMemoryLimit:
                why = f"parsing the page's HTML needed more than {memory} (stopped)"
            except SelectolaxError as e:  # Lexbor's allocations failed under the limit
                why = f"the HTML parser could not build the page's tree within {memory} ({e})"
            except TaskCrashed as e:
                why = f"the HTML parser failed on the page: {e}"
        raise RecordError(f"{page}: {why}", self.status)

    def _sandbox_here(self) -> Sandbox:
        if self._sandbox is None or self._pid != os.getpid():
            self._sandbox = Sandbox(memory_limit=self.memory_limit)
            self._pid = os.getpid()
        return self._sandbox


_SHARED: dict[tuple[Status, int], HtmlWork] = {}
_SHARED_LOCK = threading.Lock()


def shared_work(status: Status, *, memory_limit: int) -> HtmlWork:
    """This process's ``HtmlWork`` for ``status`` and ``memory_limit`` (made on
    first use; never closed by its users)."""
    with _SHARED_LOCK:
        work = _SHARED.get((status, memory_limit))
        if work is None:
            work = _SHARED[(status, memory_limit)] = HtmlWork(status, memory_limit=memory_limit)
        return work
