"""Engines and connections for the configured database (SQLite file or PostgreSQL)."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson
from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, OperationalError

from sandcrawler.core.errors import ConfigError, DatabaseUnavailable
from sandcrawler.db.types import storable_json


def normalise_url(url: str) -> str:
    """Accept plain ``postgresql://`` URLs and pick the psycopg 3 driver for them."""
    for plain in ("postgresql://", "postgres://"):
        if url.startswith(plain):
            return "postgresql+psycopg://" + url[len(plain) :]
    return url


#: how long a connection waits for another process's lock on the database file
SQLITE_BUSY_TIMEOUT_S = 30.0


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    cur = dbapi_conn.cursor()
    # The wait first: switching to WAL takes a lock that another process opening
    # the same new file may hold, and without a busy timeout that is an error.
    cur.execute(f"PRAGMA busy_timeout={int(SQLITE_BUSY_TIMEOUT_S * 1000)}")
    # WAL lets readers (e.g. `db status`) run while a persist job writes.
    _switch_to_wal(cur)
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.close()


def _switch_to_wal(cur: Any) -> None:
    """WAL is a property of the file, set once. SQLite does not call its busy
    handler for the switch: several processes opening the same new file at once
    got 'database is locked' at once (seen: 1 in 40 starts of six commands), so
    the switch is retried here, for as long as the busy timeout."""
    deadline = time.monotonic() + SQLITE_BUSY_TIMEOUT_S
    delay = 0.005
    while True:
        try:
            if cur.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                cur.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) or time.monotonic() + delay > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.2)


def make_engine(url: str) -> Engine:
    try:
        parsed = make_url(normalise_url(url))
    except ArgumentError as e:
        raise ConfigError(f"invalid database URL {url!r}: {e}") from e
    kwargs: dict[str, Any] = {
        # JSON columns bind through it: what jsonb refuses is replaced (db/types.py)
        "json_serializer": storable_json,
        "json_deserializer": orjson.loads,
    }
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(parsed, **kwargs)
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    if parsed.get_backend_name() == "postgresql":
        kwargs.update(pool_pre_ping=True, connect_args={"connect_timeout": 10})
        return create_engine(parsed, **kwargs)
    raise ConfigError(
        f"unsupported database {parsed.get_backend_name()!r}: use sqlite or postgresql"
    )


def describe_engine(engine: Engine) -> str:
    return engine.url.render_as_string(hide_password=True)


@contextmanager
def begin(engine: Engine) -> Iterator[Connection]:
    """A transaction; connection-level failures become DatabaseUnavailable."""
    try:
        with engine.begin() as conn:
            yield conn
    except OperationalError as e:
        raise unavailable(engine, e) from e


def unavailable(engine: Engine, exc: OperationalError) -> DatabaseUnavailable:
    return DatabaseUnavailable(
        f"database {describe_engine(engine)} unavailable: {first_line(exc.orig or exc)}"
    )


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
