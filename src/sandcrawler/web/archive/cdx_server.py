"""The wayback CDX server API over our capture index (``web_cdx``), as
``sandcrawler serve`` answers it at ``/cdx``: the query language of the
Internet Archive's wayback-cdx-server (whose client the original sandcrawler
crawler is), with pywb's extra filter forms.

The parameters (``url``, ``matchType``, ``from``/``to``, ``filter``, ``collapse``,
``sort``, ``offset``/``limit``, ``fl``, ``output``) are listed in docs/operations.md,
"CDX server parameters". Pagination is refused rather
than answered with one page as if it were all; a field without a value is ``-``.
"""

from __future__ import annotations

import heapq
import re
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from itertools import islice
from typing import TypeVar

import orjson
from sqlalchemy import Engine, or_, select

from sandcrawler.core.errors import SandcrawlerError
from sandcrawler.db.engine import begin
from sandcrawler.db.schema import web_cdx
from sandcrawler.records.capture import CdxRecord
from sandcrawler.web.archive.cdx import surt

FIELDS = ("urlkey", "timestamp", "original", "mimetype", "statuscode", "digest",
          "redirect", "robotflags", "length", "offset", "filename")
#: the most captures one query returns
MAX_LIMIT = 100_000
#: the longest regular expression a filter may have
MAX_PATTERN = 256
_UNSUPPORTED = ("page", "showNumPages", "showResumeKey", "resumeKey", "showPagedIndex")
_DIGITS = re.compile(r"[0-9]{1,14}")
E = TypeVar("E", bound=StrEnum)


class CdxQueryError(SandcrawlerError):
    """A query that cannot be answered; the message says what is wrong (a 400)."""


class MatchType(StrEnum):
    EXACT = "exact"
    PREFIX = "prefix"
    HOST = "host"
    DOMAIN = "domain"


class SortOrder(StrEnum):
    DEFAULT = "default"
    REVERSE = "reverse"
    CLOSEST = "closest"


def field_values(row: CdxRecord) -> dict[str, str]:
    """A capture's value of each field of ``FIELDS`` (``-`` for none)."""
    return {
        "urlkey": row.surt, "timestamp": row.datetime, "original": row.url,
        "mimetype": row.mimetype or "-",
        "statuscode": "-" if row.status_code is None else str(row.status_code),
        "digest": row.sha1b32 or "-", "redirect": row.location or "-", "robotflags": "-",
        "length": str(row.warc_csize), "offset": str(row.warc_offset),
        "filename": row.warc_path,
    }


@dataclass(frozen=True, slots=True)
class CdxFilter:
    name: str
    test: Callable[[str], bool]
    invert: bool = False

    @classmethod
    def parse(cls, text: str) -> CdxFilter:
        invert = text.startswith("!")
        body = text[1:] if invert else text
        kind = body[0] if body[:1] in ("~", "=") else ""
        name, colon, value = body[len(kind):].partition(":")
        name = _field_name(name, "filter")
        if not colon:
            raise CdxQueryError(f"filter {text[:80]!r} is not [!]field:regex")
        if kind == "~":
            return cls(name, lambda v: value in v, invert)
        if kind == "=":
            return cls(name, lambda v: v == value, invert)
        if len(value) > MAX_PATTERN:
            raise CdxQueryError(f"filter regex longer than {MAX_PATTERN} characters")
        try:
            pattern = re.compile(value)
        except re.error as e:
            raise CdxQueryError(f"filter {text[:80]!r}: not a regular expression ({e})") from None
        return cls(name, lambda v: pattern.fullmatch(v) is not None, invert)

    def accepts(self, values: Mapping[str, str]) -> bool:
        return self.test(values[self.name]) != self.invert


