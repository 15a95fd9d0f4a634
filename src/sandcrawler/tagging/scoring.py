"""Field-level scores for a sequence labeller, counted the way GROBID's trainer
evaluates its models (docs/extraction.md): a field is a run of tokens with one
label, a new field starting where the label changes or where a token carries
GROBID's ``I-`` (beginning) mark. A predicted field is right when a gold field
has the same label, start and end; precision and recall are per label, and the
micro average sums the counts of every label except ``<other>`` and except
labels that the gold sequences never have (GROBID leaves those out of its
averages, false positives included).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

BEGIN = "I-"
OTHER = "<other>"


def plain(label: str) -> str:
    """The label without GROBID's beginning mark."""
    return label[len(BEGIN):] if label.startswith(BEGIN) else label


def fields(labels: Sequence[str]) -> list[tuple[str, int, int]]:
    """(label, start, end) of each field, end exclusive."""
    out: list[tuple[str, int, int]] = []
    start, current = 0, ""
    for i, label in enumerate(labels):
        name = plain(label)
        if i == 0 or name != current or label.startswith(BEGIN):
            if i:
                out.append((current, start, i))
            start, current = i, name
    if labels:
        out.append((current, start, len(labels)))
    return out


@dataclass
class Counts:
    """True positives, false positives and false negatives of one field or label."""

    tp: int = 0
    fp: int = 0
    fn: int = 0

    def add(self, other: Counts) -> None:
        self.tp += other.tp
        self.fp += other.fp
        self.fn += other.fn

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def support(self) -> int:
        return self.tp + self.fn


@dataclass
class FieldScores:
    """Counts per label, summed over every sequence scored (and over folds)."""

    sequences: int = 0
    labels: dict[str, Counts] = field(default_factory=dict)

    def add(self, gold: Sequence[str], predicted: Sequence[str]) -> None:
        if len(gold) != len(predicted):
            raise ValueError(f"{len(gold)} gold labels but {len(predicted)} predicted")
        self.sequences += 1
        want, got = set(fields(gold)), set(fields(predicted))
        for name, _, _ in want | got:
            self.labels.setdefault(name, Counts())
        for name, _, _ in want & got:
            self.labels[name].tp += 1
        for name, _, _ in want - got:
            self.labels[name].fn += 1
        for name, _, _ in got - want:
            self.labels[name].fp += 1

    def merge(self, other: FieldScores) -> None:
        self.sequences += other.sequences
        for name, counts in other.labels.items():
            self.labels.setdefault(name, Counts()).add(counts)

    def averaged(self, exclude: Iterable[str] = (OTHER,)) -> dict[str, Counts]:
        """The labels the averages are over: not excluded, and expected at least once."""
        skip = set(exclude)
        return {name: c for name, c in self.labels.items() if name not in skip and c.support}

    def micro(self, exclude: Iterable[str] = (OTHER,)) -> Counts:
        total = Counts()
        for counts in self.averaged(exclude).values():
            total.add(counts)
        return total

    def macro_f1(self, exclude: Iterable[str] = (OTHER,)) -> float:
        f1s = [c.f1 for c in self.averaged(exclude).values()]
        return sum(f1s) / len(f1s) if f1s else 0.0

    def table(self) -> str:
        lines = [f"{'label':<22}{'support':>8} {'precision':>10} {'recall':>8} {'F1':>8}"]
        for name in sorted(self.labels):
            c = self.labels[name]
            lines.append(f"{name:<22}{c.support:>8} {c.precision * 100:>10.2f} "
                         f"{c.recall * 100:>8.2f} {c.f1 * 100:>8.2f}")
        m = self.micro()
        lines.append(f"{'micro (no <other>)':<22}{m.support:>8} {m.precision * 100:>10.2f} "
                     f"{m.recall * 100:>8.2f} {m.f1 * 100:>8.2f}")
        lines.append(f"{'macro (no <other>)':<22}{'':>8} {'':>10} {'':>8} "
                     f"{self.macro_f1() * 100:>8.2f}")
        return "\n".join(lines)
