"""JSON text out: orjson, and text that is already JSON passed through untouched."""

from __future__ import annotations

from typing import Any

import orjson


class RawJSON(str):
    """JSON text that is already serialised (e.g. the input line itself): writers
    take it as it is instead of parsing and dumping it again."""

    __slots__ = ()


def dumps(value: Any) -> str:
    if isinstance(value, RawJSON):
        return str.__str__(value)
    return orjson.dumps(value).decode()


def dumps_output(value: Any) -> bytes:
    """A result as JSON bytes. A string holding bytes that are not UTF-8 (a file
    name read from the disk or a queue: ``os.fsdecode`` keeps such bytes as lone
    surrogates, which JSON cannot hold) is written with those bytes escaped,
    ``\\xff``, rather than refused. TypeError for anything else JSON cannot hold."""
    try:
        return orjson.dumps(value)
    except TypeError:
        return orjson.dumps(_escape_surrogates(value))


def _escape_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        except UnicodeEncodeError:  # a surrogate that stands for no byte
            return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {_escape_surrogates(k): _escape_surrogates(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_escape_surrogates(v) for v in value]
    return value
