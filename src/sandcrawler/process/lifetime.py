"""Processes that die with their parent (Linux ``PR_SET_PDEATHSIG``).

A ``-j N`` run is a tree: the command, its fork server, the worker processes,
each worker's sandbox fork server and sandbox child. If the command is killed
with SIGKILL nothing of it can clean up, and without this every other process
of the tree lives on for good (holding the database files and hundreds of MB).
Each process of the tree asks the kernel for SIGKILL when its parent dies, so
the whole tree goes with its root.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys

_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """SIGKILL this process when its parent dies (Linux); a no-op elsewhere."""
    if not sys.platform.startswith("linux"):
        return
    parent = os.getppid()
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    # the parent gone already: adopted by init before the first look, or by
    # anyone between that look and the prctl (no signal would ever come)
    if parent == 1 or os.getppid() != parent:
        os._exit(1)
