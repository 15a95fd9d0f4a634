"""Timestamps: aware UTC datetimes inside, ISO 8601 with ``Z`` in JSON."""

from __future__ import annotations

from datetime import UTC, datetime


def parse_timestamp(value: str | datetime | None) -> datetime | None:
    """An ISO 8601 date-time (``Z`` suffix allowed) as an aware UTC datetime.

    Naive values are UTC by our convention (SQLite stores them so)."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def iso_utc(ts: datetime | None) -> str | None:
    """``2021-05-10T22:08:45Z``: the form every JSON record of ours uses."""
    ts = parse_timestamp(ts)
    return None if ts is None else ts.isoformat().replace("+00:00", "Z")
