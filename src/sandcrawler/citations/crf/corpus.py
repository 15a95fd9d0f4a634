"""Reading GROBID's annotated references (its ``citation`` training data).

Each ``<bibl>`` becomes a :class:`LabelledRef`: the reference text with whitespace
collapsed, and one label per character, so that training tokenizes the very
string the parser will later see and tokens take the label of their first
character.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from sandcrawler.citations.crf.labels import OUTSIDE, label_for
from sandcrawler.citations.crf.tokens import tokenize
from sandcrawler.core.errors import ConfigError

_SPACE = re.compile(r"\s")


@dataclass(frozen=True, slots=True)
class LabelledRef:
    text: str
    char_labels: tuple[str, ...]
    source: str  # file name, for folds and messages

    def token_labels(self) -> list[str]:
        return [self.char_labels[t.start] for t in tokenize(self.text)]

    def spans(self) -> list[tuple[str, str]]:
        """(label, text) of each maximal run of one label, outside text left out."""
        out: list[tuple[str, str]] = []
        run_label, run_start = None, 0
        for i, label in enumerate((*self.char_labels, None)):
            if label != run_label:
                if run_label not in (None, OUTSIDE):
                    piece = self.text[run_start:i].strip()
                    if piece:
                        out.append((run_label, piece))
                run_label, run_start = label, i
        return out


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _walk(elem: ET.Element, label: str, out: list[tuple[str, str]]) -> None:
    """Append (text, label) pieces in document order; an annotated element labels
    all the text inside it, including nested markup."""
    if elem.text:
        out.append((elem.text, label))
    for child in elem:
        child_label = label
        if label == OUTSIDE:
            child_label = label_for(_local(child.tag), child.attrib) or OUTSIDE
        if _local(child.tag) == "lb":
            out.append((" ", label))
        else:
            _walk(child, child_label, out)
        if child.tail:
            out.append((child.tail, label))


def bibl_to_ref(bibl: ET.Element, source: str) -> LabelledRef | None:
    pieces: list[tuple[str, str]] = []
    _walk(bibl, OUTSIDE, pieces)
    chars: list[str] = []
    labels: list[str] = []
    pending_space = False
    for text, label in pieces:
        for ch in text:
            if _SPACE.match(ch):
                pending_space = bool(chars)
                continue
            if pending_space:
                # a space between two fields belongs to neither
                chars.append(" ")
                labels.append(label if labels and labels[-1] == label else OUTSIDE)
                pending_space = False
            chars.append(ch)
            labels.append(label)
    if not chars:
        return None
    return LabelledRef("".join(chars), tuple(labels), source)


def read_file(path: Path) -> list[LabelledRef]:
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        raise ConfigError(f"{path}: not well-formed XML: {e}") from e
    refs = []
    for elem in root.iter():
        if _local(elem.tag) == "bibl":
            ref = bibl_to_ref(elem, path.name)
            if ref is not None:
                refs.append(ref)
    return refs


def corpus_files(directory: Path) -> list[Path]:
    if not directory.is_dir():
        raise ConfigError(f"corpus directory {directory} does not exist")
    files = sorted(p for p in directory.iterdir() if p.suffix == ".xml" and p.is_file())
    if not files:
        raise ConfigError(f"no .xml files in corpus directory {directory}")
    return files


def read_corpus(
    directory: Path, exclude: Iterable[LabelledRef] = ()
) -> list[LabelledRef]:
    """All references of a corpus directory in a stable order (sorted file names,
    document order), without those whose text is in ``exclude`` (the evaluation
    set: the corpus holds older copies of it)."""
    held_out = {_key(r.text) for r in exclude}
    refs: list[LabelledRef] = []
    for path in corpus_files(directory):
        refs.extend(r for r in read_file(path) if _key(r.text) not in held_out)
    return refs


def training_references(
    corpus: Path, exclude: Path | None = None, *, hold_out: bool = True
) -> tuple[list[LabelledRef], int]:
    """(references to train on, how many were held out).

    Held out: the references of ``exclude``, by default the ``evaluation``
    directory beside ``corpus`` (as GROBID lays out its data), so that a model
    is never trained on what it will be evaluated on."""
    if exclude is None and hold_out:
        sibling = corpus.parent / "evaluation"
        if sibling.is_dir() and sibling.resolve() != corpus.resolve():
            exclude = sibling
    held_out = read_corpus(exclude) if exclude is not None and hold_out else []
    return read_corpus(corpus, exclude=held_out), len(held_out)


def _key(text: str) -> str:
    return re.sub(r"\W+", "", text).lower()


def iter_folds(
    refs: list[LabelledRef], folds: int
) -> Iterator[tuple[list[LabelledRef], list[LabelledRef]]]:
    """(train, test) pairs: reference i is tested in fold i mod k, so every fold
    mixes all the corpus's styles."""
    for k in range(folds):
        yield (
            [r for i, r in enumerate(refs) if i % folds != k],
            [r for i, r in enumerate(refs) if i % folds == k],
        )
