"""``grobid_refs`` and ``crossref`` rows, as they travel as JSON lines and into the
database, and the seed's JSON of a parsed reference (``biblio_to_dict``).

Two kinds of ``grobid_refs`` row: ``ParsedRefs`` as a worker made it from a
parser's answer, and ``GrobidRefsRow`` as read back (validated) from a JSON
line. Both become the same JSON, and the same database row, in the sink
(``to_json`` / ``columns``).
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar, TypedDict, cast

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_serializer,
    field_validator,
)

from sandcrawler.core.identifiers import normalize_doi
from sandcrawler.core.jsontext import RawJSON
from sandcrawler.core.timestamps import iso_utc

if TYPE_CHECKING:
    from grobid_tei_xml import GrobidBiblio

#: a biblio dataclass's field names, by class: dataclasses.fields() is slow to ask
#: for every object
_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def biblio_to_dict(obj: Any) -> dict[str, Any]:
    """Exactly ``GrobidBiblio.to_dict()``, without its deep copy and second pass.

    ``to_dict()`` is ``asdict()`` followed by dropping ``None``, ``""`` and ``{}``
    values recursively (lists stay, even empty ones). It was most of the
    pipeline's CPU time per work; a test checks both agree on real GROBID output.
    ``obj`` is a GrobidBiblio or one of its nested dataclasses (author, affiliation).
    """
    names = _FIELD_NAMES.get(type(obj))
    if names is None:
        names = _FIELD_NAMES[type(obj)] = tuple(f.name for f in dataclasses.fields(obj))
    out: dict[str, Any] = {}
    for name in names:
        value = getattr(obj, name)
        if value is None:
            continue
        kind = type(value)
        if kind is str:  # by far the most common: test it first
            if not value:
                continue
        elif kind is list:
            value = [biblio_to_dict(v) if dataclasses.is_dataclass(v) else v for v in value]
        elif dataclasses.is_dataclass(value):
            value = biblio_to_dict(value)
            if not value:
                continue
        out[name] = value
    return out


class AddressJson(TypedDict, total=False):
    addr_line: str
    post_code: str
    settlement: str
    country: str


class AffiliationJson(TypedDict, total=False):
    institution: str
    department: str
    laboratory: str
    address: AddressJson


class AuthorJson(TypedDict, total=False):
    full_name: str
    given_name: str
    middle_name: str
    surname: str
    email: str
    orcid: str
    affiliation: AffiliationJson


class BiblioJson(TypedDict, total=False):
    """One reference of ``refs_json``: ``biblio_to_dict`` of a GrobidBiblio (its
    empty fields left out, ``authors`` always there). A TypedDict, not a class:
    it is the JSON the row stores and the matcher reads, made once where the
    reference was parsed (see ``ParsedRefs.refs_json``)."""

    authors: list[AuthorJson]
    index: int
    id: str
    unstructured: str
    date: str
    title: str
    book_title: str
    series_title: str
    editors: list[AuthorJson]
    journal: str
    journal_abbrev: str
    publisher: str
    institution: str
    issn: str
    eissn: str
    volume: str
    issue: str
    pages: str
    first_page: str
    last_page: str
    note: str
    doi: str
    pmid: str
    pmcid: str
    arxiv_id: str
    pii: str
    ark: str
    istex_id: str
    url: str


def biblio_json(biblio: GrobidBiblio) -> BiblioJson:
    """``biblio_to_dict`` of a whole reference, as its typed JSON."""
    return cast(BiblioJson, biblio_to_dict(biblio))


@dataclasses.dataclass(frozen=True, slots=True)
class ParsedRefs:
    """A ``grobid_refs`` row as a worker made it from a parser's answer (its
    values already normalised: ``GrobidRefsRow`` is the row read from a line)."""

    table: ClassVar[str] = "grobid_refs"

    source: str
    source_id: str
    #: ISO 8601 UTC (``timestamps.iso_utc``), as the JSON line has it
    source_ts: str | None
    #: the seed's ``refs_json``: each reference's ``GrobidBiblio.to_dict()``, made
    #: by ``biblio_to_dict`` where it was parsed. Not the biblios themselves: under
    #: ``-j N`` a row travels to the sink's process, and GROBID's nested
    #: dataclasses pickle ten times slower than their JSON (bench/perf/parse_crossref_refs.py)
    refs_json: list[dict[str, Any]]

    def columns(self) -> dict[str, Any]:
        return {"source": self.source, "source_id": self.source_id,
                "source_ts": self.source_ts, "refs_json": self.refs_json}

    def to_json(self) -> dict[str, Any]:
        return self.columns()


class GrobidRefsRow(BaseModel):
    """The seed's grobid_refs schema, read from a JSON line (``persist-grobid-refs``)."""

    model_config = ConfigDict(extra="forbid")

    table: ClassVar[str] = "grobid_refs"

    source: str = Field(min_length=1)
    source_id: str = Field(min_length=1)
    source_ts: datetime | None = None
    #: a list of ``GrobidBiblio.to_dict()``: another producer's JSON, stored as it
    #: came (the seed's column is JSON; its keys are GROBID's, not ours to check)
    refs_json: list[dict[str, Any]]

    @field_validator("source")
    @classmethod
    def _lower_source(cls, v: str) -> str:
        return v.strip().lower()

    @field_validator("source_id")
    @classmethod
    def _doi_lower(cls, v: str, info: ValidationInfo) -> str:
        if info.data.get("source") == "crossref":
            return normalize_doi(v)
        return v

    @field_serializer("source_ts")
    def _ts(self, ts: datetime | None) -> str | None:
        return iso_utc(ts)

    def columns(self) -> dict[str, Any]:
        # built by hand: model_dump() would deep-copy refs_json, the largest part
        # of the row, for nothing
        return {"source": self.source, "source_id": self.source_id,
                "source_ts": iso_utc(self.source_ts), "refs_json": self.refs_json}

    def to_json(self) -> dict[str, Any]:
        return self.columns()


@dataclasses.dataclass(frozen=True, slots=True)
class CrossrefRow:
    """A ``crossref`` row: the work's DOI, its ``indexed`` date-time (ISO 8601 UTC)
    and the work itself, as JSON text already (the input line when it was the
    bare work: stored without a second serialisation)."""

    table: ClassVar[str] = "crossref"

    doi: str
    indexed: str
    record: RawJSON

    def columns(self) -> dict[str, Any]:
        return {"doi": self.doi, "indexed": self.indexed, "record": self.record}
