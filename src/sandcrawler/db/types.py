"""Column types and SQL functions that behave the same on SQLite and PostgreSQL.

Every string bound for the database is made storable here, the one place: a
NUL and a lone surrogate become U+FFFD (replaced, not removed, so that two
strings never become one). Text columns are ``SafeText``; JSON goes through
``storable_json``. Other control characters are kept (docs/architecture.md,
"Database").
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

import orjson
from sqlalchemy import JSON, DateTime, Integer, Text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.functions import FunctionElement
from sqlalchemy.types import TypeDecorator

from sandcrawler.core.jsontext import RawJSON
from sandcrawler.core.timestamps import parse_timestamp

#: JSONB on PostgreSQL, JSON (text) elsewhere; values serialised by ``storable_json``
#: (``db/engine.py`` makes it the engine's serialiser).
JsonDoc = JSON().with_variant(JSONB(), "postgresql")

REPLACEMENT = "\ufffd"
#: what no backend can store: NUL, and any surrogate (in a str, always a lone one)
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
#: the same written as JSON escapes (a pair of escaped surrogates is matched too: rare,
#: and then read and written again whole)
_UNSTORABLE_ESCAPE = re.compile(r"\\u(?:0000|[dD][89a-fA-F])")


def storable_text(value: str) -> str:
    """``value`` with NUL and lone surrogates replaced by U+FFFD; the same string
    when there are none (the common case costs a flag test and a byte search)."""
    if value.isascii():  # O(1) in CPython: no surrogate; only a NUL to look for
        return value.replace("\x00", REPLACEMENT) if "\x00" in value else value
    return _UNSTORABLE.sub(REPLACEMENT, value)


def _storable(value: Any) -> Any:
    """A JSON-shaped value with every string in it (keys too) made storable."""
    if isinstance(value, str):
        return storable_text(value)
    if isinstance(value, dict):
        return {storable_text(k) if isinstance(k, str) else k: _storable(v)
                for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_storable(v) for v in value]
    return value


def storable_json(value: Any) -> str:
    """JSON text of ``value`` that PostgreSQL's ``jsonb`` takes, NUL and lone
    surrogates replaced at any depth. Serialised once when there are none (orjson
    refuses surrogates; a NUL shows as ``\\u0000`` in its output); ``RawJSON`` is
    passed through unless it escapes one of them (it is JSON text, decoded as UTF-8:
    it holds neither as such). Most JSON has no backslash at all: one byte search."""
    if isinstance(value, RawJSON):
        raw = str.__str__(value)
        if "\\" not in raw or _UNSTORABLE_ESCAPE.search(raw) is None:
            return raw
        # the standard library reads lone surrogate escapes, which orjson refuses
        value = json.loads(raw)
    try:
        out = orjson.dumps(value)
    except TypeError:  # a surrogate; anything else JSON cannot hold fails again below
        return orjson.dumps(_storable(value)).decode()
    if b"\\" in out and b"\\u0000" in out:
        out = orjson.dumps(_storable(value))
    return out.decode()


class SafeText(TypeDecorator[str]):
    """TEXT; a bound string is made storable (``storable_text``), in a written row and
    in a lookup alike, so a value is found by the string it was written with."""

    impl = Text
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Any) -> Any:
        return storable_text(value) if isinstance(value, str) else value


class UTCDateTime(TypeDecorator[datetime]):
    """TIMESTAMP WITH TIME ZONE; on SQLite stored as naive UTC and read back aware."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Any) -> datetime | None:
        ts = parse_timestamp(value)
        if ts is not None and dialect.name == "sqlite":
            return ts.replace(tzinfo=None)
        return ts

    def process_result_value(self, value: Any, dialect: Any) -> datetime | None:
        return parse_timestamp(value)


class octet_length(FunctionElement[int]):
    """``octet_length(x)``: PostgreSQL has it; SQLite (< 3.43) needs the BLOB cast."""

    type = Integer()
    inherit_cache = True


@compiles(octet_length)
def _octet_length_default(element: octet_length, compiler: Any, **kw: Any) -> str:
    return f"octet_length({compiler.process(element.clauses, **kw)})"


@compiles(octet_length, "sqlite")
def _octet_length_sqlite(element: octet_length, compiler: Any, **kw: Any) -> str:
    return f"length(CAST({compiler.process(element.clauses, **kw)} AS BLOB))"
