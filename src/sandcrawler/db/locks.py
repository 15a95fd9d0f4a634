"""Locks among every process that uses one database: migrations, and writers of
one document's metadata.

PostgreSQL: an advisory lock, held by the transaction of a connection of its
own (so it spans whatever the caller does meanwhile, in the store or in other
transactions, and is released if the process dies). SQLite, a file on this
machine: an exclusive ``flock`` on ``<database file>.lock`` beside it.
"""

from __future__ import annotations

import fcntl
import hashlib
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Engine, text

from sandcrawler.db.engine import begin


def _key(name: str) -> int:
    """A stable signed 64-bit advisory lock key for ``name``."""
    return int.from_bytes(hashlib.blake2b(name.encode(), digest_size=8).digest(), "big") >> 1


@contextmanager
def exclusive(engine: Engine, name: str) -> Iterator[None]:
    """Hold the lock ``name`` for the block; one holder at a time. On SQLite all
    names share the database's one lock file (a coarse lock, for one machine)."""
    if engine.dialect.name == "postgresql":
        with begin(engine) as conn:
            conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _key(name)})
            yield
        return
    database = engine.url.database if engine.dialect.name == "sqlite" else None
    if not database or database == ":memory:":
        yield
        return
    with open(f"{database}.lock", "a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
