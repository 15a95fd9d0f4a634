"""Locks among every process that uses one database: migrations, writers of one
document's metadata, writers of one item of the item store.

PostgreSQL: a transaction advisory lock on a connection of its own. SQLite: an
exclusive ``flock`` on one of ``SLOTS`` files chosen by the name's hash. Either
is released if the process dies. Locks do not nest: a holder that asks for a
second name may wait for itself (docs/architecture.md, "Locks among processes").
"""

from __future__ import annotations

import fcntl
import hashlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, suppress
from pathlib import Path

from sqlalchemy import Connection, Engine, text
from sqlalchemy.exc import DBAPIError, OperationalError

from sandcrawler.core.errors import DatabaseUnavailable
from sandcrawler.db.engine import first_line, unavailable

#: lock files of a SQLite database (names share them by their hash)
SLOTS = 256


class Held:
    """A lock being held. ``check()`` before a step that is only safe under it:
    a PostgreSQL lock goes with its connection (a server restart, a failover, an
    idle-in-transaction timeout), after which another process may hold it."""

    def __init__(self, name: str, conn: Connection | None = None) -> None:
        self.name = name
        self._conn = conn
        self._lost: str | None = None

    def check(self) -> None:
        """DatabaseUnavailable if the lock may no longer be ours."""
        if self._conn is None:
            return  # a flock lasts as long as its open file, which the holder keeps
        if self._lost is not None:
            raise DatabaseUnavailable(self._lost)
        try:
            # the transaction that holds the lock is alive: the lock is ours
            self._conn.execute(text("SELECT 1"))
        except DBAPIError as e:
            self._lost = (f"lost the lock {self.name!r} with its database connection "
                          f"({first_line(e.orig or e)}): another process may hold it now")
            raise DatabaseUnavailable(self._lost) from e


#: what a component that locks is given (``partial(exclusive, engine)``): a name
#: -> its lock, held for a block
NamedLocks = Callable[[str], AbstractContextManager[Held]]


def _key(name: str) -> int:
    """A stable signed 64-bit advisory lock key for ``name``."""
    return int.from_bytes(hashlib.blake2b(name.encode(), digest_size=8).digest(), "big") >> 1


def lock_file(database: str, name: str) -> Path:
    """The file whose ``flock`` is the lock ``name`` of a SQLite database."""
    return Path(f"{database}.locks") / f"{_key(name) % SLOTS:02x}"


@contextmanager
def exclusive(engine: Engine, name: str) -> Iterator[Held]:
    """Hold the lock ``name`` for the block; one holder at a time, waiting as
    long as the holder before it takes."""
    if engine.dialect.name == "postgresql":
        with _advisory(engine, name) as held:
            yield held
        return
    database = engine.url.database if engine.dialect.name == "sqlite" else None
    if not database or database == ":memory:":
        yield Held(name)  # a database of this process alone
        return
    path = lock_file(database, name)
    path.parent.mkdir(exist_ok=True)
    with path.open("a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield Held(name)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@contextmanager
def _advisory(engine: Engine, name: str) -> Iterator[Held]:
    try:
        conn = engine.connect()
    except OperationalError as e:
        raise unavailable(engine, e) from e
    try:
        try:
            conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _key(name)})
        except OperationalError as e:
            raise unavailable(engine, e) from e
        yield Held(name, conn)
    finally:
        # Ends the transaction, and the lock with it; a connection that is gone
        # took the lock with it.
        with suppress(DBAPIError):
            conn.rollback()
        conn.close()
