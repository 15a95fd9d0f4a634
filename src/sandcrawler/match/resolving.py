"""A citing work's references resolved against the catalog: ``citation`` rows.

The citing side is ``doi:<doi>`` for a Crossref work (its ``grobid_refs``
row) or ``uuid:<uuid>`` for a document of the catalogue (its references from
GROBID's TEI, JATS or ``citation_reference`` tags). Each reference keeps its
position (``ref_index``, 0-based) and its upstream key; rows are upserted by
(citing, ref_index), so resolving a work again replaces its rows, never adds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from sandcrawler.match.matcher import Matcher
from sandcrawler.records.match import MatchResult


def citing_doi(doi: str) -> str:
    return f"doi:{doi.lower()}"


def citing_document(uuid: str) -> str:
    return f"uuid:{uuid}"


@dataclass(frozen=True, slots=True)
class CitationRow:
    table: ClassVar[str] = "citation"

    citing: str
    ref_index: int
    ref_key: str | None
    cited_doi: str | None
    status: str
    score: float | None
    reasons: list[str]

    def columns(self) -> dict[str, Any]:
        return {"citing": self.citing, "ref_index": self.ref_index, "ref_key": self.ref_key,
                "cited_doi": self.cited_doi, "status": str(self.status), "score": self.score,
                "reasons": self.reasons}

    def to_json(self) -> dict[str, Any]:
        return self.columns()


def _key(ref: Mapping[str, Any]) -> str | None:
    key = ref.get("id") or ref.get("key")
    return str(key) if key is not None else None


def resolve(matcher: Matcher, citing: str,
            refs: Sequence[Mapping[str, Any]]) -> tuple[list[CitationRow], list[MatchResult]]:
    """Each reference of ``citing`` matched: its citation row, and the full
    result (for a resource that shows more than the row, such as the
    ``references.tei.xml``). A reference that is not a biblio gets a row with
    its status (``bad-biblio``), so the rows stay one per reference."""
    results = matcher.match_many([dict(r) if isinstance(r, Mapping) else r for r in refs])
    rows = []
    for i, (ref, result) in enumerate(zip(refs, results, strict=True)):
        rows.append(CitationRow(
            citing=citing, ref_index=i,
            ref_key=_key(ref) if isinstance(ref, Mapping) else None,
            cited_doi=result.doi, status=str(result.status), score=result.score,
            reasons=list(result.reasons)))
    return rows, results
