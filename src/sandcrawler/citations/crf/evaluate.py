"""Field-level evaluation of the citation parser, the way GROBID evaluates its own.

Gold biblios come from the annotated spans through the same span-to-biblio code
as the predictions, so the scores measure the labelling; the conversion itself is
covered by unit tests. Per field: a prediction equal to the gold value is a true
positive; a wrong value counts as a false positive and a false negative; a
missing one is a false negative; a value where gold has none is a false
positive. Strict compares the values with whitespace collapsed; soft also
ignores case, punctuation and whitespace.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

from grobid_tei_xml.types import GrobidBiblio

from sandcrawler.citations.crf.biblio import build_biblio
from sandcrawler.citations.crf.model import CrfModel, train
from sandcrawler.tagging.corpus import LabelledText
from sandcrawler.tagging.folds import fold_results, folds_of
from sandcrawler.tagging.scoring import Counts
from sandcrawler.tagging.tokens import tokenize

FIELDS = (
    "authors",
    "first_author",
    "title",
    "journal",
    "book_title",
    "date",
    "volume",
    "issue",
    "first_page",
    "publisher",
    "doi",
)
_SOFT = re.compile(r"[\W_]+")


def field_values(b: GrobidBiblio) -> dict[str, str | None]:
    return {
        "authors": "; ".join(a.full_name or "" for a in b.authors) or None,
        "first_author": b.authors[0].surname if b.authors else None,
        "title": b.title,
        "journal": b.journal,
        "book_title": b.book_title,
        "date": b.date,
        "volume": b.volume,
        "issue": b.issue,
        "first_page": b.first_page,
        "publisher": b.publisher,
        "doi": b.doi,
    }


def strict(value: str) -> str:
    return " ".join(value.split())


def soft(value: str) -> str:
    return _SOFT.sub("", value).lower()


@dataclass
class Report:
    references: int = 0
    strict: dict[str, Counts] = field(default_factory=lambda: {f: Counts() for f in FIELDS})
    soft: dict[str, Counts] = field(default_factory=lambda: {f: Counts() for f in FIELDS})

    def add_pair(self, gold: GrobidBiblio, predicted: GrobidBiblio) -> None:
        self.references += 1
        g, p = field_values(gold), field_values(predicted)
        for name in FIELDS:
            gold_value, predicted_value = g[name], p[name]
            for norm, table in ((strict, self.strict), (soft, self.soft)):
                gv = norm(gold_value) if gold_value else ""
                pv = norm(predicted_value) if predicted_value else ""
                c = table[name]
                if gv and pv == gv:
                    c.tp += 1
                    continue
                if gv:
                    c.fn += 1
                if pv:
                    c.fp += 1

    def merge(self, other: Report) -> None:
        self.references += other.references
        for name in FIELDS:
            self.strict[name].add(other.strict[name])
            self.soft[name].add(other.soft[name])

    @staticmethod
    def micro(table: dict[str, Counts]) -> Counts:
        total = Counts()
        for c in table.values():
            total.add(c)
        return total

    def to_dict(self) -> dict[str, Any]:
        def row(c: Counts) -> dict[str, Any]:
            return {"precision": round(c.precision, 4), "recall": round(c.recall, 4),
                    "f1": round(c.f1, 4), "support": c.support}

        return {
            "references": self.references,
            "fields": {
                name: {"strict": row(self.strict[name]), "soft": row(self.soft[name])}
                for name in FIELDS
            },
            "micro": {"strict": row(self.micro(self.strict)), "soft": row(self.micro(self.soft))},
        }

    def table(self) -> str:
        lines = [
            f"{'field':<14}{'support':>8}  {'strict P':>8} {'R':>6} {'F1':>6}"
            f"  {'soft P':>8} {'R':>6} {'F1':>6}",
        ]

        def fmt(name: str, s: Counts, o: Counts) -> str:
            return (f"{name:<14}{s.support:>8}  {s.precision:>8.4f} {s.recall:>6.4f} {s.f1:>6.4f}"
                    f"  {o.precision:>8.4f} {o.recall:>6.4f} {o.f1:>6.4f}")

        for name in FIELDS:
            lines.append(fmt(name, self.strict[name], self.soft[name]))
        lines.append(fmt("micro average", self.micro(self.strict), self.micro(self.soft)))
        return "\n".join(lines)


def gold_biblio(ref: LabelledText) -> GrobidBiblio:
    return build_biblio(ref.text, tokenize(ref.text), ref.plain_labels())


def evaluate(parse: Callable[[str], GrobidBiblio], refs: Iterable[LabelledText]) -> Report:
    report = Report()
    for ref in refs:
        report.add_pair(gold_biblio(ref), parse(ref.text))
    return report


def _run_fold(train_refs: Sequence[LabelledText], test_refs: Sequence[LabelledText],
              params: dict[str, Any] | None) -> Report:
    with TemporaryDirectory(prefix="sandcrawler-fold-") as tmp:
        path = Path(tmp) / "fold.crfmodel"
        train(list(train_refs), path, params)
        model = CrfModel.load(path)
        return evaluate(model.parse, test_refs)


def cross_validate(
    refs: list[LabelledText],
    folds: int,
    params: dict[str, Any] | None = None,
    jobs: int = 1,
    on_fold: Callable[[int, Report], None] | None = None,
) -> Report:
    """k-fold cross-validation: train on k-1 folds, test on the held-out one, and sum
    the counts over the folds (micro averages over every test reference)."""
    total = Report()
    runs = [(tr, te, params) for tr, te in folds_of(refs, folds)]
    for k, report in enumerate(fold_results(_run_fold, runs, jobs)):
        total.merge(report)
        if on_fold:
            on_fold(k, report)
    return total
