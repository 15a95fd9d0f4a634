"""Timestamps: aware UTC datetimes inside, ISO 8601 with ``Z`` in JSON, and the
14-digit ``YYYYMMDDhhmmss`` (UTC) of CDX lines and WARC file names.

Formatting is warcio's (``warcio.timeutils``), which every WARC of ours is
written with; parsing ISO 8601 is the standard library's, which also takes
offsets other than ``Z``.
"""

from __future__ import annotations

from datetime import UTC, datetime

from warcio.timeutils import datetime_to_iso_date, timestamp_now, timestamp_to_iso_date


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
    """``2021-05-10T22:08:45Z`` (microseconds when there are some): the form every
    JSON record of ours uses."""
    ts = parse_timestamp(ts)
    if ts is None:
        return None
    # warcio formats naive UTC datetimes (warcio has no type hints: its strings
    # are typed where they are taken, here and below)
    iso: str = datetime_to_iso_date(ts.replace(tzinfo=None), use_micros=True)
    return iso


def now14() -> str:
    """Now, as the 14 digits of a CDX line (UTC, to the second)."""
    dt14: str = timestamp_now()
    return dt14


def warc_date(dt14: str) -> str:
    """``WARC-Date`` of a 14-digit timestamp: ``2017-07-06T00:59:50Z``."""
    iso: str = timestamp_to_iso_date(dt14)
    return iso
