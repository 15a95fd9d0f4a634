"""Values as people read them: dates, sizes, names, text that went through the
wrong encoding. Every page formats with these, so a date or a name reads the
same everywhere."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sandcrawler.core.textfix import readable
from sandcrawler.core.timestamps import parse_timestamp

_DT14 = re.compile(r"\d{14}")
_UNITS = ("KB", "MB", "GB", "TB")


def when(value: Any) -> str:
    """``2026-11-25 21:13:32 UTC`` for an ISO 8601 date-time, a datetime, or the 14
    digits of a CDX line (``20261125211332``); anything else as it is ('' for None)."""
    if value is None or value == "":
        return ""
    text = iso(value) or value
    try:
        ts = parse_timestamp(text) if isinstance(text, str | datetime) else None
    except ValueError:
        ts = None
    if ts is None:
        return str(value)
    return ts.strftime("%Y-%m-%d %H:%M:%S UTC")


def iso(value: Any) -> str:
    """The ISO form of what ``when`` shows (for ``<time datetime>``), '' when not a time."""
    if isinstance(value, str) and _DT14.fullmatch(value):
        return f"{value[:4]}-{value[4:6]}-{value[6:8]}T{value[8:10]}:{value[10:12]}:{value[12:]}Z"
    return value if isinstance(value, str) and value[:4].isdigit() else ""


def size(n: Any) -> str:
    """``605,850 bytes (592 KB)``; '' for None."""
    if not isinstance(n, int) or isinstance(n, bool):
        return "" if n is None else str(n)
    text = f"{n:,} byte{'s' if n != 1 else ''}"
    value, shown = float(n), ""
    for unit in _UNITS:
        value /= 1024
        shown = f"{value:,.1f} {unit}"
        if value < 1024:
            break
    return text if n < 1024 else f"{text} ({shown})"


def person_name(value: Any) -> str | None:
    """A person or organisation as one name, whatever shape the metadata gives:
    CSL (``given`` + ``family``; ``literal`` or ``name`` for a name never split, as
    landing pages and JATS give them), GROBID's (``full_name``; ``given_name`` +
    ``surname``), or a plain string. None when it names nobody."""
    if isinstance(value, str):
        name = value
    elif isinstance(value, Mapping):
        name = " ".join(str(value[k]).strip() for k in ("given", "family")
                        if isinstance(value.get(k), str | int) and str(value[k]).strip())
        name = name or " ".join(str(value[k]).strip() for k in ("given_name", "surname")
                                if isinstance(value.get(k), str) and value[k].strip())
        for key in ("full_name", "literal", "name", "raw_name"):
            if name:
                break
            if isinstance(value.get(key), str):
                name = value[key]
    else:
        return None
    name = " ".join(readable(name).split())
    return name or None


def names(values: Any) -> list[str]:
    """Every name in a list of people (see ``person_name``), none empty."""
    if not isinstance(values, list):
        values = [values] if values else []
    return [n for v in values if (n := person_name(v))]


def first_text(value: Any) -> str | None:
    """A string, or the first string of a list (CSL's ``title``), readable; None if empty."""
    if isinstance(value, list):
        value = next((v for v in value if isinstance(v, str) and v.strip()), None)
    if isinstance(value, int | float) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        return None
    return readable(value).strip()


def csl_date(value: Any) -> str | None:
    """CSL's ``{"date-parts": [[2019, 4, 22]]}`` as ``2019-04-22`` (as far as given),
    a ``date-time`` or ``raw`` string as it is."""
    if isinstance(value, Mapping):
        parts = value.get("date-parts")
        if isinstance(parts, list) and parts and isinstance(parts[0], list) and parts[0]:
            nums = [p for p in parts[0] if isinstance(p, int) and not isinstance(p, bool)]
            if nums:
                return "-".join([f"{nums[0]:04d}", *(f"{p:02d}" for p in nums[1:3])])
        for key in ("date-time", "raw", "literal"):
            text = value.get(key)
            if isinstance(text, str):
                return text
        return None
    return first_text(value)
