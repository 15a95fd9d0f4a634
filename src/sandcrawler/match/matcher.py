"""Matcher: a biblio in, a ``MatchResult`` out.

An identifier in the input is verified against the rest of the input, never
copied unchecked; candidates come from the index (title words, the reference
string's words, volume + first page); each is compared (``compare.py``), the best
decides the status, and a runner-up within ``MARGIN`` makes it ``ambiguous``.
docs/matching.md, "How a biblio is matched", explains the steps and thresholds;
bench/eval/match_eval.py measures what they give.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from sandcrawler.citations.base import CitationParser
from sandcrawler.core.errors import CitationParseError, RecordError
from sandcrawler.match.compare import IDENTIFIER_AGREES, Evidence, compare
from sandcrawler.match.index import CandidateIndex
from sandcrawler.match.query import Query, query_from, unbreak
from sandcrawler.match.records import ARXIV_DOI_PREFIX, CatalogRecord, year_locator
from sandcrawler.match.text import (
    STOPWORDS,
    container_in_string,
    containers_agree,
    content_tokens,
    surname_last,
)
from sandcrawler.records.match import MatchResult, RunnerUp
from sandcrawler.records.refs import BiblioJson, biblio_json
from sandcrawler.records.statuses import MatchStatus

#: points a candidate needs to be a match
STRONG = 5.0
#: points below which the best candidate is not reported as even ``weak``
WEAK = 2.5
#: a runner-up this close to the best, and itself near a match, makes the answer ambiguous
MARGIN = 1.5
#: points an identifier's work needs from the other fields to be verified
VERIFY = 2.5
#: candidates asked of the index per lookup
CANDIDATES = 10
LOCATOR_CANDIDATES = 100

_ARXIV_VERSION = re.compile(r"v\d+$")

#: parses reference strings into biblios (refs_json objects), in order
Parse = Callable[[Sequence[str]], list[BiblioJson]]


def parse_with(parser: CitationParser) -> Parse:
    """Reference strings parsed by ``parser``, each on its own so that one the
    parser refuses leaves the others parsed (it is then matched by its string alone)."""

    def parse(strings: Sequence[str]) -> list[BiblioJson]:
        out: list[BiblioJson] = []
        for result in parser.parse_lists([[s] for s in strings]):
            if isinstance(result, CitationParseError) or not result:
                out.append({})
            else:
                out.append(biblio_json(result[0]))
        return out

    return parse


def score_of(points: float) -> float:
    """Points as a score in [0, 1]: 0.5 at the ``weak`` threshold's middle."""
    return round(1.0 / (1.0 + math.exp(-(points - 3.5))), 3)


def _title_words(q: Query) -> list[str]:
    """Every word ``_candidates`` may ask ``by_words`` for this query."""
    return (content_tokens(q.title) if q.title else []) + (_words(q.raw) if q.raw else [])


def _words(text: str) -> list[str]:
    return [w for w in text.split() if w not in STOPWORDS and (len(w) > 2 or not w.isascii())
            and not w.isdigit()]


