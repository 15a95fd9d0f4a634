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
