"""``match biblio``'s worker: JSON lines of biblios -> one match result each.

Every input line gets an output line, in order, even a line that is not JSON
(``bad-json``) or not a biblio (``bad-biblio``): a caller pairs answers with
questions by position as well as by ``id``.
"""

from __future__ import annotations

from typing import Any

from sandcrawler.errors import RecordError
from sandcrawler.match.matcher import Matcher
from sandcrawler.models.match import MatchResult
from sandcrawler.work import Item, Outcome, decode_json


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
        matched = iter(self.matcher.match_many(good))
        outcomes = []
        for item, result in zip(items, results, strict=True):
            r = result if result is not None else next(matched)
            if r.error is not None:
                outcomes.append(Outcome(item.where, r.status, kind="error", output=r,
                                        error=r.error))
            else:
                outcomes.append(Outcome(item.where, r.status, output=r))
        return outcomes

    def close(self) -> None:
        """The matcher belongs to the services that built it."""
