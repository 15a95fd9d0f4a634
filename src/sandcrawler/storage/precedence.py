"""Whose word a document's metadata keeps: the one rule of precedence between sources.

Every writer of a document's metadata hands the catalogue ``Layer`` s (a source
and what it says); ``merge`` folds them into the metadata already stored: the
highest-ranked source that gave a field keeps it, lower sources only fill gaps,
and a disagreeing value is kept beside it under ``conflicts``. The sources'
order, when values agree, and the keys the merge owns are in docs/storage.md,
"Precedence of sources".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from sandcrawler.core.errors import RecordError
from sandcrawler.storage.docid import SCHEMES


class Source(StrEnum):
    """Where metadata came from, highest precedence first."""

    USER = "user"
    CROSSREF = "crossref"
    JATS = "jats"
    REQUEST = "request"
    LANDING_PAGE = "landing_page"
    GROBID = "grobid"
    #: the embedded extraction cascade's header (docs/extraction.md)
    EXTRACT = "extract"
    HTML = "html"
    PDF = "pdf"

    @property
    def rank(self) -> int:
        """0 for the highest."""
        return _RANK[self]


_RANK = {source: i for i, source in enumerate(Source)}
_BY_NAME = {str(source): source for source in Source}
AUTHORITATIVE = frozenset({Source.USER, Source.CROSSREF, Source.JATS, Source.REQUEST,
                           Source.LANDING_PAGE})

#: where each identifier may sit in a metadata record (Crossref and biblio-glutton
#: names); the first name is the one sandcrawler's writers use
IDENTIFIER_FIELDS: dict[str, tuple[str, ...]] = {
    "doi": ("DOI", "doi"),
    "pmid": ("pmid", "PMID"),
    "pmcid": ("pmcid", "PMCID", "pmc"),
    "arxiv": ("arxiv_id", "arxiv", "arXiv"),
}
#: a writer's own account, replaced by its latest write
RECORDS = frozenset({"sha1", "pdf", "jats", "html", "ingest"})
#: the merge's own keys (and the catalogue's ``id``): never taken from a layer
OWN = frozenset({"id", "metadata_source", "field_sources", "conflicts"})

#: any name of an identifier -> its scheme
_ALIASES = {name: scheme for scheme, names in IDENTIFIER_FIELDS.items() for name in names}


@dataclass(frozen=True, slots=True)
class Layer:
    """What one source says about a document, in Crossref's field names."""

    source: Source
    fields: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Merged:
    """A document's metadata after a merge, taken apart: what ``to_json`` writes."""

    #: the fields and the writers' records; their values stay the JSON the sources
    #: gave (any field a user gives), in the order first written
    values: Mapping[str, Any]
    #: the source of each field's value (records have none)
    field_sources: Mapping[str, Source]
    #: a lower source's disagreeing values, by source, highest source first
    conflicts: Mapping[Source, Mapping[str, Any]]
    #: the highest-ranked source that has written to the document
    metadata_source: Source | None = None

    def to_json(self) -> dict[str, Any]:
        """The stored form: the values, then ``metadata_source``, ``field_sources``
        and ``conflicts`` (each left out when empty)."""
        out = dict(self.values)
        if self.metadata_source is not None:
            out["metadata_source"] = str(self.metadata_source)
        if self.field_sources:
            out["field_sources"] = {k: str(s) for k, s in self.field_sources.items()}
        if self.conflicts:
            out["conflicts"] = {str(s): dict(fields) for s, fields in self.conflicts.items()}
        return out


