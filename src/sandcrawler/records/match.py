"""What matching says about one biblio (``match biblio``, ``match refs``, a
document's ``match0``): the status, the DOI it names, a score and the reasons.

Reasons are ``field:verdict`` words (``title:same``, ``year:differs``,
``doi:wrong``); docs/matching.md lists them. They say which fields agreed or
disagreed with the chosen work, or, for ``no-match``, with the best candidate.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sandcrawler.records.statuses import MatchStatus, Status

#: the statuses that name a work
MATCHED = frozenset({MatchStatus.EXACT, MatchStatus.STRONG})


@dataclass(frozen=True, slots=True)
class RunnerUp:
    """The second-best work, given when the status is ``ambiguous``."""

    doi: str
    score: float
    reasons: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"doi": self.doi, "score": self.score, "reasons": list(self.reasons)}


@dataclass(frozen=True, slots=True)
class MatchResult:
    """One biblio against the catalog.

    ``doi`` is the matched work's DOI (lower-case) when the status is ``exact``
    or ``strong``, else None; ``candidate`` is the best work found whatever the
    status (for a reader judging a ``weak`` or ``ambiguous`` answer). ``score``
    is in [0, 1]."""

    #: a ``MatchStatus``, or the pipeline's for a line that is not JSON
    status: Status
    doi: str | None = None
    score: float = 0.0
    reasons: tuple[str, ...] = ()
    candidate: str | None = None
    runner_up: RunnerUp | None = None
    #: the input's ``id``, echoed
    id: Any = None
    #: a sentence for a status that is not about the catalog (``bad-biblio``)
    error: str | None = None
    #: the biblio the matcher used, when it parsed it from ``unstructured``
    parsed: dict[str, Any] | None = field(default=None, compare=False)

    @property
    def matched(self) -> bool:
        return self.status in MATCHED

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "status": self.status, "doi": self.doi,
                               "score": self.score, "reasons": list(self.reasons)}
        if self.candidate is not None and self.candidate != self.doi:
            out["candidate"] = self.candidate
        if self.runner_up is not None:
            out["runner_up"] = self.runner_up.to_json()
        if self.error is not None:
            out["error"] = self.error
        return out
