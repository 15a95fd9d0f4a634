"""Reading Crossref works: envelope, DOI, version timestamp, and the references to re-parse.

A reference is sent to the parser when it has a usable ``unstructured`` string,
no ``DOI``, and is not already structured (docs/refs.md, "Which references are
re-parsed", has the rule). Its ``id`` is the upstream ``key``, else its position;
``index`` is always its position. A work stays Crossref's JSON (a dict) here:
input in Crossref's schema, of which a handful of fields are read, stored as it
came.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sandcrawler.core.errors import RecordError
from sandcrawler.core.identifiers import normalize_doi
from sandcrawler.core.timestamps import iso_utc
from sandcrawler.records.statuses import RefsStatus
from sandcrawler.refs.repair import clean_unstructured

MIN_UNSTRUCTURED = 8
_TITLE_FIELDS = ("article-title", "volume-title", "series-title", "journal-title")
# Fields every Crossref work has at least one of; used to tell "not a work" from
# "a work without a DOI".
_WORK_FIELDS = frozenset({"DOI", "indexed", "type", "reference", "URL", "prefix", "member",
                          "title", "deposited", "created", "publisher"})


@dataclass(frozen=True, slots=True)
class SelectedRef:
    index: int
    key: str
    text: str


def unwrap_work(obj: Any) -> dict[str, Any]:
    """The work itself, from an API envelope (``{"message": {...}}``) or bare."""
    if isinstance(obj, dict) and isinstance(obj.get("message"), dict) and (
        "message-type" in obj or "status" in obj
    ):
        obj = obj["message"]
    if not isinstance(obj, dict):
        raise RecordError(f"not a Crossref work: a JSON {type(obj).__name__}",
                          status=RefsStatus.NOT_CROSSREF_WORK)
    if not _WORK_FIELDS.intersection(obj):
        keys = ", ".join(sorted(obj)[:5]) or "none"
        raise RecordError(f"not a Crossref work (keys: {keys})",
                          status=RefsStatus.NOT_CROSSREF_WORK)
    return obj  # Crossref's JSON as it came: stored as the record, untyped on purpose


def work_doi(work: dict[str, Any]) -> str:
    return normalize_doi(work.get("DOI"))


def work_indexed(work: dict[str, Any]) -> str | None:
    """``indexed.date-time`` (or its millisecond ``timestamp``) as ISO 8601 UTC."""
    indexed = work.get("indexed")
    if not isinstance(indexed, dict):
        return None
    value = indexed.get("date-time")
    if isinstance(value, str) and value:
        try:
            ts = datetime.fromisoformat(value)
        except ValueError:
            raise RecordError(f"bad indexed.date-time: {value!r}",
                              status=RefsStatus.BAD_INDEXED) from None
    elif isinstance(indexed.get("timestamp"), int | float):
        try:
            ts = datetime.fromtimestamp(indexed["timestamp"] / 1000, UTC)
        except (OverflowError, OSError, ValueError):
            raise RecordError(f"indexed.timestamp out of range: {indexed['timestamp']!r}",
                              status=RefsStatus.BAD_INDEXED) from None
    else:
        return None
    return iso_utc(ts)


def is_structured(ref: dict[str, Any]) -> bool:
    if ref.get("author") and ref.get("year") and any(ref.get(f) for f in _TITLE_FIELDS):
        return True
    return bool(ref.get("journal-title") and ref.get("volume") and ref.get("first-page"))


def should_reparse(ref: Any) -> bool:
    if not isinstance(ref, dict) or not isinstance(ref.get("unstructured"), str):
        return False
    return not ref.get("DOI") and not is_structured(ref)


def select_references(work: dict[str, Any]) -> list[SelectedRef]:
    refs = work.get("reference")
    if refs is None:
        return []
    if not isinstance(refs, list):
        raise RecordError(
            f"'reference' is a {type(refs).__name__}, not a list", status=RefsStatus.BAD_REFERENCES
        )
    selected = []
    for index, ref in enumerate(refs):
        if not should_reparse(ref):
            continue
        text = clean_unstructured(ref["unstructured"])
        if len(text) < MIN_UNSTRUCTURED or not any(c.isalpha() for c in text):
            continue
        key = ref.get("key")
        key = str(index) if key is None or key == "" else str(key)
        selected.append(SelectedRef(index=index, key=key, text=text))
    return selected
