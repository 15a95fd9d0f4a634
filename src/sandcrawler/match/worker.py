"""``match biblio``'s worker: JSON lines of biblios -> one match result each.

Every input line gets an output line, in order, even a line that is not JSON
(``bad-json``) or not a biblio (``bad-biblio``): a caller pairs answers with
questions by position as well as by ``id``.
"""

from __future__ import annotations

import logging
from typing import Any

from sandcrawler.core.errors import InfrastructureError, RecordError
from sandcrawler.core.work import Item, Outcome, decode_json
from sandcrawler.match.matcher import Matcher
from sandcrawler.records.match import MatchResult
from sandcrawler.records.statuses import PipelineStatus

log = logging.getLogger(__name__)


class MatchBiblioWorker:
    def __init__(self, matcher: Matcher) -> None:
        self.matcher = matcher

    def process_batch(self, items: list[Item]) -> list[Outcome]:
        results: list[MatchResult | None] = []
        good: list[Any] = []
        for item in items:
            try:
                good.append(decode_json(item.data))
                results.append(None)
            except RecordError as e:
                results.append(MatchResult(e.status, error=str(e)))
        try:
            answers = self.matcher.match_many(good)
        except InfrastructureError:
            raise
        except Exception:
            answers = [self._one(b) for b in good]
        matched = iter(answers)
        outcomes = []
        for item, result in zip(items, results, strict=True):
            r = result if result is not None else next(matched)
            if r.error is not None:
                outcomes.append(Outcome(item.where, r.status, kind="error", output=r,
                                        error=r.error))
            else:
                outcomes.append(Outcome(item.where, r.status, output=r))
        return outcomes

    def _one(self, biblio: Any) -> MatchResult:
        """One biblio alone, after a bug stopped its batch: the others are
        answered, and this one gets ``internal-error`` on its own line (every
        input line has its answer), with the exception logged in full."""
        try:
            return self.matcher.match_many([biblio])[0]
        except InfrastructureError:
            raise
        except Exception as e:
            log.exception("match biblio: internal error")
            return MatchResult(PipelineStatus.INTERNAL_ERROR,
                               id=biblio.get("id") if isinstance(biblio, dict) else None,
                               error=f"{type(e).__name__}: {e}")

    def close(self) -> None:
        """The matcher belongs to the services that built it."""
