"""Title-word search in SQL: the one condition the catalogue and the Crossref
search share (LIKE, case-insensitive, on SQLite and PostgreSQL alike)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import ColumnElement, and_, func


def like_escape(text: str) -> str:
    """``text`` matched literally by a LIKE pattern with ``escape="\\"``."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def holds_every_word(text: ColumnElement[Any], words: Sequence[str]) -> ColumnElement[bool]:
    """``text`` holds every one of ``words`` (case-insensitive), each matched literally."""
    lowered = func.lower(text)
    return and_(*[lowered.like("%" + like_escape(w.lower()) + "%", escape="\\")
                  for w in words])
