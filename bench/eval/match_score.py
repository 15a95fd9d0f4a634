"""Scoring ``sandcrawler match biblio`` output against the gold of an evaluation set
(bench/build/match_data.py): precision, recall, per-status and per-case counts, and every
query the matcher got wrong, with what it said.

matched   status ``exact`` or ``strong`` (issue 25's CLI contract)
correct   a matched query whose DOI is the expected one; an unmatched query is right
          when nothing was expected
precision correct matched / all matched
recall    correct matched / queries with an expected DOI
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

MATCHED = frozenset({"exact", "strong"})


@dataclass
class StatusCount:
    count: int = 0
    correct: int = 0  # matched to the expected DOI (matched statuses only)
    expected_none: int = 0  # queries of this status whose right answer was "no match"

    @property
    def precision(self) -> float | None:
        return self.correct / self.count if self.count else None


@dataclass
class CaseCount:
    n: int = 0
    right: int = 0  # the expected DOI matched, or nothing matched when none was expected
    statuses: Counter[str] = field(default_factory=Counter)


@dataclass
class Miss:
    """A query the matcher got wrong: a wrong match, a match where none was right, or
    the expected work not matched."""

    id: str
    kind: str  # wrong-doi | false-match | missed
    case: str
    expected: str | None
    got: str | None
    status: str
    score: float | None
    reasons: Any
    query: dict[str, Any]


@dataclass
class Score:
    queries: int = 0
    with_expected: int = 0
    matched: int = 0
    correct: int = 0
    statuses: dict[str, StatusCount] = field(default_factory=dict)
    cases: dict[str, CaseCount] = field(default_factory=dict)
    misses: list[Miss] = field(default_factory=list)
    missing_output: int = 0

    @property
    def precision(self) -> float | None:
        return self.correct / self.matched if self.matched else None

    @property
    def recall(self) -> float | None:
        return self.correct / self.with_expected if self.with_expected else None

    @property
    def f1(self) -> float | None:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p and r else None

    def to_json(self, max_misses: int | None = None) -> dict[str, Any]:
        return {
            "queries": self.queries, "with_expected": self.with_expected,
            "matched": self.matched, "correct": self.correct, "precision": self.precision,
            "recall": self.recall, "f1": self.f1, "missing_output": self.missing_output,
            "statuses": {s: {**asdict(c), "precision": c.precision}
                         for s, c in sorted(self.statuses.items())},
            "cases": {k: {"n": c.n, "right": c.right, "statuses": dict(c.statuses)}
                      for k, c in sorted(self.cases.items())},
            "misses": [asdict(m) for m in self.misses[:max_misses]],
        }


def case_group(case: str, depth: int = 2) -> str:
    """"notice:erratum:query-article-ref" -> "notice:erratum" (a table row)."""
    return ":".join(case.split(":")[:depth])


def norm_doi(doi: Any) -> str | None:
    return doi.strip().lower() if isinstance(doi, str) and doi.strip() else None


def score(queries: Sequence[dict[str, Any]], results: Sequence[dict[str, Any]],
          case_depth: int = 3) -> Score:
    """Queries with their gold fields, and the matcher's output lines, joined by ``id``."""
    by_id = {str(r.get("id")): r for r in results}
    s = Score()
    for q in queries:
        s.queries += 1
        expected = norm_doi(q.get("expected_doi"))
        case = case_group(q.get("case") or "", case_depth)
        r = by_id.get(str(q["id"]))
        if r is None:
            s.missing_output += 1
            r = {"status": "(no output)"}
        status = str(r.get("status"))
        got = norm_doi(r.get("doi"))
        matched = status in MATCHED
        st = s.statuses.setdefault(status, StatusCount())
        st.count += 1
        cc = s.cases.setdefault(case, CaseCount())
        cc.n += 1
        cc.statuses[status] += 1
        if expected is not None:
            s.with_expected += 1
        else:
            st.expected_none += 1
        kind = None
        if matched:
            s.matched += 1
            if got is not None and got == expected:
                s.correct += 1
                st.correct += 1
                cc.right += 1
            else:
                kind = "false-match" if expected is None else "wrong-doi"
        elif expected is None:
            cc.right += 1
        else:
            kind = "missed"
        if kind:
            shown = {k: v for k, v in q.items() if k not in ("expected_doi", "noise") and v}
            s.misses.append(Miss(id=str(q["id"]), kind=kind, case=q.get("case") or "",
                                 expected=expected, got=got, status=status,
                                 score=r.get("score"), reasons=r.get("reasons"),
                                 query=shown))
    return s


def table(name: str, s: Score) -> str:
    """A plain-text summary: the headline figures, statuses, then cases."""

    def pct(x: float | None) -> str:
        return f"{x:7.2%}" if x is not None else "    n/a"

    lines = [f"-- {name}: {s.queries} queries ({s.with_expected} with an expected DOI), "
             f"{s.matched} matched: precision {pct(s.precision)}  recall {pct(s.recall)}  "
             f"F1 {pct(s.f1)}"]
    if s.missing_output:
        lines.append(f"   {s.missing_output} queries had no output line")
    lines.append(f"   {'status':<14}{'count':>7}{'correct':>9}{'precision':>11}"
                 f"{'no answer expected':>20}")
    for status, c in sorted(s.statuses.items(), key=lambda kv: -kv[1].count):
        prec = pct(c.precision) if status in MATCHED else "      -"
        lines.append(f"   {status:<14}{c.count:>7}{c.correct:>9}{prec:>11}{c.expected_none:>20}")
    misses = Counter(m.kind for m in s.misses)
    lines.append("   misses: " + (", ".join(f"{k} {v}" for k, v in sorted(misses.items()))
                                  or "none"))
    if len(s.cases) > 1:
        lines.append(f"   {'case':<58}{'n':>5}{'right':>7}  statuses")
        for case, cc in sorted(s.cases.items()):
            sts = " ".join(f"{k}:{v}" for k, v in sorted(cc.statuses.items()))
            lines.append(f"   {case[:57]:<58}{cc.n:>5}{cc.right:>7}  {sts}")
    return "\n".join(lines)


def group_cases(s: Score, depth: int) -> dict[str, tuple[int, int]]:
    out: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for case, c in s.cases.items():
        row = out[case_group(case, depth)]
        row[0] += c.n
        row[1] += c.right
    return {k: (v[0], v[1]) for k, v in out.items()}
