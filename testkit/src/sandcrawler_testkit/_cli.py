"""What the kit's runnable modules (``python -m sandcrawler_testkit.<module>``) share:
a parser named after the module, the ``--port`` option, one-line errors instead of
tracebacks, and serving until told to stop."""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import signal
import socket
import threading
from typing import NoReturn


def parser(module: str, description: str) -> argparse.ArgumentParser:
    return argparse.ArgumentParser(
        prog=f"python -m {module}", description=description,
        formatter_class=argparse.RawDescriptionHelpFormatter)


def port_number(text: str) -> int:
    """An argparse type: a TCP port, 0 meaning any free one."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"not a port number: {value} (0 to 65535)")
    return value


def add_port(parser: argparse.ArgumentParser, default: int) -> None:
    parser.add_argument(
        "--port", type=port_number, default=default,
        help=f"port to listen on, on 127.0.0.1 (0: any free port; default: {default})")


def fail(parser: argparse.ArgumentParser, message: str) -> NoReturn:
    """``<prog>: error: <message>`` on stderr, exit status 1."""
    parser.exit(1, f"{parser.prog}: error: {message}\n")


def listen_error(port: int, exc: OSError) -> str:
    """The one line that says why listening on ``port`` failed, and what to do."""
    if exc.errno == errno.EADDRINUSE:
        return (f"port {port} on 127.0.0.1 is already in use; "
                "choose another with --port (0: any free port)")
    return f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}"


def check_port(port: int) -> None:
    """OSError if ``port`` cannot be listened on now (as the servers bind: with
    SO_REUSEADDR). For servers that run in child processes, which would otherwise
    only say so in their logs."""
    if port == 0:
        return
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", port))
        s.listen(1)


def stop_requested(*, stdin_eof: bool = False) -> threading.Event:
    """An event set on SIGTERM or Ctrl-C (SIGINT), or with ``stdin_eof`` when stdin
    closes (how a parent process that holds a pipe to it says stop). Called before
    the server starts and says where it listens: a parent that reads that line may
    signal at once, and a handler installed only after it would come too late
    (the default action kills the process without its clean-up)."""
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    signal.signal(signal.SIGINT, lambda *_: stopped.set())
    if stdin_eof:
        def read_to_eof() -> None:
            # the file descriptor, not sys.stdin: a daemon thread blocked in the
            # buffered reader holds its lock, and a process that exits meanwhile (a
            # usage error, before the server is up) aborts at shutdown (SIGABRT)
            with contextlib.suppress(OSError):  # no stdin at all: stop
                while os.read(0, 65536):
                    pass
            stopped.set()

        threading.Thread(target=read_to_eof, daemon=True).start()
    return stopped