@dataclass(frozen=True, slots=True)
class CdxQuery:
    url: str
    match_type: MatchType = MatchType.EXACT
    from_ts: str | None = None  # 14 digits, padded
    to_ts: str | None = None
    filters: tuple[CdxFilter, ...] = ()
    collapse: tuple[tuple[str, int | None], ...] = ()
    sort: SortOrder = SortOrder.DEFAULT
    closest: str | None = None
    offset: int = 0
    limit: int | None = None  # negative: the last N
    fields: tuple[str, ...] = FIELDS
    output: str = "text"  # or json
    key: str = field(init=False, default="")

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", surt(self.url))

    @classmethod
    def parse(cls, params: Sequence[tuple[str, str]]) -> CdxQuery:
        """The query of a request's parameters (repeated ones in order);
        CdxQueryError saying what is wrong."""
        single: dict[str, str] = {}
        filters: list[CdxFilter] = []
        collapse: list[tuple[str, int | None]] = []
        for name, value in params:
            if name == "filter":
                filters.append(CdxFilter.parse(value))
            elif name == "collapse":
                collapse.append(_collapse(value))
            elif name in _UNSUPPORTED:
                raise CdxQueryError(f"{name}: pagination is not offered here; use limit "
                                    "and offset")
            else:
                single[name] = value
        url = single.get("url", "").strip()
        if not url:
            raise CdxQueryError("url is required, e.g. /cdx?url=example.org/&output=json")
        match_type = single.get("matchType")
        if url.endswith("*"):
            url, match_type = url.rstrip("*"), match_type or MatchType.PREFIX
        if url.startswith("*."):
            url, match_type = url[2:], match_type or MatchType.DOMAIN
        if "://" not in url:
            url = "http://" + url
        if not surt(url).split(")", 1)[0]:
            raise CdxQueryError(f"url {url[:120]!r} has no host")
        output = single.get("output", "text")
        if output not in ("json", "text"):
            raise CdxQueryError(f"output {output[:40]!r}: json or text (the default)")
        sort = _choice(SortOrder, single.get("sort", "default"), "sort")
        closest = _timestamp(single["closest"], "closest", "0") if "closest" in single else None
        if closest is not None and "sort" not in single:
            sort = SortOrder.CLOSEST
        if sort == SortOrder.CLOSEST and closest is None:
            raise CdxQueryError("sort=closest needs closest=TIMESTAMP")
        fl = single.get("fl")
        fields = tuple(_field_name(f.strip(), "fl") for f in fl.split(",")) if fl else FIELDS
        return cls(
            url=url, match_type=_choice(MatchType, match_type or "exact", "matchType"),
            from_ts=_timestamp(single["from"], "from", "0") if "from" in single else None,
            to_ts=_timestamp(single["to"], "to", "9") if "to" in single else None,
            filters=tuple(filters), collapse=tuple(collapse), sort=sort, closest=closest,
            offset=_integer(single.get("offset", "0"), "offset", negative=False),
            limit=_integer(single["limit"], "limit") if "limit" in single else None,
            fields=fields, output=output)


def _choice(enum: type[E], value: str, name: str) -> E:
    try:
        return enum(value)
    except ValueError:
        raise CdxQueryError(f"{name} {value[:40]!r}: one of "
                            + ", ".join(m.value for m in enum)) from None


def _field_name(name: str, where: str) -> str:
    if name.isdigit() and int(name) < len(FIELDS):  # a field by its index, as wayback allows
        return FIELDS[int(name)]
    if name not in FIELDS:
        raise CdxQueryError(f"{where}: no field {name[:40]!r} (fields: {', '.join(FIELDS)})")
    return name


def _collapse(text: str) -> tuple[str, int | None]:
    name, colon, length = text.partition(":")
    return _field_name(name, "collapse"), (
        _integer(length, "collapse length", negative=False) if colon else None)


def _timestamp(text: str, name: str, pad: str) -> str:
    if not _DIGITS.fullmatch(text):
        raise CdxQueryError(f"{name} {text[:40]!r}: 1 to 14 digits, yyyyMMddhhmmss")
    return text.ljust(14, pad)


def _integer(text: str, name: str, *, negative: bool = True) -> int:
    if not re.fullmatch(r"-?[0-9]{1,9}" if negative else r"[0-9]{1,9}", text):
        raise CdxQueryError(f"{name} {text[:40]!r} is not a whole number")
    return int(text)


