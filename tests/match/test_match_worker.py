"""``match biblio``'s worker keeps its contract, one answer per input line, even
when a bug stops a batch: the record that hits it gets ``internal-error`` on its
own line and the others are answered."""

from __future__ import annotations

from pathlib import Path

import orjson

from sandcrawler.core.work import Item
from sandcrawler.match.index import SqliteIndex
from sandcrawler.match.matcher import Matcher
from sandcrawler.match.query import Query
from sandcrawler.match.records import from_crossref
from sandcrawler.match.worker import MatchBiblioWorker
from sandcrawler.records.match import MatchResult

WORK = {"title": ["Nitrogen fixation by cyanobacteria in oligotrophic lakes"],
        "author": [{"family": "Howarth"}], "issued": {"date-parts": [[1988]]}}


class BuggyMatcher(Matcher):
    """A real matcher on a real index, with a bug planted for one input."""

    def _match(self, q: Query) -> MatchResult:
        if q.id == "boom":
            raise IndexError("tuple index out of range")
        return super()._match(q)


def test_a_bug_costs_one_line_its_status_not_the_batch(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite3"
    writer = SqliteIndex(path, readonly=False)
    with writer.transaction():
        writer.upsert([from_crossref("10.5555/b", WORK)])
    writer.close()
    worker = MatchBiblioWorker(BuggyMatcher(SqliteIndex(path)))
    lines = [{"id": "a", "title": WORK["title"][0], "authors": [{"surname": "Howarth"}],
              "date": "1988"}, {"id": "boom", "title": "x y z"}, {"id": "c", "title": "q"}]
    outcomes = worker.process_batch([Item(f"line {i}", orjson.dumps(b))
                                     for i, b in enumerate(lines)])
    assert [o.output.id for o in outcomes if isinstance(o.output, MatchResult)] == [
        "a", "boom", "c"]
    assert [str(o.status) for o in outcomes] == ["exact", "internal-error", "too-little"]
    assert outcomes[1].kind == "error" and "IndexError" in (outcomes[1].error or "")
