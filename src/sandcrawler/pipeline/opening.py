"""The opening of a batch run: an input that is not what the command reads (a
PDF given to ``persist crossref``) ends the run with one line saying what was
expected and what came, instead of one error line per record and exit 0.

Only the first records are judged: when the first ``OPENING`` are all
undecodable and none is good, the input is the wrong thing. A bad line later in
a good file keeps its own status and the run goes on.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from sandcrawler.core.errors import SandcrawlerError
from sandcrawler.core.work import Item, Outcome
from sandcrawler.records.statuses import PipelineStatus

#: how many undecodable records, with no good one before them, end the run
OPENING = 5

#: statuses that say the bytes are not records of any kind, whatever the worker
UNDECODABLE = frozenset({PipelineStatus.BAD_UTF8, PipelineStatus.BAD_JSON,
                         PipelineStatus.LINE_TOO_LONG})

#: first bytes -> what the input probably is, and the hint for it
_SIGNATURES = (
    (b"%PDF-", "a PDF"),
    (b"\x1f\x8b", "gzip-compressed (decompress it first, e.g. zcat)"),
    (b"PK\x03\x04", "a zip file"),
    (b"WARC/", "a WARC file"),
    (b"<?xml", "XML"),
    (b"<!doctype html", "HTML"),
    (b"<html", "HTML"),
)


class WrongInput(SandcrawlerError):
    """The input is not what the command reads: the run ends (exit 1)."""


@dataclass(frozen=True, slots=True)
class Expected:
    #: the input as the user named it (a path, or stdin)
    source: str
    #: what the command reads, e.g. "Crossref works"
    reads: str


def guess(first: bytes) -> str | None:
    """What an input whose first line is ``first`` probably is."""
    head = first.lstrip()[:64].lower()
    return next((what for sig, what in _SIGNATURES if head.startswith(sig.lower())), None)


class OpeningCheck:
    """Holds back the error lines of the first records until it knows whether the
    input is usable: released as soon as a good record comes (or the input ends
    first), replaced by one ``WrongInput`` when ``OPENING`` undecodable ones do."""

    def __init__(self, expected: Expected, opening: int = OPENING) -> None:
        self.expected = expected
        self.opening = opening
        self.judging = True
        self._held: list[str] = []
        self._statuses: Counter[str] = Counter()
        self._first: bytes | None = None

    def screen(self, batch: Sequence[Item], outcomes: Sequence[Outcome],
               lines: list[str]) -> list[str]:
        """The report lines of a booked batch to print now (WrongInput when decided)."""
        if not self.judging:
            return lines
        for item, outcome in zip(batch, outcomes, strict=True):
            if outcome.status not in UNDECODABLE:
                self.judging = False
                return self.release() + lines
            if self._first is None:
                self._first = item.data
            self._statuses[str(outcome.status)] += 1
            if sum(self._statuses.values()) >= self.opening:
                raise WrongInput(self.message())
        self._held.extend(lines)
        return []

    def release(self) -> list[str]:
        """What was held back (the input ended, or a good record came)."""
        held, self._held = self._held, []
        return held

    def message(self) -> str:
        statuses = ", ".join(f"{s} {n}" for s, n in self._statuses.most_common())
        text = (f"{self.expected.source}: the first {self.opening} lines are unreadable "
                f"({statuses}): this command reads {self.expected.reads}, one per line")
        what = guess(self._first or b"")
        return f"{text}; is it {what}?" if what else text