def _seconds(ts: str) -> float:
    """A timestamp as seconds (for nearness); an impossible date is taken apart."""
    try:
        return datetime.strptime(ts, "%Y%m%d%H%M%S").timestamp()
    except ValueError:
        return float(int(ts))


def _candidates(engine: Engine, query: CdxQuery, batch: int = 1000) -> Iterator[CdxRecord]:
    """The rows of the URL's scope and time range, by key and timestamp."""
    key = query.key
    host = key.split(")", 1)[0]
    col = web_cdx.c.surt
    scope = {
        MatchType.EXACT: col == key,
        MatchType.PREFIX: col.startswith(key, autoescape=True),
        MatchType.HOST: col.startswith(host + ")", autoescape=True),
        MatchType.DOMAIN: or_(col.startswith(host + ")", autoescape=True),
                              col.startswith(host + ",", autoescape=True)),
    }[query.match_type]
    stmt = select(web_cdx).where(scope)
    if query.from_ts:
        stmt = stmt.where(web_cdx.c.datetime >= query.from_ts)
    if query.to_ts:
        stmt = stmt.where(web_cdx.c.datetime <= query.to_ts)
    order = col.collate("C") if engine.dialect.name == "postgresql" else col
    stmt = stmt.order_by(order, web_cdx.c.datetime, web_cdx.c.warc_path, web_cdx.c.warc_offset)
    with begin(engine) as conn:
        result = conn.execution_options(stream_results=True, yield_per=batch).execute(stmt)
        for row in result:
            yield CdxRecord.from_row(row._mapping)


def _kept(rows: Iterable[CdxRecord], query: CdxQuery) -> Iterator[dict[str, str]]:
    """Each row's values, filtered and collapsed."""
    last: dict[str, str] | None = None
    for row in rows:
        values = field_values(row)
        if not all(f.accepts(values) for f in query.filters):
            continue
        if last is not None and query.collapse and all(
                values[name][:n] == last[name][:n] for name, n in query.collapse):
            continue
        last = values
        yield values


def run_query(engine: Engine, query: CdxQuery) -> list[list[str]]:
    """The captures that answer ``query``: each a list of the values of its fields.
    ``offset`` skips that many of the order asked for (with a negative limit, of
    the key and time order, before the last N are taken); at most ``offset`` +
    ``MAX_LIMIT`` captures are held at once."""
    kept = _kept(_candidates(engine, query), query)
    cap = MAX_LIMIT if query.limit is None else min(abs(query.limit), MAX_LIMIT)
    target = _seconds(query.closest) if query.closest else 0.0

    def distance(values: dict[str, str]) -> float:
        return abs(_seconds(values["timestamp"]) - target)

    chosen: list[dict[str, str]]
    if query.limit is not None and query.limit < 0:
        rest = islice(kept, query.offset, None)
        if query.sort == SortOrder.CLOSEST:  # the N farthest, nearest first
            chosen = heapq.nlargest(cap, rest, key=distance)[::-1]
        elif query.sort == SortOrder.REVERSE:  # the last N of latest-first: the earliest
            chosen = list(islice(rest, cap))[::-1]
        else:
            chosen = list(deque(rest, maxlen=cap))
    elif query.sort == SortOrder.CLOSEST:
        chosen = heapq.nsmallest(query.offset + cap, kept, key=distance)[query.offset:]
    elif query.sort == SortOrder.REVERSE:
        chosen = list(deque(kept, maxlen=query.offset + cap))[::-1][query.offset:]
    else:
        chosen = list(islice(kept, query.offset, query.offset + cap))
    return [[values[name] for name in query.fields] for values in chosen]


def render(query: CdxQuery, rows: list[list[str]]) -> tuple[bytes, str]:
    """The answer's body and media type: JSON (a header row of field names, then
    the rows; ``[]`` for none) or text lines."""
    if query.output == "json":
        return orjson.dumps([list(query.fields), *rows] if rows else []), "application/json"
    return "".join(" ".join(r) + "\n" for r in rows).encode(), "text/plain; charset=utf-8"