class Matcher:
    def __init__(self, index: CandidateIndex, parse: Parse | None = None) -> None:
        self.index = index
        self.parse = parse
        self._has_works = False

    def catalog_empty(self) -> bool:
        """Asked again while it is empty: a long-running worker's index fills."""
        if not self._has_works:
            self._has_works = self.index.size() > 0
        return not self._has_works

    # --- batches ----------------------------------------------------------------------

    def match_many(self, biblios: Sequence[Any]) -> list[MatchResult]:
        """Match input objects in order; one that is only ``unstructured`` is
        parsed first (all of a batch's strings in one parser call)."""
        todo = [i for i, b in enumerate(biblios) if _needs_parse(b)]
        parsed: dict[int, dict[str, Any]] = {}
        if todo and self.parse is not None:
            # the parser reads the string as one line, its broken words joined
            strings = [unbreak(str(biblios[i]["unstructured"])) for i in todo]
            for i, biblio in zip(todo, self.parse(strings), strict=True):
                merged = dict(biblio)
                merged["unstructured"] = biblios[i]["unstructured"]
                if "id" in biblios[i]:
                    merged["id"] = biblios[i]["id"]
                parsed[i] = merged
        # each input's query, built once; one that is not a biblio gets its own
        # status and the batch goes on
        queries: list[Query | MatchResult] = []
        for i, b in enumerate(biblios):
            try:
                queries.append(query_from(parsed.get(i, b)))
            except RecordError as e:
                queries.append(MatchResult(
                    e.status, id=b.get("id") if isinstance(b, dict) else None, error=str(e)))
        self.index.expect(w for q in queries if isinstance(q, Query) for w in _title_words(q))

        def one(i: int) -> MatchResult:
            q = queries[i]
            return q if isinstance(q, MatchResult) else self._match(q)

        workers = min(self.index.concurrency, len(biblios))
        if workers <= 1:
            return [one(i) for i in range(len(biblios))]
        # a search engine answers lookups side by side (Solr has no multi-search):
        # the batch's matches run at once, each as it would alone; an outage
        # (InfrastructureError) fails the batch, never one record
        with ThreadPoolExecutor(workers, thread_name_prefix="match") as pool:
            return list(pool.map(one, range(len(biblios))))

    # --- one biblio -------------------------------------------------------------------

    def match(self, biblio: Any) -> MatchResult:
        """Raises ``BadBiblio`` (a RecordError) for input that is not a biblio."""
        return self._match(query_from(biblio))

    def _match(self, q: Query) -> MatchResult:
        if self.catalog_empty():
            return MatchResult(MatchStatus.EMPTY_CATALOG, id=q.id,
                               reasons=("catalog:empty",))
        notes: list[str] = []
        if q.bad_doi:
            notes.append("doi:malformed")
        for key, record in self._identified(q):
            ev = compare(q, record)
            # a notice's own DOI (a correction titled as its article) verifies
            # the notice: the input names it by its identifier
            if ev.points >= VERIFY and (not ev.conflict or ev.notice_only):
                points = ev.points + IDENTIFIER_AGREES
                status = MatchStatus.EXACT if _exact(ev) or ev.points >= STRONG \
                    else MatchStatus.STRONG
                return MatchResult(status, doi=record.doi, score=score_of(points),
                                   reasons=(f"{key}:verified", *ev.reasons),
                                   candidate=record.doi, id=q.id)
            # a conflict (another title, another year) says the identifier names
            # another work; too little agreement only that it cannot be checked
            notes.append(f"{key}:wrong" if ev.conflict or ev.points < 0 else f"{key}:unverified")
        for key in self._unknown_ids(q):
            notes.append(f"{key}:not-in-catalog")
        if q.garbage_title:
            notes.append("title:not-a-title")
        if not q.usable():
            notes.append("title:generic" if q.title else "title:missing")
            return MatchResult(MatchStatus.TOO_LITTLE, id=q.id, reasons=tuple(notes))
        return self._search(q, notes)

    def _identified(self, q: Query) -> list[tuple[str, CatalogRecord]]:
        found = []
        if q.doi and (rec := self.index.by_doi(q.doi)):
            found.append(("doi", rec))
        for key, value in self._alt_keys(q):
            if (rec := self.index.by_alt_id(value)) and all(r.doi != rec.doi for _, r in found):
                found.append((key, rec))
        return found

    def _alt_keys(self, q: Query) -> list[tuple[str, str]]:
        keys = []
        if q.pmid:
            keys.append(("pmid", f"pmid:{q.pmid}"))
        if q.pmcid:
            keys.append(("pmcid", f"pmcid:{q.pmcid.lower()}"))
        if q.arxiv:
            keys.append(("arxiv", f"arxiv:{_ARXIV_VERSION.sub('', q.arxiv).lower()}"))
        return keys

    def _unknown_ids(self, q: Query) -> list[str]:
        unknown = []
        if q.doi and self.index.by_doi(q.doi) is None:
            unknown.append("doi")
        for key, value in self._alt_keys(q):
            if self.index.by_alt_id(value) is None and not (
                    key == "arxiv" and self.index.by_doi(ARXIV_DOI_PREFIX + value[6:])):
                unknown.append(key)
        return unknown

    def _candidates(self, q: Query, *, wide: bool) -> list[CatalogRecord]:
        """The title's candidates and the locator's; ``wide``: the reference
        string's too, asked only when those found no match (a mis-parsed string)."""
        found: dict[str, CatalogRecord] = {}
        title_words = content_tokens(q.title) if q.title else []
        if not wide:
            if title_words:
                for rec in self.index.by_words(title_words, CANDIDATES):
                    found.setdefault(rec.doi, rec)
            for works in self.index.by_locators(_locators(q), LOCATOR_CANDIDATES):
                for rec in works:
                    if _plausible(q, rec):
                        found.setdefault(rec.doi, rec)
        if wide and q.raw:
            raw_words = _words(q.raw)
            if raw_words and set(raw_words) != set(title_words):
                for rec in self.index.by_words(raw_words, CANDIDATES):
                    found.setdefault(rec.doi, rec)
            # a reference without a title ("J. Am. Chem. Soc. 2001, 123, 456"):
            # its numbers, two by two, as volume and first page
            for works in self.index.by_locators(_number_pairs(q.raw), LOCATOR_CANDIDATES):
                for rec in works:
                    if _plausible(q, rec):
                        found.setdefault(rec.doi, rec)
        if wide and _asks_names(q):
            # no title to go by (or a wrong one): the first authors' names
            for rec in self.index.by_names([surname_last(n) for n in q.surnames[:3]],
                                           CANDIDATES):
                found.setdefault(rec.doi, rec)
        return list(found.values())

    def _search(self, q: Query, notes: list[str]) -> MatchResult:
        scored = [compare(q, rec) for rec in self._candidates(q, wide=False)]
        if (q.raw or _asks_names(q)) and not any(
                e.points >= STRONG and not e.conflict for e in scored):
            seen = {e.record.doi for e in scored}
            scored += [compare(q, rec) for rec in self._candidates(q, wide=True)
                       if rec.doi not in seen]
        scored.sort(key=lambda e: e.points, reverse=True)
        if not scored:
            return MatchResult(MatchStatus.NO_MATCH, id=q.id, reasons=tuple(notes))
        best = scored[0]
        runner = next((e for e in scored[1:] if e.record.doi != best.record.doi), None)
        reasons = (*notes, *best.reasons)
        score = score_of(best.points)
        if best.points >= STRONG and not best.conflict and _corroborated(best):
            if runner is not None and not runner.conflict and not _other_venue(best, runner) \
                    and runner.points >= STRONG - MARGIN and best.points - runner.points < MARGIN:
                return MatchResult(
                    MatchStatus.AMBIGUOUS, score=score, reasons=reasons,
                    candidate=best.record.doi, id=q.id,
                    runner_up=RunnerUp(runner.record.doi, score_of(runner.points),
                                       runner.reasons))
            status = MatchStatus.EXACT if _exact(best) else MatchStatus.STRONG
            return MatchResult(status, doi=best.record.doi, score=score, reasons=reasons,
                               candidate=best.record.doi, id=q.id)
        if _other_version(best):
            return MatchResult(MatchStatus.OTHER_VERSION, score=score, reasons=reasons,
                               candidate=best.record.doi, id=q.id)
        status = MatchStatus.WEAK if best.points >= WEAK and not best.conflict \
            else MatchStatus.NO_MATCH
        return MatchResult(status, score=score, reasons=reasons,
                           candidate=best.record.doi if status is MatchStatus.WEAK else None,
                           id=q.id)


