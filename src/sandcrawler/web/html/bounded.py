"""HTML work with a time limit and a memory limit: ``HtmlWork.run`` calls a function
in a child process (``sandcrawler.process.sandbox``) and turns whatever stops it into a
``RecordError`` with one status (``html-too-complex``) that names the page.

Why a child process: building the tree of an HTML page, as the HTML standard says
and Lexbor does, is not linear in the page. Most start tags (``<div>``, ``<li>``,
``<section>``, ...) look down the stack of open elements, so a page of 440,000
nested ``<div>``s (2.2 MB, a few KB gzipped) costs minutes of CPU; and each new
paragraph re-opens every formatting element left open before it (``<b id=1>``,
``<b id=2>``, ... escape the standard's limit of three alike), so a 56 KB page
becomes 4.5 million elements and 1.6 GB of memory while its source is two levels
deep. No cheap look at the bytes beforehand catches every such shape, and a
parser's C code cannot be interrupted from Python, so the work is done where it
can be stopped: a long-lived child that is killed when a call overruns (and
replaced for the next one). A call costs the pickling of the page and of the
result through a pipe on top of the work: about 0.3 ms a page
(``bench/html_parse.py``), against 2 to 20 ms to analyse a real article page.

Every user of the same limits in a process shares one ``HtmlWork``
(``shared_work``): its child starts once and stays warm (the libraries it loads,
their first-call set-up), however many crawlers and processors the process builds
and closes, and dies with the process. A process forked from one that has an
``HtmlWork`` starts its own child: the parent's child and its pipe are never used
from the copy.
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
