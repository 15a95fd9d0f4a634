"""Column types and SQL functions that behave the same on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, DateTime, Integer
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.functions import FunctionElement
from sqlalchemy.types import TypeDecorator

from sandcrawler.timestamps import parse_timestamp

#: JSONB on PostgreSQL, JSON (text) elsewhere.
JsonDoc = JSON().with_variant(JSONB(), "postgresql")


class UTCDateTime(TypeDecorator):
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


class octet_length(FunctionElement):
    """``octet_length(x)``: PostgreSQL has it; SQLite (< 3.43) needs the BLOB cast."""

    type = Integer()
    inherit_cache = True


@compiles(octet_length)
def _octet_length_default(element: octet_length, compiler: Any, **kw: Any) -> str:
    return f"octet_length({compiler.process(element.clauses, **kw)})"


@compiles(octet_length, "sqlite")
def _octet_length_sqlite(element: octet_length, compiler: Any, **kw: Any) -> str:
    return f"length(CAST({compiler.process(element.clauses, **kw)} AS BLOB))"