def _other_version(ev: Evidence) -> bool:
    """The title agrees, and the only conflict is another venue a year apart:
    the record is another version of the input's work, not another work."""
    return "version:differs" in ev.reasons and "title:differs" not in ev.reasons \
        and any(r.startswith(("title:same", "title:similar")) for r in ev.reasons) \
        and "year:differs" not in ev.reasons


def _other_venue(best: Evidence, runner: Evidence) -> bool:
    """The input names the best's venue, and the runner-up is a year apart in
    a venue of its own that the input does not name: another version (the
    journal article of a conference paper, a year on), as ``compare`` says of a
    record a year apart whose venue differs from a parsed one. The venue printed
    in a reference string is often not parsed ("… 2015 Asia-Pacific Microwave
    Conference (APMC)."): only the best candidate's agreement shows it is there."""
    if "year:near" not in runner.reasons or not runner.record.journals \
            or any(r.startswith("journal:") for r in runner.reasons):
        return False
    if not any(r in ("journal:same", "journal:in-string") for r in best.reasons):
        return False
    return not any(containers_agree(a, b)
                   for a in best.record.journals for b in runner.record.journals)


def _asks_names(q: Query) -> bool:
    """Whether the works of the input's first authors are candidates: two or
    more names, or one with a first page and a year (a chapter cited by its
    author, book and pages: one common name alone would be thousands of works,
    but the page and year leave at most one of them standing)."""
    return len(q.surnames) >= 2 or bool(q.surnames and q.page and q.year)