def merge(existing: Mapping[str, Any], layers: Iterable[Layer]) -> Merged:
    """``existing`` metadata with ``layers`` folded in by precedence."""
    state = _State(existing)
    written = [layer for layer in layers if any(
        k not in OWN and not _empty(v) for k, v in layer.fields.items())]
    for source in {layer.source for layer in written}:
        state.conflicts.pop(source, None)
    # highest first: within one write a field is set before lower sources are
    # compared with it (the outcome is the same either way; the order reads better)
    for layer in sorted(written, key=lambda la: la.source.rank):
        state.named.add(layer.source)
        for key, value in layer.fields.items():
            if key in OWN or _empty(value):
                continue
            if key in RECORDS:
                state.values[key] = value
            else:
                state.offer(layer.source, key, value)
    return state.result()


def source_of(metadata: Mapping[str, Any], key: str) -> Source:
    """The source of one field of stored metadata (older metadata: see the module)."""
    recorded = metadata.get("field_sources")
    if isinstance(recorded, Mapping) and (found := _source(recorded.get(key))):
        return found
    return _source(metadata.get("metadata_source")) or Source.USER


class _State:
    """Stored metadata taken apart: values, each field's source, conflicts."""

    def __init__(self, existing: Mapping[str, Any]) -> None:
        self.values = {k: v for k, v in existing.items() if k not in OWN}
        self.sources = {k: source_of(existing, k) for k in self.values if k not in RECORDS}
        self.named = {s for s in (_source(existing.get("metadata_source")),) if s}
        self.named.update(self.sources.values())
        self.conflicts: dict[Source, dict[str, Any]] = {}
        stored = existing.get("conflicts")
        for name, fields in (stored.items() if isinstance(stored, Mapping) else ()):
            if (source := _source(name)) and isinstance(fields, Mapping):
                self.conflicts[source] = dict(fields)

    def offer(self, source: Source, key: str, value: Any) -> None:
        held = self._holder(key)
        if held is None:
            self.values[key], self.sources[key] = value, source
            return
        holder = self.sources[held]
        if source.rank <= holder.rank:  # higher, or the same source again: its word
            if source != holder and not _same(key, value, self.values[held]):
                self.conflicts.setdefault(holder, {})[held] = self.values[held]
            if held != key:  # the identifier under another name: one name only
                del self.values[held], self.sources[held]
            self.values[key], self.sources[key] = value, source
        elif not _same(key, value, self.values[held]):
            self.conflicts.setdefault(source, {})[key] = value

    def _holder(self, key: str) -> str | None:
        """The key that holds this field now: itself, or another name of an identifier."""
        if key in self.sources:
            return key
        if key in _ALIASES:
            return next((k for k in self.sources if _ALIASES.get(k) == _ALIASES[key]), None)
        return None

    def result(self) -> Merged:
        conflicts: dict[Source, dict[str, Any]] = {}
        for source in sorted(self.conflicts, key=lambda s: s.rank):
            kept = {k: v for k, v in self.conflicts[source].items()
                    if (held := self._holder(k)) is not None and self.sources[held] != source
                    and not _same(k, v, self.values[held])}
            if kept:
                conflicts[source] = kept
        named = self.named - {Source.REQUEST} or self.named
        return Merged(dict(self.values), dict(self.sources), conflicts,
                      min(named, key=lambda s: s.rank) if named else None)


def _source(value: Any) -> Source | None:
    return _BY_NAME.get(value) if isinstance(value, str) else None


def _empty(value: Any) -> bool:
    if isinstance(value, str):
        return not value.strip()
    return value is None or (isinstance(value, list | dict) and not value)


def _same(key: str, a: Any, b: Any) -> bool:
    if key in _ALIASES:
        return bool(_identifier(key, a) == _identifier(key, b))
    return bool(_plain(a) == _plain(b))


def _identifier(key: str, value: Any) -> Any:
    try:
        return SCHEMES[_ALIASES[key]](value)
    except (RecordError, TypeError, ValueError):
        return _plain(value)


def _plain(value: Any) -> Any:
    """The value as compared: white space folded, a one-item list as its item."""
    if isinstance(value, str):
        return " ".join(value.split())
    if isinstance(value, list):
        return _plain(value[0]) if len(value) == 1 else [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value