def _plausible(q: Query, rec: CatalogRecord) -> bool:
    """A work at the input's volume and page worth comparing: its journal or its
    first author is the input's (a common volume and page, "1" and "12", holds
    hundreds of works in a large catalog; comparing them all is the cost)."""
    # the journal as parsed, or the title when the parse took the journal for
    # one; OCR-damaged names too ("Stndies in Highcr Education")
    names = [n for n in (q.journal, q.title) if n]
    if any(containers_agree(n, j) for n in names for j in rec.journals):
        return True
    first = surname_last(rec.surnames[0]) if rec.surnames else ""
    if first and q.surnames and surname_last(q.surnames[0]) == first:
        return True
    if q.raw:
        if first and f" {first} " in f" {q.raw} ":
            return True
        return any(container_in_string(j, q.raw) for j in rec.journals)
    return False


_NUMBER = re.compile(r"^[a-z]{0,2}\d+[a-z]?$")


def _locators(q: Query) -> list[tuple[str, str]]:
    """The input's volume and first page, and its year and first page (a work
    without a volume is indexed by its year); with no page, its year and the
    number parsed as its volume (a chapter cited as "Protein Reviews 107 (2017)":
    book, first page, year)."""
    if not q.page:
        return [(year_locator(q.year), q.volume)] if q.year and q.volume else []
    pairs = [(q.volume, q.page)] if q.volume else []
    if q.year:
        pairs.append((year_locator(q.year), q.page))
    return pairs


#: a number of a reference string that may be its year
_YEAR = re.compile(r"^(1[89]|20)\d\d[a-z]?$")


def _number_pairs(raw: str) -> list[tuple[str, str]]:
    """(volume, page) guesses from a reference string's numbers: each number
    with the next and the one after (a year or an issue may sit between); a
    number that may be the year, with the next three, as (year, page)."""
    numbers = [w for w in raw.split() if _NUMBER.match(w)][:8]
    by_volume: list[tuple[str, str]] = []
    by_year: list[tuple[str, str]] = []
    for i, a in enumerate(numbers):
        if a.isdigit():
            by_volume += [(a, b) for b in numbers[i + 1:i + 3] if b != a]
        if _YEAR.match(a):
            by_year += [(year_locator(a[:4]), b) for b in numbers[i + 1:i + 4] if b != a]
    return by_volume + by_year


#: fields that corroborate a title: who wrote it, where it appeared
_CORROBORATING = ("first-author:", "authors:", "journal:same", "journal:in-string",
                  "volume:", "page:same", "page:in-string", "locator:")
#: a title this long identifies a work with its year alone
LONG_TITLE_WORDS = 6


def _corroborated(ev: Evidence) -> bool:
    """More than a title and a year agree, or the title is long: "Academic
    Health Centers" (2004) names many works."""
    if any(r.startswith(_CORROBORATING) and not r.endswith(":differs") for r in ev.reasons):
        return True
    return ev.title_same and len(content_tokens(ev.record.titles[0])) >= LONG_TITLE_WORDS


def _exact(ev: Evidence) -> bool:
    """Everything both sides have agrees: the title, and at least two other fields."""
    if not ev.title_same or ev.conflict:
        return False
    if any(r.endswith((":differs", ":similar")) or r.startswith(("record:", "query:"))
           for r in ev.reasons):
        return False
    return ev.agreeing() >= 2


def _needs_parse(b: Any) -> bool:
    return (isinstance(b, dict) and isinstance(b.get("unstructured"), str)
            and not b.get("title") and not b.get("authors") and not b.get("journal"))
